import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
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
import { ceremonyHeader } from "../webauthn/ceremony.js";

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
  /** A `Set-Cookie` header value to send with the answer. */
  cookie?: string;
  /** Answer with a 302 to this URL instead of the envelope. */
  redirectTo?: string;
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
  handle(context: RouteContext): Promise<RouteResult>;
}

const signedIn = (context: RouteContext): string => (context.access as AccessContext).userId;

/** The re-authentication a bearer route offers: the token's session, and a password from the body. */
const reauthentication = (context: RouteContext): ReauthenticationProof => ({
  sessionId: (context.access as AccessContext).sessionId,
  password: context.body.password as string | undefined,
});

/** The answer of a route that completes a login: tokens, or 40102 with a temporary token. */
const loginResponse = (result: LoginResult): RouteResult =>
  result.status === "authenticated"
    ? { data: result.tokens }
    : { code: ErrorCode.SecondFactorRequired, data: { tempToken: result.tempToken } };

const passkeysEnabled = (auth: Auth) => auth.config.passkeys !== null;

/** The body limit of a directory policy: room for a `caBundle` of up to 256 KiB. */
const directoryPolicyBodyLimit = 512 * 1024;

/** The body limit of the WebAuthn finish routes (contract: 1 MiB). */
const webauthnBodyLimit = 1024 * 1024;

/**
 * The HTTP surface of Portcullis (`contract.md`): every route, once, for every adapter. The
 * adapters only translate requests and responses; no auth rule lives in them.
 */
export const routes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/login",
    access: "public",
    async handle({ auth, body, ip }) {
      const result = await login(auth, {
        username: body.username as string,
        password: body.password as string,
        provider: body.provider as string,
        ip,
      });
      return loginResponse(result);
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/verify",
    access: "public",
    async handle({ auth, body, ip }) {
      return { data: await verifyTotp(auth, { tempToken: body.tempToken as string, code: body.code as string, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/recovery",
    access: "public",
    async handle({ auth, body, ip }) {
      return {
        data: await useRecoveryCode(auth, { tempToken: body.tempToken as string, recoveryCode: body.recoveryCode as string, ip }),
      };
    },
  },
  {
    method: "POST",
    path: "/auth/refresh",
    access: "public",
    async handle({ auth, body, ip }) {
      return { data: await refresh(auth, { refreshToken: body.refreshToken as string, ip }) };
    },
  },
  {
    method: "POST",
    path: "/auth/logout",
    access: "public",
    async handle({ auth, body }) {
      await logout(auth, { refreshToken: body.refreshToken as string });
      return { data: {} };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/setup",
    access: "bearer",
    async handle(context) {
      return { data: await beginTotpSetup(context.auth, { ...reauthentication(context), userId: signedIn(context) }) };
    },
  },
  {
    method: "POST",
    path: "/auth/2fa/enable",
    access: "bearer",
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
    async handle({ auth }) {
      return { data: { enabled: passkeysEnabled(auth) } };
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/login/begin",
    access: "public",
    enabled: passkeysEnabled,
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
    async handle({ auth, body, header, ip }) {
      return loginResponse(await webauthnFinish(auth, { ceremonyId: header(ceremonyHeader) as string, response: body, ip }));
    },
  },
  {
    method: "POST",
    path: "/auth/public-key/register/begin",
    access: "bearer",
    enabled: passkeysEnabled,
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
    async handle(context) {
      return { data: await listPasskeys(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "PUT",
    path: "/auth/public-key/credentials/:id",
    access: "bearer",
    enabled: passkeysEnabled,
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
    async handle(context) {
      await revokePasskey(context.auth, { userId: signedIn(context), id: context.params.id as string });
      return { data: { revoked: true } };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/providers",
    access: "public",
    async handle({ auth }) {
      return { data: oauthProviders(auth) };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/authorize",
    access: "public",
    async handle({ auth, params, query, secure }) {
      const search = new URLSearchParams(query);
      const redirect = search.get("redirect") ?? undefined;
      const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: params.provider as string, redirect });
      const cookie = bindingCookie(auth, browserBinding, secure, 600);
      return search.get("mode") === "redirect" ? { data: null, redirectTo: authUrl, cookie } : { data: { authUrl }, cookie };
    },
  },
  {
    method: "GET",
    path: "/auth/oauth/:provider/callback",
    access: "public",
    async handle({ auth, params, query, header, secure, ip }) {
      const browserBinding = bindingFrom(header("cookie"));
      const result = await oauthCallback(auth, { provider: params.provider as string, query, browserBinding, ip });
      const answer = loginResponse(result);
      return {
        ...answer,
        data: { ...(answer.data as object), returnPath: result.returnPath },
        cookie: bindingCookie(auth, "", secure, 0),
      };
    },
  },
  {
    method: "GET",
    path: "/auth/directory/policy",
    access: "admin",
    async handle({ auth }) {
      return { data: await getDirectoryPolicy(auth) };
    },
  },
  {
    method: "PUT",
    path: "/auth/directory/policy",
    access: "admin",
    bodyLimit: directoryPolicyBodyLimit,
    async handle({ auth, body }) {
      return { data: await saveDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/test",
    access: "admin",
    bodyLimit: directoryPolicyBodyLimit,
    async handle({ auth, body }) {
      return { data: await testDirectoryPolicy(auth, body) };
    },
  },
  {
    method: "POST",
    path: "/auth/directory/policy/preview",
    access: "admin",
    async handle({ auth, body }) {
      return { data: await previewDirectoryUser(auth, { username: body.username as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/me",
    access: "bearer",
    async handle(context) {
      return { data: await getPublicUser(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "GET",
    path: "/.well-known/jwks.json",
    atRoot: true,
    access: "public",
    async handle({ auth }) {
      if (!auth.keys.jwks) throw new AuthError(ErrorCode.NotFound, "Tokens are signed with a shared secret; there is no key set");
      return { data: auth.keys.jwks, bare: { cacheControl: "public, max-age=300" } };
    },
  },
];
