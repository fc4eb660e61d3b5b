import {
  type Auth,
  type HttpResponse,
  type Route,
  addClientSecret,
  addDomain,
  beginPasskeyEnrolment,
  beginPasskeySignUp,
  beginTotpEnrolment,
  createApiKey,
  createOrganization,
  createServiceAccount,
  handleRequest,
  inviteMember,
  login,
  reauthenticateWithPasskeyBegin,
  routes,
  webauthnBegin,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { ldapDirectory } from "@portcullis/ldap";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultDirectoryPolicy } from "../../packages/core/src/directory/policy.js";
import {
  base32Decode,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  testPasskeys,
  testPassword,
  totpCodeAt,
} from "../fixtures/auth.js";
import { type OidcTestProvider, corpOAuthConfig, defaultOidcRedirectUri, startOidcProvider } from "../fixtures/oidc-provider.js";
import { seeded } from "../fixtures/seeded.js";
import type { RecordedExchange } from "./client.js";
import { checkRecordedExchanges } from "./openapi-drift.js";
import type { RunningServer } from "./servers.js";

const awkwardStrings = [
  "",
  " ",
  "\u0000",
  "a".repeat(2048),
  "\u{1F600}".repeat(300),
  "\uD800",
  "ﬁ",
  "<script>",
  "' OR 1=1 --",
  "*)(uid=*))(|(uid=*",
  "Bearer x",
  "123456",
  "0000-0000-0000-0000",
  "constructor",
  "toString",
];

function randomValue(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 6 : 8));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 123456, 0.5][Math.floor(next() * 6)];
    case 3:
    case 4:
      return awkwardStrings[Math.floor(next() * awkwardStrings.length)];
    case 5:
      return next()
        .toString(36)
        .repeat(Math.floor(next() * 4));
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, (_, index) => [`k${index}`, randomValue(next, depth + 1)]),
      );
  }
}

/** The fields of a WebAuthn credential response (`AuthenticationResponseJSON`, `RegistrationResponseJSON`). */
const credentialFields = ["id", "rawId", "type", "response", "clientExtensionResults", "authenticatorAttachment"];
const responseFields = ["clientDataJSON", "authenticatorData", "signature", "userHandle", "attestationObject", "transports"];

/** The fields of a directory policy (`contract.md`, Directory policy). */
const directoryPolicyFields = Object.keys({ ...defaultDirectoryPolicy, bindPassword: "" });

