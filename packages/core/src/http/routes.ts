import type { Auth } from "../auth.js";
import { ErrorCode } from "../errors/codes.js";
import { getDirectoryPolicy, previewDirectoryUser, saveDirectoryPolicy, testDirectoryPolicy } from "../flows/directory-policy.js";
import { type LoginResult, login } from "../flows/login.js";
import { logout } from "../flows/logout.js";
import { getPublicUser } from "../flows/manage-users.js";
import { oauthAuthorize, oauthCallback, oauthProviders } from "../flows/oauth-sign-in.js";
import { listPasskeys, renamePasskey, revokePasskey } from "../flows/passkey-management.js";
import type { ReauthenticationProof } from "../flows/reauthenticate.js";
import { refresh } from "../flows/refresh.js";
import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "../flows/totp-enrolment.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import type { AccessContext } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnBegin, webauthnFinish } from "../flows/webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import { bindingCookie, bindingFrom } from "../oauth/browser-binding.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { ceremonyHeader } from "../webauthn/ceremony.js";
import { deviceCookie, deviceTokenFromCookie } from "./cookies.js";
import {
  type JsonSchema,
  answerObject,
  ceremonyStartData,
  listOf,
  oauthSecondFactorData,
  oauthSignInData,
  requestObject,
  requiredText,
  schemaRef,
  tempTokenData,
} from "./openapi-schemas.js";

/** What a route handler receives. */
export interface RouteContext {
  auth: Auth;
  /** The JSON body of a POST or PUT, checked by `readJsonBody`; `{}` for other methods. */
  body: Record<string, unknown>;
  /** The values of the path's `:name` segments, as they appear in the normalised path. */
  params: Record<string, string>;
  /** The query string of the request (without the `?`). */
  query: string;
  /** Whether the request arrived over TLS (directly, or per a trusted proxy): decides `Secure` cookies. */
  secure: boolean;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The client address, resolved through the trusted-proxy setting (RL-3). */
  ip: string | undefined;
  /** Set on `bearer` and `admin` routes: who the access token speaks for. */
  access: AccessContext | undefined;
}

/** What a route handler returns: the envelope's `data`, and its code when it is not 0. */
export interface RouteResult {
  data: unknown;
  code?: 0 | typeof ErrorCode.SecondFactorRequired;
  /** Send `data` itself as the body, not in the envelope: for standard documents (a JWK Set). */
  bare?: { cacheControl: string };
  /** `Set-Cookie` header values to send with the answer. */
  cookies?: string[];
  /** Answer with a 302 to this URL instead of the envelope. */
  redirectTo?: string;
}

/** A parameter of a route other than its JSON body, for the OpenAPI document. */
export interface ParameterDoc {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  description: string;
  /** Path parameters are always required. Default false. */
  required?: boolean;
  /** Default `{ type: "string" }`. */
  schema?: JsonSchema;
}

/** The group a route is listed under in the OpenAPI document. */
export type RouteTag = "Sign-in" | "Tokens" | "Second factor" | "Passkeys" | "OAuth" | "Directory" | "Account" | "Metadata";

/**
 * What a route takes and answers, written once beside its handler: `openApiDocument` builds the
 * OpenAPI operation from it, and the HTTP tests check the server's real answers against it.
 */
export interface RouteDoc {
  /** Unique; the name of the core flow the route serves where there is one. */
  operationId: string;
  summary: string;
  description?: string;
  tag: RouteTag;
  parameters?: ParameterDoc[];
  /** The JSON body of a POST or PUT. */
  body?: JsonSchema;
  /** The envelope's `data` on success (code 0); with `bare`, the whole body. */
  data: JsonSchema;
  /** The success body is `data` itself, not the envelope (the route returns `bare`). */
  bare?: true;
  /** The `data` of a code-40102 answer, for a route that may ask for the second factor. */
  secondFactor?: JsonSchema;
  /**
   * The other codes the route may answer. Those every route of its kind answers are added by
   * the document: 40300 and 50000 on every route, 40002 on a POST or PUT, 40101 and 50300 with
   * a bearer token, 40300 on an admin route.
   */
  codes: ErrorCode[];
  /** What the `Set-Cookie` of a successful answer is for. */
  setsCookie?: string;
  /** When the route answers with a 302 instead of the envelope. */
  redirect?: string;
}

