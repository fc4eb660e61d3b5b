import { maxRoleLength, maxRoles, maxRolesBytes } from "../users/roles.js";

/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), as a plain object. */
export type JsonSchema = Readonly<Record<string, unknown>>;

const text: JsonSchema = { type: "string" };
const flag: JsonSchema = { type: "boolean" };
const texts: JsonSchema = { type: "array", items: text };
const base64url: JsonSchema = { type: "string", pattern: "^[A-Za-z0-9_-]+={0,2}$" };
/** Epoch milliseconds. */
const instant: JsonSchema = { type: "integer", minimum: 0 };

/** An account's roles in a request body: what `checkRoles` accepts (AD-2), 42200 otherwise. */
export const roleNames: JsonSchema = {
  type: "array",
  items: { type: "string", minLength: 1, maxLength: maxRoleLength },
  description: `At most ${maxRoles} role names (a repeated one counts once) of 1 to ${maxRoleLength} characters, ${maxRolesBytes} bytes together as JSON in UTF-8 (AD-2), so that every access token fits in a request header`,
};

/** A string field a route refuses with 40001 when it is absent, null or empty, and with 40002 when it is not a string. */
export const requiredText: JsonSchema = { type: "string", minLength: 1 };

/**
 * A request body: an object whose `required` fields must be present. Fields a route does not
 * read are ignored, so the object stays open.
 *
 * @example
 * ```ts
 * requestObject({ refreshToken: requiredText }, ["refreshToken"]);
 * ```
 */
export function requestObject(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return required.length > 0 ? { type: "object", properties, required } : { type: "object", properties };
}

/**
 * The `fields` of a request body: the service's additional user fields by name (`user.fields` of
 * `createAuth`), each checked against its declaration; `who` says which of them this route takes.
 */
export function userFieldsBody(who: string): JsonSchema {
  return {
    type: "object",
    additionalProperties: true,
    description: `Additional user fields by name: ${who}. An undeclared name or a value of the wrong type is 40002; a field this route may not set, or a value out of its limits, 42200 (the message names the field).`,
  };
}

/**
 * An answer: an object with exactly these properties, each present unless named in `optional`.
 * Closed, so that a field the server starts to send without documenting it is drift the tests
 * see.
 *
 * @example
 * ```ts
 * answerObject({ renamed: { const: true } });
 * ```
 */
export function answerObject(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  const required = Object.keys(properties).filter((name) => !optional.includes(name));
  return { type: "object", properties, required, additionalProperties: false };
}

/** The names of the {@link componentSchemas}. */
export type ComponentName =
  | "Error"
  | "PublicUser"
  | "AdminUser"
  | "AdminUserDetails"
  | "UserPage"
  | "TokenSet"
  | "PasskeyInfo"
  | "CredentialRequestOptions"
  | "CredentialCreationOptions"
  | "AuthenticationResponse"
  | "RegistrationResponse"
  | "OAuthProvider"
  | "RoleMapping"
  | "GroupSearch"
  | "DirectoryPolicy"
  | "DirectoryPolicyInput"
  | "DirectoryCheck"
  | "DirectoryUserPreview"
  | "JwkSet"
  | "Organization"
  | "OrganizationRules"
  | "OrganizationMember"
  | "OrganizationInvitation"
  | "OrganizationDomain";

/** A reference to one of the {@link componentSchemas}. */
export function schemaRef(name: ComponentName): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** A list of one of the {@link componentSchemas}. */
export const listOf = (name: ComponentName): JsonSchema => ({ type: "array", items: schemaRef(name) });

/** The members of a token set, for answers that add to it. */
export const tokenSetProperties: Record<string, JsonSchema> = {
  accessToken: { type: "string", description: "A JWT (`typ: at+jwt`), sent as `Authorization: Bearer`" },
  refreshToken: {
    type: "string",
    description:
      "`<session id>.<generation>.<secret>`, to be kept as given; spent by its next use. Left out in cookie mode (`X-Portcullis-Token-Delivery: cookie`), where the HttpOnly refresh cookie carries it (CK-1)",
  },
  tokenType: { const: "Bearer" },
  expiresIn: { type: "integer", minimum: 1, description: "Seconds until the access token expires" },
  user: schemaRef("PublicUser"),
  deviceToken: {
    type: "string",
    description: "On a completed sign-in, not a refresh: this client's device token, sent back at its next login (RL-5)",
  },
  offerPasskey: {
    type: "boolean",
    description:
      "With passkeys on, on a completed sign-in: true when it was a password or email sign-in and the account has no passkey and has not declined the offer lately (`passkeys.offerAfterSignIn`, PL-13); the page may then offer to create one, if the platform has an authenticator",
  },
};