/** The fields each route reads, by `METHOD path` of the route table. */
const fieldsByRoute: Record<string, string[]> = {
  "POST /auth/login": ["username", "password", "provider", "deviceToken"],
  "POST /auth/2fa/verify": ["tempToken", "code"],
  "POST /auth/2fa/recovery": ["tempToken", "recoveryCode"],
  "POST /auth/refresh": ["refreshToken"],
  "POST /auth/logout": ["refreshToken"],
  "POST /auth/2fa/setup": ["password"],
  "POST /auth/2fa/enable": ["code", "password"],
  "POST /auth/2fa/disable": ["code", "password"],
  "POST /auth/2fa/recovery-codes": ["code", "password"],
  "POST /auth/public-key/login/begin": ["username", "mediation"],
  "POST /auth/public-key/login/finish": credentialFields,
  "POST /auth/public-key/register/begin": ["label", "password", "totpCode"],
  "POST /auth/public-key/register/finish": credentialFields,
  "PUT /auth/public-key/credentials/:id": ["label"],
  "DELETE /auth/public-key/credentials/:id": ["password", "totpCode"],
  "PUT /auth/directory/policy": directoryPolicyFields,
  "POST /auth/directory/policy/test": directoryPolicyFields,
  "POST /auth/directory/policy/preview": ["username"],
  "POST /auth/password": ["currentPassword", "newPassword", "totpCode"],
  "PUT /users/me/password": ["oldPassword", "newPassword", "totpCode"],
  "POST /auth/reauthenticate": ["password", "totpCode"],
  "POST /auth/reauthenticate/public-key/begin": [],
  "POST /auth/reauthenticate/public-key/finish": credentialFields,
  "POST /auth/sessions/end-others": ["password", "totpCode"],
  "DELETE /auth/sessions/:id": ["password", "totpCode"],
  "POST /auth/register": ["username", "password", "email", "fields"],
  "POST /auth/register/public-key/begin": ["username", "email", "label", "fields"],
  "POST /auth/register/public-key/finish": credentialFields,
  "POST /auth/password/forgot": ["username", "email"],
  "POST /auth/password/reset": ["token", "newPassword", "totpCode", "recoveryCode"],
  "POST /auth/email": ["email", "password", "totpCode"],
  "POST /auth/email/verify": ["token"],
  "POST /auth/email-sign-in/begin": ["email"],
  "POST /auth/email-sign-in/finish": ["code", "token", "binding", "deviceToken"],
  "POST /auth/admin/users": ["username", "password", "email", "emailVerified", "roles", "fields"],
  "PATCH /auth/admin/users/:id": ["disabled", "roles", "fields", "password", "totpCode"],
  "PATCH /auth/me": ["fields"],
  "DELETE /auth/admin/users/:id/totp": ["password", "totpCode"],
  "DELETE /auth/admin/sessions": ["password", "totpCode"],
  "POST /auth/oauth/:provider/reauthenticate": ["redirect", "totpCode"],
  "POST /auth/2fa/enrolment/setup": ["tempToken"],
  "POST /auth/2fa/enrolment/enable": ["tempToken", "code"],
  "POST /auth/public-key/enrolment/begin": ["tempToken", "label"],
  "POST /auth/public-key/enrolment/finish": ["tempToken", "response"],
  "POST /auth/orgs": ["name", "slug"],
  "POST /auth/orgs/active": ["orgId"],
  "POST /auth/orgs/invitations/accept": ["token"],
  "PATCH /auth/orgs/:orgId": ["name", "slug", "rules"],
  "DELETE /auth/orgs/:orgId": ["password", "totpCode"],
  "PATCH /auth/orgs/:orgId/members/:userId": ["roles", "password", "totpCode"],
  "DELETE /auth/orgs/:orgId/members/:userId": ["password", "totpCode"],
  "POST /auth/orgs/:orgId/invitations": ["email", "roles"],
  "POST /auth/orgs/:orgId/domains": ["domain"],
  "DELETE /auth/admin/orgs/:orgId": ["password", "totpCode"],
  "POST /auth/api-keys": ["name", "scopes", "expiresIn", "password", "totpCode"],
  "POST /auth/orgs/:orgId/api-keys": ["name", "scopes", "expiresIn", "password", "totpCode"],
  "PATCH /auth/api-keys/:id": ["name"],
  "DELETE /auth/admin/users/:id/api-keys/:keyId": ["password", "totpCode"],
  "POST /auth/admin/service-accounts": ["name", "roles", "scopes", "password", "totpCode"],
  "PATCH /auth/admin/service-accounts/:id": ["name", "roles", "scopes", "disabled", "endTokens", "password", "totpCode"],
  "DELETE /auth/admin/service-accounts/:id": ["password", "totpCode"],
  "POST /auth/admin/service-accounts/:id/secrets": ["expiresIn", "password", "totpCode"],
  "POST /auth/admin/service-accounts/:id/keys": ["jwk", "password", "totpCode"],
  "DELETE /auth/admin/service-accounts/:id/credentials/:credentialId": ["password", "totpCode"],
  "POST /auth/token": ["grant_type", "scope", "client_id", "client_assertion_type", "client_assertion", "client_secret"],
  "POST /auth/admin/users/:id/impersonate": ["password", "totpCode"],
};

/** Bodies a route takes, mixed in one time in ten, so that random runs reach its success and its conflicts too. */
const wellFormed: Record<string, (index: number) => Record<string, unknown>> = {
  "POST /auth/register": (index) => ({ username: `fuzz-new-${index % 3}`, password: testPassword }),
  "POST /auth/register/public-key/begin": (index) => ({ username: `fuzz-passkey-${index % 3}`, label: "Fuzz" }),
  "POST /auth/admin/users": (index) => ({ username: `fuzz-made-${index % 3}`, roles: ["user"] }),
  "PATCH /auth/admin/users/:id": (index) => ({ disabled: index % 2 === 0, roles: ["user", `r${index % 3}`] }),
  "POST /auth/oauth/:provider/reauthenticate": (index) => (index % 2 === 0 ? { redirect: "/settings" } : {}),
  "POST /auth/orgs": (index) => ({ name: `Fuzz made ${index}` }),
  "PATCH /auth/orgs/:orgId": (index) => ({
    name: `Renamed ${index}`,
    rules: { signInMethods: index % 2 === 0 ? null : ["password"] },
  }),
  "POST /auth/orgs/:orgId/invitations": (index) => ({ email: `guest-${index}@fuzz.example`, roles: ["member"] }),
  "POST /auth/orgs/:orgId/domains": (index) => ({ domain: `d${index}.fuzz.example` }),
  "POST /auth/api-keys": (index) => ({ name: `Fuzz key ${index}`, scopes: ["reports:read"], expiresIn: "30d" }),
  "POST /auth/orgs/:orgId/api-keys": (index) => ({ name: `Fuzz org key ${index}`, scopes: ["reports:read"] }),
  "PATCH /auth/api-keys/:id": (index) => ({ name: `Renamed key ${index}` }),
  "POST /auth/admin/service-accounts": (index) => ({ name: `Fuzz account ${index}`, scopes: ["reports:read"] }),
  "PATCH /auth/admin/service-accounts/:id": (index) => ({ name: `Renamed account ${index}`, disabled: index % 2 === 0 }),
  "POST /auth/admin/service-accounts/:id/secrets": (index) => (index % 2 === 0 ? {} : { expiresIn: "90d" }),
  "POST /auth/admin/service-accounts/:id/keys": (index) => ({ jwk: { ...publicJwk, kid: `fuzz-${index}` } }),
  // With the account's secret in Authorization: Basic (see the token route's headers below).
  "POST /auth/token": (index) => ({ grant_type: "client_credentials", ...(index % 2 === 0 ? { scope: "reports:read" } : {}) }),
  "POST /auth/admin/users/:id/impersonate": () => ({}),
  "POST /auth/email-sign-in/begin": (index) => ({ email: index % 2 === 0 ? "fuzz@fuzz.example" : `new-${index}@fuzz.example` }),
  "DELETE /auth/admin/service-accounts/:id": () => ({}),
  "DELETE /auth/admin/service-accounts/:id/credentials/:credentialId": () => ({}),
};