/** One entry of the route table. */
export interface Route {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /**
   * Under the base path (`/auth/login`), or absolute when `atRoot` (`/.well-known/jwks.json`).
   * A segment `:name` matches any one non-empty segment, passed in `params`.
   */
  path: string;
  atRoot?: boolean;
  /** When it returns false the route does not exist for this auth (40400): a feature not configured. */
  enabled?: (auth: Auth) => boolean;
  /**
   * `bearer` routes need a live access token (AT-6: from the Authorization header only);
   * `admin` routes need one whose roles hold the configured `adminRole` (40300 otherwise).
   */
  access: "public" | "bearer" | "admin";
  /** The body limit in bytes. Default 64 KiB. */
  bodyLimit?: number;
  doc: RouteDoc;
  handle(context: RouteContext): Promise<RouteResult>;
}

const signedIn = (context: RouteContext): string => (context.access as AccessContext).userId;

/** The re-authentication a bearer route offers: the token's session, and a password from the body. */
const reauthentication = (context: RouteContext): ReauthenticationProof => ({
  sessionId: (context.access as AccessContext).sessionId,
  password: context.body.password as string | undefined,
});

/** The answer of a route that completes a login: tokens, or 40102 with a temporary token. */
const loginResponse = (context: RouteContext, result: LoginResult): RouteResult =>
  result.status === "authenticated"
    ? signedInResponse(context, result.tokens)
    : { code: ErrorCode.SecondFactorRequired, data: { tempToken: result.tempToken } };

/** The answer of a completed sign-in: the token set, and the device token also as a cookie (RL-5). */
const signedInResponse = ({ auth, secure }: RouteContext, tokens: TokenSet): RouteResult => ({
  data: tokens,
  cookies: tokens.deviceToken === undefined ? [] : [deviceCookie(auth, tokens.deviceToken, secure)],
});

/** The device token a sign-in request carries: `deviceToken` of the body, else the device cookie (RL-5). */
const deviceTokenOf = ({ body, header, secure }: RouteContext): string | undefined =>
  body.deviceToken !== undefined ? (body.deviceToken as string) : deviceTokenFromCookie(header("cookie"), secure);

/** What the routes that complete a sign-in say of the device cookie. */
const setsDeviceCookie =
  "On success, `portcullis_device` (`__Host-portcullis_device` over TLS), HttpOnly, SameSite=Strict: the device token (RL-5)";

const passkeysEnabled = (auth: Auth) => auth.config.passkeys !== null;
const oauthEnabled = (auth: Auth) => auth.config.oauthProviders.size > 0;

/** The body limit of a directory policy: room for a `caBundle` of up to 256 KiB. */
const directoryPolicyBodyLimit = 512 * 1024;

/** The body limit of the WebAuthn finish routes (contract: 1 MiB). */
const webauthnBodyLimit = 1024 * 1024;

const ceremonyParameter: ParameterDoc = {
  name: "X-WebAuthn-Ceremony",
  in: "header",
  required: true,
  description: "The `ceremonyId` the begin step answered; without it, 40002",
};
const credentialIdParameter: ParameterDoc = { name: "id", in: "path", description: "The passkey's credential id (base64url)" };
const providerParameter: ParameterDoc = {
  name: "provider",
  in: "path",
  description: "A provider's name, as in `oauth.providers`",
};
const passwordProof: JsonSchema = {
  type: "string",
  description: "The current password, needed when the sign-in is older than `reauthentication.recentSignIn`",
};

/**
 * The HTTP surface of Portcullis (`contract.md`): every route, once, for every adapter. The
 * adapters only translate requests and responses; no auth rule lives in them.
 */