/** The members of {@link tokenSetProperties} an answer may leave out. */
export const optionalTokenSetProperties = ["deviceToken", "refreshToken", "offerPasskey"];

const returnPath: JsonSchema = { type: "string", description: "The path of this app given to `authorize` (`/` by default)" };

/**
 * The `data` of a re-authentication (STUP-2, ASVS 7.2.4): the token set of the new session that
 * replaced the re-authenticated one, as a sign-in answers it.
 */
export const reauthenticatedData: JsonSchema = schemaRef("TokenSet");

/** The `data` of a 40102 answer: the temporary token for `2fa/verify` or `2fa/recovery`. */
export const tempTokenData: JsonSchema = answerObject({ tempToken: text });

/** The `data` of a 40105 answer (STUP-4): the enrolment token for `2fa/enrolment/*` or `public-key/enrolment/*`. */
export const enrolmentTokenData: JsonSchema = answerObject({
  tempToken: { type: "string", description: "Enrols TOTP or a passkey, and nothing else; then the sign-in completes" },
});

/** The `data` of a sign-in completed by enrolling TOTP: the token set and the recovery codes, shown this once. */
export const totpEnrolledData: JsonSchema = answerObject(
  {
    ...tokenSetProperties,
    recoveryCodes: { type: "array", items: text, description: "Ten codes, shown this once" },
  },
  optionalTokenSetProperties,
);

/** The `data` of a sign-in completed by registering a passkey: the token set and the new passkey. */
export const passkeyEnrolledData: JsonSchema = answerObject(
  { ...tokenSetProperties, passkey: schemaRef("PasskeyInfo") },
  optionalTokenSetProperties,
);

/** The `data` of a successful OAuth callback: the token set and the return path. */
export const oauthSignInData: JsonSchema = answerObject({ ...tokenSetProperties, returnPath }, optionalTokenSetProperties);

/**
 * The `data` of an OAuth callback that re-authenticated the session that began it (STUP-5, ASVS
 * 7.2.4): the token set of the new session that replaced it, as `reauthenticate` answers, the
 * return path, and the flag.
 */
export const oauthReauthenticatedData: JsonSchema = answerObject(
  { ...tokenSetProperties, returnPath, reauthenticated: { const: true } },
  optionalTokenSetProperties,
);

/** The `data` of an OAuth callback that asks for the second factor. */
export const oauthSecondFactorData: JsonSchema = answerObject({ tempToken: text, returnPath });

/** The `data` of a begin step of a passkey ceremony: the id for the finish step's header, and the options. */
export const ceremonyStartData = (options: "CredentialRequestOptions" | "CredentialCreationOptions"): JsonSchema =>
  answerObject({
    ceremonyId: { type: "string", description: "Sent back in `X-WebAuthn-Ceremony`" },
    options: schemaRef(options),
  });

const credentialDescriptor = answerObject({ id: base64url, type: { const: "public-key" }, transports: texts }, ["transports"]);

/** The fields of a directory policy, every one optional: what a save or a test sends. */
const directoryPolicyFields: Record<string, JsonSchema> = {
  enabled: flag,
  serverUrl: { type: "string", description: "`ldap://host[:port]` or `ldaps://host[:port]`" },
  startTls: flag,
  allowPlaintext: { type: "boolean", description: "UNSAFE, development only: `ldap://` without StartTLS, on a loopback host" },
  allowPlaintextOnNetwork: { type: "boolean", description: "UNSAFE: lets `allowPlaintext` reach a host that is not loopback" },
  caBundle: { type: ["string", "null"], description: "PEM certificates the server's certificate must chain to" },
  bindDn: { type: ["string", "null"] },
  connectTimeoutSecs: { type: "integer", minimum: 1 },
  searchTimeoutSecs: { type: "integer", minimum: 1 },
  userBaseDn: text,
  userFilter: { type: "string", description: "Holds exactly one `{{username}}`" },
  stableIdAttribute: text,
  usernameAttribute: text,
  displayAttribute: text,
  emailAttribute: text,
  groupAttribute: text,
  groupSearch: { oneOf: [schemaRef("GroupSearch"), { type: "null" }] },
  mappings: listOf("RoleMapping"),
  fallbackRole: { type: ["string", "null"], description: "null denies a user in no mapped group" },
  refreshMapping: flag,
  loginOrder: { enum: ["explicit", "directory-first"] },
};