/** A public key a service account registers for private_key_jwt (an Ed25519 key of RFC 8037 §A.2). */
const publicJwk = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };

/**
 * The kinds of passkey ceremony a finish route spends; `enrolment` is the one a 40105 temporary token
 * begins (STUP-4), `signUp` a passkey sign-up's (PL-15).
 */
type CeremonyKind = "login" | "register" | "reauthenticate" | "enrolment" | "signUp";

/** The role whose holders must have a second factor: only the enrolling user has it (STUP-4). */
const enrollingRole = "must-enrol";

const routeKey = (route: Route) => `${route.method} ${route.path}`;

const documentedCodes = new Set([0, 40001, 40002, 40100, 40101, 40102, 40103, 40104, 40300, 40400, 40900, 42200, 42900]);

function request(method: string, url: string, body: string, headers: Record<string, string>) {
  const all: Record<string, string> = { "content-type": "application/json", ...headers };
  return {
    method,
    url: `/api/v1${url}`,
    header: (name: string) => all[name],
    body: (async function* () {
      yield new TextEncoder().encode(body);
    })(),
    peerAddress: "192.0.2.1",
    secure: true,
  };
}

/** A string that passes for base64url, of random length, or an awkward one. */
function randomBase64url(next: () => number): unknown {
  if (next() < 0.3) return randomValue(next);
  return Buffer.from(Array.from({ length: Math.floor(next() * 80) }, () => Math.floor(next() * 256))).toString("base64url");
}

/** A credential response of the right shape with random content, or random values in its place. */
function randomCredential(next: () => number): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const id = randomBase64url(next);
  for (const field of credentialFields) {
    if (next() >= 0.85) continue;
    if (field === "id" || field === "rawId") body[field] = next() < 0.7 ? id : randomBase64url(next);
    else if (field === "type") body[field] = next() < 0.7 ? "public-key" : randomValue(next);
    else if (field === "response" && next() < 0.7) {
      body[field] = Object.fromEntries(responseFields.filter(() => next() < 0.7).map((name) => [name, randomBase64url(next)]));
    } else body[field] = randomValue(next);
  }
  return body;
}

/** A genuine signed response with one or two fields replaced by random values, removed, or (1 in 10) left alone. */
function mutated(next: () => number, genuine: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(genuine) as Record<string, unknown> & { response: Record<string, unknown> };
  if (next() < 0.1) return copy;
  for (let count = next() < 0.5 ? 1 : 2; count > 0; count -= 1) {
    const response = copy.response;
    const inResponse = next() < 0.6 && response !== null && typeof response === "object" && !Array.isArray(response);
    const target: Record<string, unknown> = inResponse ? response : copy;
    const names = inResponse ? responseFields : credentialFields;
    const name = names[Math.floor(next() * names.length)] as string;
    if (next() < 0.2) delete target[name];
    else target[name] = next() < 0.5 ? randomBase64url(next) : randomValue(next);
  }
  return copy;
}

/** The `sid` claim of an access token. */
const sessionOf = (accessToken: string): string =>
  JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString()).sid;