export const routes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/login",
    access: "public",
    doc: {
      operationId: "login",
      tag: "Sign-in",
      summary: "Sign in with a username and password",
      description:
        'Local accounts, or the directory with `provider: "directory"` (or first, under the policy\'s `loginOrder: "directory-first"`). A user with TOTP gets 40102 with a temporary token for `2fa/verify` or `2fa/recovery`.',
      body: requestObject(
        {
          username: requiredText,
          password: requiredText,
          provider: { enum: ["local", "directory"] },
          deviceToken: {
            type: "string",
            description:
              "The `deviceToken` of an earlier sign-in of this client, for clients without cookies (RL-5): its failures spend a budget of their own",
          },
        },
        ["username", "password"],
      ),
      data: schemaRef("TokenSet"),
      secondFactor: tempTokenData,
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40300, 40400, 40900, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      const result = await login(auth, {
        username: body.username as string,
        password: body.password as string,
        provider: body.provider as string,
        deviceToken: deviceTokenOf(context),
        ip,
      });
      return loginResponse(context, result);
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/verify",
    access: "public",
    doc: {
      operationId: "verifyTotp",
      tag: "Sign-in",
      summary: "Complete a 40102 sign-in with a TOTP code",
      body: requestObject({ tempToken: requiredText, code: { ...requiredText, description: "Six digits" } }, [
        "tempToken",
        "code",
      ]),
      data: schemaRef("TokenSet"),
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40103, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      return signedInResponse(
        context,
        await verifyTotp(auth, { tempToken: body.tempToken as string, code: body.code as string, ip }),
      );
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/recovery",
    access: "public",
    doc: {
      operationId: "useRecoveryCode",
      tag: "Sign-in",
      summary: "Complete a 40102 sign-in with a one-time recovery code",
      body: requestObject({ tempToken: requiredText, recoveryCode: requiredText }, ["tempToken", "recoveryCode"]),
      data: schemaRef("TokenSet"),
      setsCookie: setsDeviceCookie,
      codes: [40001, 40100, 40103, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, ip } = context;
      const tokens = await useRecoveryCode(auth, {
        tempToken: body.tempToken as string,
        recoveryCode: body.recoveryCode as string,
        ip,
      });
      return signedInResponse(context, tokens);
    },
  },
  {
    method: "POST",
    path: "/auth/refresh",
    access: "public",
    doc: {
      operationId: "refresh",
      tag: "Tokens",
      summary: "Exchange a refresh token for a new token set",
      description: "The refresh token sent is spent; sending a spent one again revokes its whole session.",
      body: requestObject({ refreshToken: requiredText }, ["refreshToken"]),
      data: schemaRef("TokenSet"),
      codes: [40001, 40101, 50300],
    },
    async handle({ auth, body, ip }) {
      return { data: await refresh(auth, { refreshToken: body.refreshToken as string, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/logout",
    access: "public",
    doc: {
      operationId: "logout",
      tag: "Tokens",
      summary: "Revoke the session of a refresh token",
      body: requestObject({ refreshToken: requiredText }, ["refreshToken"]),
      data: answerObject({}),
      codes: [40001, 40101, 50300],
    },
    async handle({ auth, body }) {
      await logout(auth, { refreshToken: body.refreshToken as string });
      return { data: {} };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/setup",
    access: "bearer",
    doc: {
      operationId: "beginTotpSetup",
      tag: "Second factor",
      summary: "Start TOTP enrolment",
      description: "The factor stays pending until `2fa/enable`; calling again replaces a pending secret.",
      body: requestObject({ password: passwordProof }),
      data: answerObject({
        secret: { type: "string", description: "Base32, for typing in" },
        otpauthUrl: { type: "string", description: "The `otpauth://totp/…` URI, for a QR code" },
      }),
      codes: [40001, 40100, 40900, 42900],
    },
    async handle(context) {
      return { data: await beginTotpSetup(context.auth, { ...reauthentication(context), userId: signedIn(context) }) };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/enable",
    access: "bearer",
    doc: {
      operationId: "enableTotp",
      tag: "Second factor",
      summary: "Turn the pending TOTP factor on with a code from it",
      description: "Raises the token version: every token issued before, this call's included, is refused from now on.",
      body: requestObject({ code: requiredText, password: passwordProof }, ["code"]),
      data: answerObject({
        enabled: { const: true },
        recoveryCodes: { type: "array", items: { type: "string" }, description: "Ten codes, shown this once" },
      }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      const { recoveryCodes } = await enableTotp(context.auth, {
        ...reauthentication(context),
        userId: signedIn(context),
        code: context.body.code as string,
      });
      return { data: { enabled: true, recoveryCodes } };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/disable",
    access: "bearer",
    doc: {
      operationId: "disableTotp",
      tag: "Second factor",
      summary: "Turn TOTP off with a current code or the password",
      description: "One of `code` and `password` is required; the code wins when both are sent. Raises the token version.",
      body: requestObject({ code: { type: "string" }, password: { type: "string" } }),
      data: answerObject({ disabled: { const: true } }),
      codes: [40001, 40100, 40103, 40900, 42900],
    },
    async handle(context) {
      const { code, password } = context.body as { code?: string; password?: string };
      await disableTotp(context.auth, { userId: signedIn(context), code, password });
      return { data: { disabled: true } };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/recovery-codes",
    access: "bearer",
    doc: {
      operationId: "regenerateRecoveryCodes",
      tag: "Second factor",
      summary: "Replace the recovery codes with a new set",
      body: requestObject({ code: requiredText }, ["code"]),
      data: answerObject({ recoveryCodes: { type: "array", items: { type: "string" } } }),
      codes: [40001, 40103, 40900, 42900],
    },
    async handle(context) {
      return {
        data: await regenerateRecoveryCodes(context.auth, { userId: signedIn(context), code: context.body.code as string }),
      };
    },
  },
  {
    method: "GET",
    path: "/auth/public-key/config",
    access: "public",
    doc: {
      operationId: "passkeyConfig",
      tag: "Passkeys",
      summary: "Whether passkeys are enabled",
      data: answerObject({ enabled: { type: "boolean" } }),
      codes: [],
    },
    async handle({ auth }) {
      return { data: { enabled: passkeysEnabled(auth) } };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/login/begin",
    access: "public",
    enabled: passkeysEnabled,
    doc: {
      operationId: "webauthnBegin",
      tag: "Passkeys",
      summary: "Begin a passkey sign-in",
      description: "With a username, that account's passkeys are listed; without one the ceremony is discoverable.",
      body: requestObject({ username: { type: "string" } }),
      data: ceremonyStartData("CredentialRequestOptions"),
      codes: [42900, 50300],
    },
    async handle({ auth, body, ip }) {
      return { data: await webauthnBegin(auth, { username: body.username as string | undefined, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/login/finish",
    access: "public",
    enabled: passkeysEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "webauthnFinish",
      tag: "Passkeys",
      summary: "Finish a passkey sign-in with the browser's assertion",
      description: "Bodies up to 1 MiB. A passkey without user verification, for a user with TOTP, answers 40102.",
      parameters: [ceremonyParameter],
      body: schemaRef("AuthenticationResponse"),
      data: schemaRef("TokenSet"),
      setsCookie: setsDeviceCookie,
      secondFactor: tempTokenData,
      codes: [40100, 40300, 42900, 50300],
    },
    async handle(context) {
      const { auth, body, header, ip, secure } = context;
      const deviceToken = deviceTokenFromCookie(header("cookie"), secure);
      const result = await webauthnFinish(auth, {
        ceremonyId: header(ceremonyHeader) as string,
        response: body,
        deviceToken,
        ip,
      });
      return loginResponse(context, result);
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/register/begin",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "webauthnRegisterBegin",
      tag: "Passkeys",
      summary: "Begin registering a passkey",
      description: "Without a recent sign-in, the password (or `totpCode`) proves it is the user.",
      body: requestObject({ label: requiredText, password: passwordProof, totpCode: { type: "string" } }, ["label"]),
      data: ceremonyStartData("CredentialCreationOptions"),
      codes: [40001, 40100, 40103, 40900, 42200, 42900],
    },
    async handle(context) {
      return {
        data: await webauthnRegisterBegin(context.auth, {
          ...reauthentication(context),
          totpCode: context.body.totpCode as string | undefined,
          userId: signedIn(context),
          label: context.body.label as string,
        }),
      };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/register/finish",
    access: "bearer",
    enabled: passkeysEnabled,
    bodyLimit: webauthnBodyLimit,
    doc: {
      operationId: "webauthnRegisterFinish",
      tag: "Passkeys",
      summary: "Finish registering a passkey with the browser's attestation",
      description: "Bodies up to 1 MiB. Raises the token version.",
      parameters: [ceremonyParameter],
      body: schemaRef("RegistrationResponse"),
      data: schemaRef("PasskeyInfo"),
      codes: [40100, 40900],
    },
    async handle(context) {
      const ceremonyId = context.header(ceremonyHeader) as string;
      return {
        data: await webauthnRegisterFinish(context.auth, { userId: signedIn(context), ceremonyId, response: context.body }),
      };
    },
  },
  {
    method: "GET",
    path: "/auth/public-key/credentials",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "listPasskeys",
      tag: "Passkeys",
      summary: "List the signed-in user's passkeys, oldest first",
      data: listOf("PasskeyInfo"),
      codes: [],
    },
    async handle(context) {
      return { data: await listPasskeys(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "PUT",
    path: "/auth/public-key/credentials/:id",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "renamePasskey",
      tag: "Passkeys",
      summary: "Rename one of the signed-in user's passkeys",
      parameters: [credentialIdParameter],
      body: requestObject({ label: { ...requiredText, description: "1 to 64 characters of visible text" } }, ["label"]),
      data: answerObject({ renamed: { const: true } }),
      codes: [40001, 40400, 42200],
    },
    async handle(context) {
      const input = { userId: signedIn(context), id: context.params.id as string, label: context.body.label as string };
      await renamePasskey(context.auth, input);
      return { data: { renamed: true } };
    },
  },
  {
    method: "DELETE",
    path: "/auth/public-key/credentials/:id",
    access: "bearer",
    enabled: passkeysEnabled,
    doc: {
      operationId: "revokePasskey",
      tag: "Passkeys",
      summary: "Revoke one of the signed-in user's passkeys",
      description: "40900 when it is the account's last way to sign in. Raises the token version.",
      parameters: [credentialIdParameter],
      data: answerObject({ revoked: { const: true } }),
      codes: [40400, 40900],
    },
    async handle(context) {
      await revokePasskey(context.auth, { userId: signedIn(context), id: context.params.id as string });
      return { data: { revoked: true } };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/providers",
    access: "public",
    doc: {
      operationId: "oauthProviders",
      tag: "OAuth",
      summary: "List the configured sign-in providers",
      data: listOf("OAuthProvider"),
      codes: [],
    },
    async handle({ auth }) {
      return { data: oauthProviders(auth) };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/authorize",
    access: "public",
    enabled: oauthEnabled,
    doc: {
      operationId: "oauthAuthorize",
      tag: "OAuth",
      summary: "Begin a sign-in with a provider",
      description:
        "Answers the provider's URL to send the browser to, and sets the HttpOnly cookie that binds the flow to this browser.",
      parameters: [
        providerParameter,
        { name: "redirect", in: "query", description: "Where the app goes afterwards: a path of this app only" },
        { name: "mode", in: "query", description: "`redirect` answers a 302 to the provider", schema: { enum: ["redirect"] } },
      ],
      data: answerObject({ authUrl: { type: "string", format: "uri" } }),
      setsCookie:
        "The binding cookie the callback needs, HttpOnly, SameSite=Lax, for 10 minutes: `__Host-portcullis_oauth` (Secure, path `/`) over TLS, `portcullis_oauth` (path of the OAuth routes) over plain HTTP",
      redirect: "With `mode=redirect`: a 302 to the provider, with the same cookie",
      codes: [40002, 40400, 42900, 50300],
    },
    async handle({ auth, params, query, secure, ip }) {
      const search = new URLSearchParams(query);
      const redirect = search.get("redirect") ?? undefined;
      const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: params.provider as string, redirect, ip });
      const cookie = bindingCookie(auth, browserBinding, secure, 600);
      const cookies = [cookie];
      return search.get("mode") === "redirect" ? { data: null, redirectTo: authUrl, cookies } : { data: { authUrl }, cookies };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/callback",
    access: "public",
    enabled: oauthEnabled,
    doc: {
      operationId: "oauthCallback",
      tag: "OAuth",
      summary: "Finish a sign-in with a provider: relay the provider's callback query",
      description: "A user with TOTP gets 40102, unless the provider is trusted for the second factor.",
      parameters: [
        providerParameter,
        { name: "code", in: "query", description: "From the provider" },
        { name: "state", in: "query", description: "From the provider" },
        { name: "iss", in: "query", description: "From the provider (RFC 9207)" },
        { name: "error", in: "query", description: "From the provider, when the user refused" },
        {
          name: "__Host-portcullis_oauth",
          in: "cookie",
          description: "The cookie `authorize` set, over TLS; sent twice, 40100 (OA-10)",
        },
        {
          name: "portcullis_oauth",
          in: "cookie",
          description: "The cookie `authorize` set, over plain HTTP (development); ignored over TLS; sent twice, 40100",
        },
      ],
      data: oauthSignInData,
      secondFactor: oauthSecondFactorData,
      setsCookie: `Clears the binding cookie. ${setsDeviceCookie}`,
      codes: [40100, 40300, 40400, 40900, 50300],
    },
    async handle(context) {
      const { auth, params, query, header, secure, ip } = context;
      const browserBinding = bindingFrom(header("cookie"), secure);
      const result = await oauthCallback(auth, { provider: params.provider as string, query, browserBinding, ip });
      const answer = loginResponse(context, result);
      return {
        ...answer,
        data: { ...(answer.data as object), returnPath: result.returnPath },
        cookies: [bindingCookie(auth, "", secure, 0), ...(answer.cookies ?? [])],
      };
    },
  },
  {
    method: "GET",
    path: "/auth/directory/policy",
    access: "admin",
    doc: {
      operationId: "getDirectoryPolicy",
      tag: "Directory",
      summary: "Read the saved directory policy",
      description: "Before any save, the defaults, disabled.",
      data: schemaRef("DirectoryPolicy"),
      codes: [],
    },
    async handle({ auth }) {
      return { data: await getDirectoryPolicy(auth) };
    },
  },
  {
    method: "PUT",
    path: "/auth/directory/policy",
    access: "admin",
    bodyLimit: directoryPolicyBodyLimit,
    doc: {
      operationId: "saveDirectoryPolicy",
      tag: "Directory",
      summary: "Save the directory policy",
      description: "Bodies up to 512 KiB. Raises every directory user's token version. 42200 names the first bad field.",
      body: schemaRef("DirectoryPolicyInput"),
      data: schemaRef("DirectoryPolicy"),
      codes: [42200],
    },
    async handle({ auth, body }) {
      return { data: await saveDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/test",
    access: "admin",
    bodyLimit: directoryPolicyBodyLimit,
    doc: {
      operationId: "testDirectoryPolicy",
      tag: "Directory",
      summary: "Try a directory policy without saving it",
      description: "`{}` tries the saved policy; fields given are tried over it. A failure is code 0 with `ok: false`.",
      body: schemaRef("DirectoryPolicyInput"),
      data: schemaRef("DirectoryCheck"),
      codes: [],
    },
    async handle({ auth, body }) {
      return { data: await testDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/preview",
    access: "admin",
    doc: {
      operationId: "previewDirectoryUser",
      tag: "Directory",
      summary: "Show what the saved policy makes of a directory user",
      body: requestObject({ username: requiredText }, ["username"]),
      data: schemaRef("DirectoryUserPreview"),
      codes: [40001, 40400],
    },
    async handle({ auth, body }) {
      return { data: await previewDirectoryUser(auth, { username: body.username as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/me",
    access: "bearer",
    doc: {
      operationId: "getPublicUser",
      tag: "Account",
      summary: "The signed-in user",
      data: schemaRef("PublicUser"),
      codes: [],
    },
    async handle(context) {
      return { data: await getPublicUser(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "GET",
    path: "/auth/openapi.json",
    access: "public",
    enabled: (auth) => auth.config.openApi,
    doc: {
      operationId: "openApiDocument",
      tag: "Metadata",
      summary: "This OpenAPI document",
      description: "Served with `http.openApi: true`; `Cache-Control: public, max-age=300`.",
      data: {
        type: "object",
        properties: { openapi: { type: "string", pattern: "^3\\.1\\." }, info: { type: "object" }, paths: { type: "object" } },
        required: ["openapi", "info", "paths"],
      },
      bare: true,
      codes: [],
    },
    async handle({ auth }) {
      const { servedOpenApiDocument } = await import("./openapi.js");
      return { data: servedOpenApiDocument(auth), bare: { cacheControl: "public, max-age=300" } };
    },
  },
  {
    method: "GET",
    path: "/.well-known/jwks.json",
    atRoot: true,
    access: "public",
    enabled: (auth) => auth.keys.jwks !== null,
    doc: {
      operationId: "jwks",
      tag: "Metadata",
      summary: "The public keys that verify access tokens",
      description: "Served only when tokens are signed with EdDSA or ES256, at the root. `Cache-Control: public, max-age=300`.",
      data: schemaRef("JwkSet"),
      bare: true,
      codes: [],
    },
    async handle({ auth }) {
      return { data: auth.keys.jwks, bare: { cacheControl: "public, max-age=300" } };
    },
  },
];