/** An organization's rules (OR-9, OR-10). */
const organizationRules: JsonSchema = answerObject({
  requireSecondFactor: { type: "boolean", description: "Only a session that proved a second factor makes it active (OR-9)" },
  signInMethods: {
    type: ["array", "null"],
    items: { enum: ["password", "directory", "passkey", "provider", "email"] },
    description: "The ways of signing in a session may have used to make it active, or null for every way (OR-10)",
  },
});

/** The fields of an organization as its members see it: the `Organization` schema's, and those of the signed-in user's list. */
export const organizationProperties: Record<string, JsonSchema> = {
  id: text,
  slug: { type: "string", description: "2 to 48 lower-case letters, digits and single hyphens" },
  name: text,
  rules: schemaRef("OrganizationRules"),
  createdAt: instant,
  roles: { ...texts, description: "The caller's roles in it" },
};

/**
 * The schemas the document keeps under `components.schemas`, which the route docs name with
 * {@link schemaRef}: the envelopes, the token set and the shapes several routes share.
 */
export const componentSchemas: Record<ComponentName, JsonSchema> = {
  Error: {
    description:
      "A refusal: the business code, a fixed message, a `requestId` on 50000 and 50300, and on 40104 (from `requireAuth` on your routes, or switching to an organization) `data.required`.",
    ...answerObject(
      {
        code: { type: "integer" },
        message: text,
        requestId: text,
        data: answerObject(
          {
            required: answerObject(
              {
                maxAge: {
                  type: "integer",
                  minimum: 1,
                  description: "The route's `maxAge` in seconds, when the sign-in is older",
                },
                amr: { ...texts, description: "The `amr` values (RFC 8176) the session lacks" },
              },
              ["maxAge", "amr"],
            ),
            enrolmentRequired: {
              type: "boolean",
              description:
                "On 40104 from `POST /auth/orgs/active` (OR-9): true when the user has no second factor yet, so enrols one first",
            },
            signInMethods: {
              ...texts,
              description: "On 40300 from `POST /auth/orgs/active` (OR-10): the ways of signing in the organization allows",
            },
          },
          ["required", "enrolmentRequired", "signInMethods"],
        ),
      },
      ["requestId", "data"],
    ),
  },
  PublicUser: {
    ...answerObject({
      id: text,
      username: text,
      roles: texts,
      totpEnabled: flag,
      email: { type: ["string", "null"], description: "The account's email address, or null" },
      emailVerified: { type: "boolean", description: "Whether the address is proven; a verified one is on no other account" },
      createdAt: instant,
    }),
    description:
      "The user: these fields always, the service's additional user fields (those not declared `inMe: false`), and any its `publicUser` hook adds.",
    additionalProperties: true,
  },
  AdminUser: {
    description: "A user as the admin routes show it: the user object and whether the account is disabled.",
    type: "object",
    allOf: [schemaRef("PublicUser")],
    required: ["disabled"],
    properties: { disabled: flag },
  },
  AdminUserDetails: {
    description: "One user in detail: what signs the user in.",
    type: "object",
    allOf: [schemaRef("AdminUser")],
    required: ["sessions", "passkeys", "identities"],
    properties: {
      sessions: { type: "integer", minimum: 0, description: "Live sessions, counted up to 1000" },
      passkeys: { type: "integer", minimum: 0 },
      identities: { ...texts, description: "The providers linked to the account" },
    },
  },
  UserPage: answerObject({
    users: listOf("AdminUser"),
    nextCursor: { type: ["string", "null"], description: "The `cursor` of the next page; null on the last page" },
  }),
  TokenSet: {
    description:
      "The answer of every step that completes a sign-in, of a refresh, and of a re-authentication (the tokens of the new session that replaced the re-authenticated one).",
    ...answerObject(tokenSetProperties, optionalTokenSetProperties),
  },
  PasskeyInfo: answerObject({
    id: { ...base64url, description: "The credential id" },
    label: text,
    transports: texts,
    createdAt: instant,
    lastUsedAt: { type: ["integer", "null"], minimum: 0 },
    backupEligible: flag,
    backupState: flag,
  }),
  CredentialRequestOptions: {
    description: "`PublicKeyCredentialRequestOptionsJSON`, for `startAuthentication` of `@simplewebauthn/browser`.",
    type: "object",
    properties: {
      challenge: base64url,
      rpId: text,
      timeout: { type: "integer" },
      userVerification: { enum: ["required", "preferred", "discouraged"] },
      allowCredentials: { type: "array", items: credentialDescriptor },
    },
    required: ["challenge"],
  },
  CredentialCreationOptions: {
    description: "`PublicKeyCredentialCreationOptionsJSON`, for `startRegistration` of `@simplewebauthn/browser`.",
    type: "object",
    properties: {
      challenge: base64url,
      rp: { type: "object", properties: { id: text, name: text }, required: ["name"] },
      user: { type: "object", properties: { id: base64url, name: text, displayName: text }, required: ["id", "name"] },
      pubKeyCredParams: { type: "array", items: { type: "object", properties: { type: text, alg: { type: "integer" } } } },
      timeout: { type: "integer" },
      excludeCredentials: { type: "array", items: credentialDescriptor },
      authenticatorSelection: { type: "object" },
      attestation: text,
    },
    required: ["challenge", "rp", "user", "pubKeyCredParams"],
  },
  AuthenticationResponse: {
    description: "`AuthenticationResponseJSON`, as `startAuthentication` returns it.",
    ...requestObject(
      {
        id: base64url,
        rawId: base64url,
        type: { const: "public-key" },
        response: requestObject(
          {
            clientDataJSON: base64url,
            authenticatorData: base64url,
            signature: base64url,
            userHandle: { type: ["string", "null"] },
          },
          ["clientDataJSON", "authenticatorData", "signature"],
        ),
        clientExtensionResults: { type: "object" },
        authenticatorAttachment: text,
      },
      ["id", "rawId", "type", "response"],
    ),
  },
  RegistrationResponse: {
    description: "`RegistrationResponseJSON`, as `startRegistration` returns it.",
    ...requestObject(
      {
        id: base64url,
        rawId: base64url,
        type: { const: "public-key" },
        response: requestObject({ clientDataJSON: base64url, attestationObject: base64url, transports: texts }, [
          "clientDataJSON",
          "attestationObject",
        ]),
        clientExtensionResults: { type: "object" },
        authenticatorAttachment: text,
      },
      ["id", "rawId", "type", "response"],
    ),
  },
  OAuthProvider: answerObject({ name: text, displayName: text }),
  RoleMapping: answerObject({ group: text, role: text, priority: { type: "integer" } }),
  GroupSearch: answerObject({ baseDn: text, filter: text }),
  DirectoryPolicy: {
    description: "The saved policy: never the bind password, only whether one is stored.",
    ...answerObject({ ...directoryPolicyFields, credentialConfigured: flag }),
  },
  DirectoryPolicyInput: {
    description: "Policy fields to save or to try; those left out keep their saved values.",
    ...requestObject({ ...directoryPolicyFields, bindPassword: { type: "string", writeOnly: true } }),
  },
  DirectoryCheck: answerObject(
    {
      ok: flag,
      category: { enum: ["configuration", "connection", "tls", "timeout", "bind", "search"] },
      message: text,
    },
    ["category", "message"],
  ),
  DirectoryUserPreview: answerObject({
    username: text,
    displayName: { type: ["string", "null"] },
    email: { type: ["string", "null"] },
    groups: texts,
    matchedRule: { oneOf: [schemaRef("RoleMapping"), { type: "null" }] },
    roles: texts,
  }),
  JwkSet: {
    description: "An RFC 7517 JWK Set of public keys.",
    type: "object",
    properties: { keys: { type: "array", items: { type: "object", properties: { kty: text }, required: ["kty"] } } },
    required: ["keys"],
  },
  Organization: {
    description: "An organization as its members see it, with the caller's roles in it. Times are epoch milliseconds.",
    ...answerObject(organizationProperties),
  },
  OrganizationRules: organizationRules,
  OrganizationMember: {
    description: "A member of an organization. Times are epoch milliseconds.",
    ...answerObject({
      userId: text,
      username: text,
      email: { type: ["string", "null"], description: "The member's address when verified, else null" },
      roles: texts,
      joinedAt: instant,
    }),
  },
  OrganizationInvitation: {
    description: "A pending invitation, never its secret. Times are epoch milliseconds.",
    ...answerObject({
      id: text,
      email: { type: "string", description: "The invited address, case-folded" },
      roles: texts,
      invitedBy: { type: "string", description: "The id of the member who sent it" },
      createdAt: instant,
      expiresAt: instant,
    }),
  },
  OrganizationDomain: {
    description: "A domain an organization claimed, and the TXT record that proves it (OR-11). Times are epoch milliseconds.",
    ...answerObject({
      domain: { type: "string", description: "Lower case, in its IDNA (punycode) form" },
      recordName: { type: "string", description: "Where the TXT record goes: `_portcullis-verification.<domain>`" },
      recordValue: { type: "string", description: "What the TXT record must hold" },
      createdAt: instant,
      verifiedAt: { type: ["integer", "null"], minimum: 0 },
    }),
  },
};