describe("random input on every route with a body", () => {
  /** A provider whose discovery answers, so that the re-authentication's valid bodies reach its authorization URL (STUP-5). */
  let idp: OidcTestProvider;
  let auth: Auth;
  const authenticator = makeTestAuthenticator();
  const session = { userId: "", accessToken: "", sessionId: "", passkeyId: "", otherSessionId: "", victimId: "" };
  /** The organization of the fuzz user (its owner) the organization routes act on, fresh per route, with its pending invitation. */
  const organization = { id: "", invitationId: "", made: 0 };
  /** A key of the fuzz user and one of the victim, fresh per route, that the API-key routes act on (AK-2). */
  const apiKey = { own: "", victims: "" };
  /** A service account of the fuzz administrator's, fresh per route, with a client secret (SA-1, SA-3). */
  const serviceAccount = { id: "", credentialId: "", clientSecret: "" };
  /** The enrolling user, and the temporary token of their latest 40105 answer with how many requests it was sent in. */
  const enrolment = { userId: "", tempToken: "", uses: Number.POSITIVE_INFINITY };
  /** How many passkey sign-ups were begun, each for a username of its own. */
  const signUps = { made: 0 };

  async function signIn(): Promise<{ accessToken: string; sessionId: string }> {
    const result = await login(auth, { username: "fuzz", password: testPassword });
    if (result.status !== "authenticated") throw new Error("expected a session");
    return { accessToken: result.tokens.accessToken, sessionId: sessionOf(result.tokens.accessToken) };
  }

  /**
   * A live temporary token of the enrolling user for `uses` more requests: the latest one, or that
   * of a new password sign-in (40105) once the latest would be sent in more requests than a token
   * serves (`enrolmentAttempts`, TMP-4), or was spent by an enrolment.
   */
  async function enrolmentToken(uses = 1): Promise<string> {
    if (enrolment.uses + uses > auth.config.secondFactor.enrolmentAttempts) {
      const result = await login(auth, { username: "fuzz-enrol", password: testPassword });
      if (result.status !== "enrolment_required") throw new Error(`expected enrolment_required, got ${result.status}`);
      Object.assign(enrolment, { tempToken: result.tempToken, uses: 0 });
    }
    enrolment.uses += uses;
    return enrolment.tempToken;
  }

  /** Undoes an enrolment that succeeded: the user has no second factor again, so the next sign-in is 40105 again. */
  async function undoEnrolment(): Promise<void> {
    for (const passkey of await auth.storage.passkeys.listByUser(enrolment.userId)) {
      await auth.storage.passkeys.delete(enrolment.userId, passkey.id);
    }
    await auth.storage.totp.remove(enrolment.userId);
    enrolment.uses = Number.POSITIVE_INFINITY;
  }

  beforeAll(async () => {
    idp = await startOidcProvider();
    auth = makeTestAuth({
      throttle: {
        ...generousThrottle,
        ip: [{ limit: 100_000, window: "15m" }],
        emailSignInRequests: [{ limit: 100_000, window: "15m" }],
        emailSignInRequestsIp: [{ limit: 100_000, window: "15m" }],
      },
      // Hundreds of genuine registration ceremonies for one user, past the default bound of 10 (RL-7).
      passkeys: { ...testPasskeys, registrationCeremonyLimit: 10_000 },
      // Random policies never name a reachable server: the test route answers from validation.
      directory: ldapDirectory(),
      // Sign-up on, so that its random bodies reach the checks rather than 40400 (SU-1).
      signUp: { enabled: true },
      // Email on, so that the reset and address routes' random bodies reach their checks (PR-1..PR-5, EV-1).
      email: {
        send: () => {},
        resetUrl: "https://app.example.com/reset-password",
        verifyUrl: "https://app.example.com/verify-email",
        invitationUrl: "https://app.example.com/accept-invitation",
        signInUrl: "https://app.example.com/email-sign-in",
        recipientLimit: [{ limit: 100_000, window: "1h" }],
      },
      // Email sign-in on, codes and links and sign-up, so that its random bodies reach their checks (PL-1…).
      emailSignIn: { enabled: true, method: "both", signUp: true },
      // Organizations on, with domains that verify, so that their routes reach their checks (OR-2…OR-11).
      organizations: { enabled: true, verifyDomain: async () => true },
      // API keys on, with room for every key the well-formed bodies make, so that their routes reach their checks (AK-1…AK-5).
      apiKeys: { enabled: true, maxPerUser: 100_000 },
      // Service accounts and impersonation on, so that their routes and the token endpoint reach their checks (SA-1…SA-4, IMP-1).
      serviceAccounts: { enabled: true, scopes: ["reports:read", "reports:write"] },
      impersonation: { enabled: true },
      // One role must have a second factor, so that the enrolment routes exist (STUP-4); only the enrolling user has it.
      secondFactor: { required: { roles: [enrollingRole] } },
      // A provider, so that the re-authentication through it exists and reaches its checks (STUP-5).
      oauth: corpOAuthConfig(idp, defaultOidcRedirectUri),
      // The password-change alias, so that it exists and reaches its checks (SE-6).
      http: { passwordChangeAlias: true },
    }).auth;
    // An admin, so that the directory policy routes are reached past the role check.
    const user = await createTestUser(auth, "fuzz", ["user", "admin", "impersonator"]);
    await createTotpUser(auth, "fuzz-totp");
    session.userId = user.id;
    // A passkey of the user, so that random and altered assertions reach the signature checks.
    await registerPasskey();
    // An account of the provider linked to the user, so that re-authenticating through it gets past the link check.
    const linked = { provider: "corp", subject: "fuzz-subject", userId: user.id, email: null, emailVerified: false };
    await auth.storage.identities.link({ ...linked, createdAt: auth.now(), lastUsedAt: null });
    // The administration routes act on another user, and the sessions routes on another session:
    // the requests' own session is never ended by them, so every route is reached signed in.
    session.victimId = (await createTestUser(auth, "fuzz-victim")).id;
    // A user who must have a second factor and has none: their password sign-in answers 40105 (STUP-4).
    enrolment.userId = (await createTestUser(auth, "fuzz-enrol", ["user", enrollingRole])).id;
  });

  afterAll(async () => {
    await idp.close();
  });

  // A fresh sign-in per route: each route's random bodies are judged by that route alone, and
  // the sign-in is recent, so the re-authenticated routes reach their own checks (SE-3, AD-1).
  // The enrolment routes' temporary token is fresh per route too, taken at its first use.
  beforeEach(async () => {
    Object.assign(session, await signIn());
    session.otherSessionId = (await signIn()).sessionId;
    enrolment.uses = Number.POSITIVE_INFINITY;
    await makeOrganization();
    apiKey.own = (await createApiKey(auth, { userId: session.userId, name: "Fuzz", password: testPassword })).id;
    apiKey.victims = (await createApiKey(auth, { userId: session.victimId, name: "Victim's", password: testPassword })).id;
    const admin = { adminUserId: session.userId, sessionId: session.sessionId };
    const account = await createServiceAccount(auth, { ...admin, name: "Fuzz", scopes: ["reports:read"] });
    const secret = await addClientSecret(auth, { ...admin, id: account.id });
    Object.assign(serviceAccount, { id: account.id, credentialId: secret.id, clientSecret: secret.clientSecret });
  });

  /** A new organization of the fuzz user, with the victim as a member, a pending invitation and a claimed domain. */
  async function makeOrganization(): Promise<void> {
    organization.made += 1;
    const { id } = await createOrganization(auth, { userId: session.userId, name: `Fuzz org ${organization.made}` });
    const now = auth.now();
    await auth.storage.organizations?.addMember({
      orgId: id,
      userId: session.victimId,
      roles: ["member"],
      createdAt: now,
      lastActiveAt: null,
    });
    const invitation = await inviteMember(auth, { userId: session.userId, orgId: id, email: "guest@fuzz.example" });
    await addDomain(auth, { userId: session.userId, orgId: id, domain: "fuzz.example" });
    Object.assign(organization, { id, invitationId: invitation.id });
  }

  /** Bodies that need the auth: a right TOTP code of a pending enrolment (so the enable route reaches its success), a label. */
  const wellFormedEnrolment: Record<string, (index: number) => Promise<Record<string, unknown>>> = {
    "POST /auth/2fa/enrolment/enable": async () => {
      // Two of the token's requests: this setup, and the enable that sends the code.
      const tempToken = await enrolmentToken(2);
      const { secret } = await beginTotpEnrolment(auth, { tempToken });
      return { tempToken, code: await totpCodeAt(auth, base32Decode(secret)) };
    },
    "POST /auth/public-key/enrolment/begin": async (index) => ({ tempToken: await enrolmentToken(), label: `Key ${index}` }),
  };

  /** The well-formed body of a route, when it has one. */
  const wellFormedFor = (key: string) => wellFormedEnrolment[key] ?? wellFormed[key];

  /** Registers a passkey of the user, re-authenticated with the password: the one random assertions are made with. */
  async function registerPasskey(): Promise<void> {
    const proof = { userId: session.userId, label: "Fuzz", password: testPassword };
    const { ceremonyId, options } = await webauthnRegisterBegin(auth, proof);
    const response = authenticator.register(options, { ignoreExcludeCredentials: true });
    session.passkeyId = (await webauthnRegisterFinish(auth, { userId: session.userId, ceremonyId, response })).id;
  }

  const bodyRoutes = routes.filter((route) => route.doc.body !== undefined);

  /** The RFC 6749 §5.2 errors the token endpoint may answer. */
  const oauthErrors = new Set(["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"]);

  /**
   * The headers of a token request: the account's own Basic credentials (always for a well-formed
   * body), random ones, a malformed or other scheme, or none; the form's content type nine times in ten.
   */
  function tokenEndpointHeaders(next: () => number, wellFormedUsed: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    const pick = wellFormedUsed ? 0 : next();
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
    if (pick < 0.4) headers.authorization = basic(serviceAccount.id, serviceAccount.clientSecret);
    else if (pick < 0.55) headers.authorization = basic(String(randomValue(next)), String(randomValue(next)));
    else if (pick < 0.65) headers.authorization = `Basic ${String(randomValue(next))}`;
    else if (pick < 0.7) headers.authorization = `Bearer ${session.accessToken}`;
    const type = wellFormedUsed ? 0 : next();
    headers["content-type"] =
      type < 0.9 ? "application/x-www-form-urlencoded" : type < 0.95 ? "application/json" : String(randomValue(next));
    return headers;
  }

  /** A body's fields form-encoded, each value as text; one in ten given twice. */
  function formBodyOf(next: () => number, body: Record<string, unknown>): string {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(body)) {
      const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
      form.append(name, text);
      if (next() < 0.1) form.append(name, text);
    }
    return form.toString();
  }

  it("covers every route of the table with a body, and each route's fields are those its document names", () => {
    expect(bodyRoutes.map(routeKey).sort()).toEqual(Object.keys(fieldsByRoute).sort());
    for (const route of bodyRoutes) {
      const named = (route.doc.body as { properties?: Record<string, unknown> }).properties;
      if (named !== undefined)
        expect([routeKey(route), ...fieldsByRoute[routeKey(route)]!.toSorted()]).toEqual([
          routeKey(route),
          ...Object.keys(named).toSorted(),
        ]);
    }
  });

  /** A fresh ceremony of one kind and a genuine signed response to it. */
  async function genuineCeremony(kind: CeremonyKind) {
    if (kind === "signUp") {
      signUps.made += 1;
      const { ceremonyId, options } = await beginPasskeySignUp(auth, { username: `fuzz-signed-up-${signUps.made}` });
      return { ceremonyId, response: authenticator.register(options) as unknown as Record<string, unknown> };
    }
    if (kind === "enrolment") {
      const { ceremonyId, options } = await beginPasskeyEnrolment(auth, { tempToken: await enrolmentToken(), label: "Fuzz" });
      const response = authenticator.register(options);
      return { ceremonyId, response: response as unknown as Record<string, unknown> };
    }
    if (kind === "login") {
      const { ceremonyId, options } = await webauthnBegin(auth, {});
      return { ceremonyId, response: authenticator.authenticate(options) as unknown as Record<string, unknown> };
    }
    if (kind === "reauthenticate") {
      // The revocation route's runs may have taken the user's passkey away: register another.
      if ((await auth.storage.passkeys.listByUser(session.userId)).length === 0) await registerPasskey();
      const { ceremonyId, options } = await reauthenticateWithPasskeyBegin(auth, session);
      return { ceremonyId, response: authenticator.authenticate(options) as unknown as Record<string, unknown> };
    }
    const { ceremonyId, options } = await webauthnRegisterBegin(auth, {
      userId: session.userId,
      sessionId: session.sessionId,
      label: "Fuzz",
    });
    const response = authenticator.register(options, { ignoreExcludeCredentials: true });
    return { ceremonyId, response: response as unknown as Record<string, unknown> };
  }

  /** The ceremony header of a finish request: the right ceremony, none, empty, garbage, the other kind's or a spent one. */
  async function ceremonyHeaderFor(next: () => number, kind: CeremonyKind, own: string | undefined, spent: string[]) {
    const pick = next();
    if (own !== undefined && pick < 0.8) return own;
    const choice = Math.floor(next() * 5);
    if (choice === 0) return undefined;
    if (choice === 1) return "";
    if (choice === 2) return String(randomValue(next));
    if (choice === 3) return (await genuineCeremony(kind === "login" ? "register" : "login")).ceremonyId;
    return spent[Math.floor(next() * spent.length)] ?? "spent";
  }

  /** The `:id` of a PUT: the user's passkey, an unknown id, or something that is no id at all. */
  function credentialIdFor(next: () => number): string {
    const choice = Math.floor(next() * 4);
    if (choice === 0) return session.passkeyId;
    if (choice === 1) return Buffer.alloc(32, Math.floor(next() * 256)).toString("base64url");
    if (choice === 2) {
      const value = String(randomValue(next));
      // A lone surrogate cannot be percent-encoded as UTF-8: send its WTF-8 bytes, which are no UTF-8.
      return value.includes("\uD800") ? "%ED%A0%80" : encodeURIComponent(value);
    }
    return String(randomBase64url(next));
  }

  /** The `:id` of a session or an administration route: another session or user, an unknown id, or no id at all. */
  function ownedIdFor(next: () => number, known: string): string {
    const choice = Math.floor(next() * 3);
    if (choice === 0) return known;
    if (choice === 1) return Buffer.alloc(16, Math.floor(next() * 256)).toString("base64url");
    // Never empty: `/auth/sessions/` is `DELETE /auth/sessions`, which would end the requests' own session.
    const value = String(randomValue(next)) || "-";
    return value.includes("\uD800") ? "%ED%A0%80" : encodeURIComponent(value);
  }

  /** The `:provider` of a request: the configured provider mostly, else an unknown name or no name at all. */
  function providerFor(next: () => number): string {
    if (next() < 0.8) return "corp";
    const value = String(randomValue(next)) || "-";
    return value.includes("\uD800") ? "%ED%A0%80" : encodeURIComponent(value);
  }

  /** A path parameter of the organization routes: the known value mostly, else an unknown one or no id at all. */
  function organizationParameterFor(next: () => number, known: string): string {
    return next() < 0.8 ? encodeURIComponent(known) : ownedIdFor(next, known);
  }

  /** The path of a request to a route, its `:id` filled by the kind of id the route takes. */
  function urlFor(next: () => number, path: string): string {
    if (path.includes(":orgId")) {
      return path
        .replace(":orgId", () => organizationParameterFor(next, organization.id))
        .replace(":userId", () => organizationParameterFor(next, session.victimId))
        .replace(":invitationId", () => organizationParameterFor(next, organization.invitationId))
        .replace(":domain", () => organizationParameterFor(next, "fuzz.example"))
        .replace(":id", () => ownedIdFor(next, apiKey.own));
    }
    if (path.includes(":provider")) return path.replace(":provider", () => providerFor(next));
    if (path.startsWith("/auth/api-keys/")) return path.replace(":id", () => ownedIdFor(next, apiKey.own));
    if (path.startsWith("/auth/admin/service-accounts/")) {
      return path
        .replace(":id", () => ownedIdFor(next, serviceAccount.id))
        .replace(":credentialId", () => ownedIdFor(next, serviceAccount.credentialId));
    }
    if (path.includes(":keyId")) {
      return path
        .replace(":id", () => encodeURIComponent(session.victimId))
        .replace(":keyId", () => ownedIdFor(next, apiKey.victims));
    }
    if (path.startsWith("/auth/sessions/")) return path.replace(":id", () => ownedIdFor(next, session.otherSessionId));
    if (path.startsWith("/auth/admin/users/")) return path.replace(":id", () => ownedIdFor(next, session.victimId));
    return path.replace(":id", () => credentialIdFor(next));
  }

  for (const route of bodyRoutes) {
    // A passkey ceremony's finish; the email sign-in's finish takes plain fields (its binding, code or token).
    const finish = route.path.endsWith("/finish") && !route.path.startsWith("/auth/email-sign-in/");
    const kind: CeremonyKind = route.path.includes("/login/")
      ? "login"
      : route.path.startsWith("/auth/register/public-key/")
        ? "signUp"
        : route.path.includes("/reauthenticate/")
          ? "reauthenticate"
          : route.path.includes("/enrolment/")
            ? "enrolment"
            : "register";
    // The enrolment routes take the temporary token of a 40105 answer: a live one most of the time.
    const enrolling = route.path.includes("/enrolment/");
    it(`HTTP-5: ${routeKey(route)} answers 300 random bodies with documented codes, never 500`, async () => {
      /** The server the OpenAPI drift check reads the auth of: the answers here come from handleRequest itself. */
      const inProcess: RunningServer = { baseUrl: "", host: "", port: 0, auth, close: async () => {} };
      const next = seeded(route.path.length * 7919);
      const fields = fieldsByRoute[routeKey(route)] ?? [];
      const wellFormedBody = wellFormedFor(routeKey(route));
      const seen = new Set<number>();
      const spent: string[] = [];
      const answers: RecordedExchange[] = [];
      for (let index = 0; index < 300; index += 1) {
        let body: Record<string, unknown> = {};
        let wellFormedUsed = false;
        const headers: Record<string, string> = { authorization: `Bearer ${session.accessToken}` };
        if (finish) {
          const genuine = next() < 0.6 ? await genuineCeremony(kind) : undefined;
          const response = genuine ? mutated(next, genuine.response) : randomCredential(next);
          // The enrolment's finish carries the response beside the temporary token; the others are the response.
          body = enrolling ? { response } : response;
          const ceremonyId = await ceremonyHeaderFor(next, kind, genuine?.ceremonyId, spent);
          if (ceremonyId !== undefined) headers["x-webauthn-ceremony"] = ceremonyId;
          if (genuine) spent.push(genuine.ceremonyId);
        } else if (wellFormedBody !== undefined && next() < 0.1) {
          body = await wellFormedBody(index);
          wellFormedUsed = true;
        } else {
          for (const field of fields) if (next() < 0.85) body[field] = randomValue(next);
        }
        // The enrolment routes' token: a live one 7 times in 10, else the random one (or none) the body has.
        if (enrolling && !wellFormedUsed) {
          const pick = next();
          if (pick < 0.7) body.tempToken = await enrolmentToken();
          else if (finish && pick < 0.9) body.tempToken = randomValue(next);
        }
        if (next() < 0.2) body[`extra${index}`] = randomValue(next);
        // Only proper strings reach argon2; keep the hashing count, and so the run time, small.
        const hashes = [
          "/auth/login",
          "/auth/register",
          "/auth/public-key/register/begin",
          "/auth/sessions/end-others",
          "/auth/sessions/:id",
          "/auth/admin/users",
          "/auth/admin/users/:id",
          "/auth/admin/users/:id/totp",
          "/auth/admin/sessions",
          "/auth/orgs/:orgId",
          "/auth/orgs/:orgId/members/:userId",
          "/auth/admin/orgs/:orgId",
          "/auth/api-keys",
          "/auth/admin/users/:id/api-keys/:keyId",
          "/auth/admin/service-accounts",
          "/auth/admin/service-accounts/:id",
          "/auth/admin/service-accounts/:id/secrets",
          "/auth/admin/service-accounts/:id/keys",
          "/auth/admin/service-accounts/:id/credentials/:credentialId",
          "/auth/admin/users/:id/impersonate",
        ].includes(route.path);
        if (hashes && typeof body.password === "string" && next() < 0.9) body.password = 42;
        if (typeof body.currentPassword === "string" && next() < 0.9) body.currentPassword = 42;
        if (typeof body.oldPassword === "string" && next() < 0.9) body.oldPassword = 42;
        const url = urlFor(next, route.path);
        const form = route.body === "form";
        if (form) {
          delete headers.authorization;
          Object.assign(headers, tokenEndpointHeaders(next, wellFormedUsed));
        }
        const text = form ? formBodyOf(next, body) : JSON.stringify(body);
        const response = (await handleRequest(auth, request(route.method, url, text, headers))) as HttpResponse;
        const envelope = JSON.parse(response.body) as {
          code: number;
          message: string;
          data?: { ok?: boolean; category?: string };
          error?: unknown;
        };
        const replay = `${route.method} ${url} ${JSON.stringify(headers)} ${text} → ${response.body}`;
        const result = { status: response.status, headers: new Headers(response.headers), text: response.body, body: envelope };
        answers.push({ server: inProcess, method: route.method, target: `/api/v1${url}`, result });
        // The token endpoint answers RFC 6749's JSON: its token with 200, or { error, error_description } with a 4xx.
        if (form) expect(response.status === 200 || oauthErrors.has(String(envelope.error)), replay).toBe(true);
        else expect(documentedCodes.has(envelope.code), replay).toBe(true);
        expect(response.status, replay).toBeLessThan(500);
        expect(response.body).not.toMatch(/\bstack\b|Error:|\.ts:\d/);
        if (form) expect(response.body).not.toContain(serviceAccount.clientSecret);
        seen.add(form ? (response.status === 200 ? 0 : response.status) : envelope.code);
        // An enrolment that succeeded spent its token and gave the user a second factor: undo it, so the next is 40105 again.
        if (enrolling && envelope.code === 0 && (route.path.endsWith("/enable") || finish)) await undoEnrolment();
        // Ending every session ended the requests' own too: sign in again, so the next request is judged signed in.
        if (route.path === "/auth/admin/sessions" && envelope.code === 0) Object.assign(session, await signIn());
        // A re-authentication ended the requests' session and answered a new one's tokens (STUP-2, ASVS 7.2.4): go on with those.
        const renewed = (envelope.data as { refreshToken?: unknown; accessToken?: unknown } | undefined) ?? {};
        // An impersonation's tokens are the victim's session, a passkey sign-up's a new account's, not the requests' own: they are not taken up.
        const otherAccount =
          route.path === "/auth/admin/users/:id/impersonate" || route.path === "/auth/register/public-key/finish";
        if (
          envelope.code === 0 &&
          !otherAccount &&
          typeof renewed.refreshToken === "string" &&
          typeof renewed.accessToken === "string"
        ) {
          Object.assign(session, { accessToken: renewed.accessToken, sessionId: sessionOf(renewed.accessToken) });
        }
        // The test route answers a policy it cannot try with code 0 and a category, never a 4xx.
        if (route.path === "/auth/directory/policy/test" && envelope.code === 0) {
          expect(envelope.data, replay).toMatchObject({ ok: false, category: "configuration" });
        }
      }
      // Every answer is one the OpenAPI document gives this route: its status, its code, its data.
      expect(checkRecordedExchanges(answers).problems.slice(0, 5)).toEqual([]);
      // Routes that read fields must have refused some of the inputs; setup reads none.
      if (fields.length > 0 && route.path !== "/auth/directory/policy/test")
        expect([...seen].some((code) => code !== 0)).toBe(true);
      // The finish routes were reached through every check: the header, the shape, the signature.
      if (finish) expect([...seen]).toEqual(expect.arrayContaining([0, 40002, 40100]));
      // The rename reached its own passkey, unknown ids and bad labels.
      if (route.method === "PUT" && route.path === "/auth/public-key/credentials/:id") {
        expect([...seen]).toEqual(expect.arrayContaining([0, 40400, 42200]));
      }
      // The well-formed bodies and ids reached the route's success, and unknown ids its 40400.
      if (wellFormedBody !== undefined) expect([...seen]).toContain(0);
      // The enrolment routes were reached with live tokens and with refused ones (STUP-4).
      if (enrolling) expect([...seen]).toEqual(expect.arrayContaining([0, 40100]));
      // Incident response ended every session, the requests' own included, and refused bad proofs (STUP-6).
      if (route.path === "/auth/admin/sessions") expect([...seen]).toEqual(expect.arrayContaining([0, 40002, 40100]));
      // The re-authentication through a provider reached its link, its return path and its provider checks (STUP-5).
      if (route.path === "/auth/oauth/:provider/reauthenticate") {
        expect([...seen]).toEqual(expect.arrayContaining([0, 40002, 40400, 40900]));
      }
      // The organization routes reached the organization, and unknown ids its 40400 (OR-2).
      if (route.path.includes(":orgId")) expect([...seen]).toEqual(expect.arrayContaining([40400]));
      if (route.path.includes(":id") && route.path !== "/auth/admin/users/:id/totp")
        expect([...seen]).toEqual(expect.arrayContaining([0, 40400]));
    });
  }
});
