import type { Auth } from "../auth.js";
import { setBounded } from "../bounded-cache.js";
import { randomId } from "../crypto/ids.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ServiceAccountRecord } from "../storage/types.js";
import { hasCommonClaims, verifyTokenClaims } from "../tokens/access-token.js";
import { type VerifiedTokenCache, createVerifiedTokenCache } from "../tokens/verified-tokens.js";

/**
 * The claims of a service account's access token (SA-4): RFC 9068's `client_id` and `scope`, the
 * account's `roles` and token version, and no `sid`, `amr` or `auth_time`: no person signed in, so
 * it never passes for a person's access token, nor one for it.
 */
export interface ServiceTokenClaims {
  iss: string;
  aud: string;
  /** The service account's id. */
  sub: string;
  /** The service account's id again, as RFC 9068 names the client. */
  client_id: string;
  iat: number;
  exp: number;
  jti: string;
  /** The account's token version when the token was minted. */
  tv: number;
  roles: string[];
  /** The granted scopes, space-separated (RFC 6749 §3.3); empty for none. */
  scope: string;
  nbf?: number;
}

/**
 * Who a verified service-account token speaks for: what `requireAuth` puts on the request for
 * one, on routes that accept service accounts (`credentials` naming `"service_account"`). Frozen.
 */
export interface ServiceAccountContext {
  readonly kind: "service_account";
  readonly serviceAccountId: string;
  /** The account's roles when the token was minted (a change raises its token version, ending the token). */
  readonly roles: readonly string[];
  /** The token's scopes: `requireAuth`'s `scopes` option reads them. */
  readonly scopes: readonly string[];
  readonly tokenVersion: number;
  readonly claims: Readonly<ServiceTokenClaims>;
}

/** Signs a service account's access token for `scopes`, valid for `serviceAccounts.tokenTtl`. */
export async function signServiceToken(
  auth: Auth,
  account: ServiceAccountRecord,
  scopes: readonly string[],
): Promise<{ token: string; expiresIn: number }> {
  const iat = Math.floor(auth.now() / 1000);
  const expiresIn = auth.config.serviceAccounts.tokenTtlSeconds;
  const claims: ServiceTokenClaims = {
    iss: auth.config.issuer,
    aud: auth.config.audience,
    sub: account.id,
    client_id: account.id,
    iat,
    exp: iat + expiresIn,
    jti: randomId(auth),
    tv: account.tokenVersion,
    roles: [...account.roles],
    scope: scopes.join(" "),
  };
  return { token: await auth.keys.signing.sign(claims), expiresIn };
}

function isServiceTokenClaims(payload: unknown): payload is ServiceTokenClaims {
  const claims = payload as Partial<ServiceTokenClaims> & { sid?: unknown };
  return (
    hasCommonClaims(payload) && claims.sid === undefined && claims.client_id === claims.sub && typeof claims.scope === "string"
  );
}

/**
 * Whether a bearer value reads as a service account's token (a JWT whose payload has `client_id`
 * and no `sid`), read without trusting it: which check to run. The check itself decides.
 */
export function looksLikeServiceToken(token: string): boolean {
  const first = token.indexOf(".");
  const second = token.indexOf(".", first + 1);
  if (first === -1 || second === -1) return false;
  try {
    const payload = JSON.parse(Buffer.from(token.slice(first + 1, second), "base64url").toString("utf8")) as unknown;
    return (
      typeof payload === "object" &&
      payload !== null &&
      typeof (payload as { client_id?: unknown }).client_id === "string" &&
      (payload as { sid?: unknown }).sid === undefined
    );
  } catch {
    return false;
  }
}

const invalidToken = () => new AuthError(ErrorCode.InvalidToken);
const cacheLimit = 10_000;

/** Per instance: the service tokens verified (by their text), and each account's checked state while cached. */
const instances = new WeakMap<Auth, { verified: VerifiedTokenCache<ServiceAccountContext> }>();
function verifiedOf(auth: Auth): VerifiedTokenCache<ServiceAccountContext> {
  let state = instances.get(auth);
  if (state === undefined) {
    state = { verified: createVerifiedTokenCache(auth.config.verifiedTokenCacheSize) };
    instances.set(auth, state);
  }
  return state.verified;
}

/** The id a service account's checked state is cached and revoked under, beside the sessions'. */
export const serviceAccountCacheId = (id: string): string => `service:${id}`;

/**
 * Verifies a service account's access token (SA-4): signature and claims as a person's token's
 * (AT-1 … AT-4), the service-account shape, then that the account exists, is enabled and is at the
 * token's version: one read, or none while `tokenStateCacheSeconds` keeps the answer (dropped at
 * once by a change here or on the revocation channel).
 *
 * @throws {AuthError} 40101 for any token that is not a live service-account token.
 */
export async function verifyServiceToken(auth: Auth, token: string): Promise<ServiceAccountContext> {
  const now = auth.now();
  const verified = verifiedOf(auth);
  let context = verified.get(token, now);
  if (context === undefined) {
    const claims = await verifyTokenClaims(
      token,
      {
        keys: auth.keys,
        issuer: auth.config.issuer,
        audience: auth.config.audience,
        now,
        clockToleranceSeconds: auth.config.clockToleranceSeconds,
      },
      isServiceTokenClaims,
    );
    Object.freeze(claims.roles);
    context = Object.freeze({
      kind: "service_account",
      serviceAccountId: claims.sub,
      roles: claims.roles,
      scopes: Object.freeze(claims.scope === "" ? [] : claims.scope.split(" ")),
      tokenVersion: claims.tv,
      claims: Object.freeze(claims),
    } satisfies ServiceAccountContext);
    verified.remember(token, context, claims.exp * 1000, now);
  }
  if (!auth.config.serviceAccounts.enabled || !(await accountIsCurrent(auth, context, now))) throw invalidToken();
  return context;
}

async function accountIsCurrent(auth: Auth, context: ServiceAccountContext, now: number): Promise<boolean> {
  const cacheMs = auth.config.tokenStateCacheSeconds * 1000;
  const cacheId = serviceAccountCacheId(context.serviceAccountId);
  const cached = auth.tokenStateCache.get(cacheId);
  const age = cached === undefined ? Number.NaN : now - cached.checkedAt;
  if (cached !== undefined && cached.tokenVersion === context.tokenVersion && age >= 0 && age < cacheMs) return true;
  const generation = auth.revocations.generation;
  const account = await auth.storage.serviceAccounts?.findServiceAccount(context.serviceAccountId);
  const current = account != null && !account.disabled && account.tokenVersion === context.tokenVersion;
  if (current && cacheMs > 0 && auth.revocations.generation === generation) {
    const entry = {
      userId: cacheId,
      tokenVersion: account.tokenVersion,
      org: undefined,
      checkedAt: now,
      sessionExpiresAt: Number.POSITIVE_INFINITY,
    };
    setBounded(auth.tokenStateCache, cacheId, entry, cacheLimit);
  }
  return current;
}
