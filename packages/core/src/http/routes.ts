import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { login } from "../flows/login.js";
import { logout } from "../flows/logout.js";
import { getPublicUser } from "../flows/manage-users.js";
import type { ReauthenticationProof } from "../flows/reauthenticate.js";
import { refresh } from "../flows/refresh.js";
import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "../flows/totp-enrolment.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import type { AccessContext } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";

/** What a route handler receives. */
export interface RouteContext {
  auth: Auth;
  /** The JSON body of a POST, checked by `readJsonBody`; `{}` for other methods. */
  body: Record<string, unknown>;
  /** The client address, resolved through the trusted-proxy setting (RL-3). */
  ip: string | undefined;
  /** Set on `bearer` routes: who the access token speaks for. */
  access: AccessContext | undefined;
}

/** What a route handler returns: the envelope's `data`, and its code when it is not 0. */
export interface RouteResult {
  data: unknown;
  code?: 0 | typeof ErrorCode.SecondFactorRequired;
  /** Send `data` itself as the body, not in the envelope: for standard documents (a JWK Set). */
  bare?: { cacheControl: string };
}

/** One entry of the route table. */
export interface Route {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Under the base path (`/auth/login`), or absolute when `atRoot` (`/.well-known/jwks.json`). */
  path: string;
  atRoot?: boolean;
  /** `bearer` routes need a live access token (AT-6: from the Authorization header only). */
  access: "public" | "bearer";
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
      return result.status === "authenticated"
        ? { data: result.tokens }
        : { code: ErrorCode.SecondFactorRequired, data: { tempToken: result.tempToken } };
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
