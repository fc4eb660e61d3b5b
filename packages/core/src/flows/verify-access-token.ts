import type { Auth } from "../auth.js";
import { setBounded } from "../bounded-cache.js";
import { reportCheckFailure } from "../diagnostics/check-failures.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { findTokenState } from "../storage/token-state.js";
import type { TokenState } from "../storage/types.js";
import { type AccessContext, type AccessTokenClaims, ClaimMismatch, verifyAccessTokenClaims } from "../tokens/access-token.js";
import { accessUserFields } from "../user-fields/views.js";
import { requiredString } from "./input.js";

export type { AccessContext } from "../tokens/access-token.js";

/** The input of {@link verifyAccessToken}. */
export interface VerifyAccessTokenInput {
  /** The access token, without the `Bearer ` prefix. */
  token: string;
}

const invalidToken = () => new AuthError(ErrorCode.InvalidToken);

/**
 * Verifies an access token: signature with a pinned algorithm and a configured `kid`, exact
 * `typ`, `iss` and `aud`, and `exp` (AT-1 … AT-4); then that the user's token version is still
 * the token's and its session is live (TV-2). That last check reads storage, or a per-session
 * cache for at most `tokenStateCacheSeconds` (default 0: every request) and never past the
 * session's end; a revocation made here, or heard on the `revocationChannel`, drops it at once.
 *
 * A token verified before and not yet at its `exp` skips the signature and claim checks: what
 * they found is kept by the exact token text (`verifiedTokenCacheSize`). The state check runs
 * all the same.
 *
 * @throws {AuthError} 40101 for any token that is not a live Portcullis access token.
 * @example
 * ```ts
 * const { userId, roles } = await verifyAccessToken(auth, { token });
 * ```
 */
export function verifyAccessToken(auth: Auth, input: VerifyAccessTokenInput): Promise<AccessContext> {
  try {
    const token = requiredString(input.token, "token");
    const now = auth.now();
    const known = auth.verifiedTokens.get(token, now);
    if (known !== undefined) return withCurrentState(auth, known, now);
    return verifyAndRemember(auth, token, now).then((access) => withCurrentState(auth, access, now));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `access` (a verified token's) once its user's token version and its session are found current
 * (TV-2), else 40101. A plain function over the state check's own promise, with no async layer
 * of its own: it runs on every protected request. Not exported from the package.
 */
export function withCurrentState(auth: Auth, access: AccessContext, now: number): Promise<AccessContext> {
  const current = tokenStateIsCurrent(auth, access.claims, now);
  if (current === true) return Promise.resolve(access);
  return current.then((isCurrent) => {
    if (!isCurrent) throw invalidToken();
    return access;
  });
}

async function verifyAndRemember(auth: Auth, token: string, now: number): Promise<AccessContext> {
  let claims: AccessTokenClaims;
  try {
    claims = await verifyAccessTokenClaims(token, {
      keys: auth.keys,
      issuer: auth.config.issuer,
      audience: auth.config.audience,
      now,
      clockToleranceSeconds: auth.config.clockToleranceSeconds,
    });
  } catch (error) {
    const mismatch = (error as { cause?: unknown }).cause;
    if (mismatch instanceof ClaimMismatch) {
      reportCheckFailure(auth, { check: mismatch.check, expected: [mismatch.expected], received: mismatch.received });
    }
    throw error;
  }
  Object.freeze(claims.roles);
  Object.freeze(claims.amr);
  if (claims.org_roles !== undefined) Object.freeze(claims.org_roles);
  if (claims.act !== undefined) Object.freeze(claims.act);
  if (typeof claims.fields === "object" && claims.fields !== null) deepFreeze(claims.fields);
  Object.freeze(claims);
  const user = deepFreeze({ ...accessUserFields(auth, claims.fields), id: claims.sub, roles: claims.roles });
  const access: AccessContext = Object.freeze({
    kind: "access_token",
    userId: claims.sub,
    // The claim's fields are the declared inToken ones, defaults filled in: what the registered type says.
    user: user as unknown as AccessContext["user"],
    sessionId: claims.sid,
    roles: claims.roles,
    amr: claims.amr,
    authTime: claims.auth_time ?? 0,
    tokenVersion: claims.tv,
    org: claims.org === undefined ? null : Object.freeze({ id: claims.org, roles: claims.org_roles as readonly string[] }),
    actor: claims.act === undefined ? null : Object.freeze({ userId: claims.act.sub }),
    claims,
  });
  auth.verifiedTokens.remember(token, access, claims.exp * 1000, now);
  return access;
}

/**
 * The organization and roles a token carries as one comparable string (roles in any order), or
 * undefined for none: what the state check matches against the session's active organization and
 * the member's current roles (OR-7).
 */
function orgKeyOf(org: string | null | undefined, roles: readonly string[] | null | undefined): string | undefined {
  if (org === undefined || org === null || roles === undefined || roles === null) return undefined;
  return JSON.stringify([org, [...roles].sort()]);
}

/** The organization a token of the session must carry now: its active one while the user is a member, else none. */
function currentOrgKeyOf(state: TokenState): string | undefined {
  return orgKeyOf(state.session.activeOrgId, state.orgRoles);
}

/** Freezes an object of claims and the arrays and objects in it, so no handler changes what the next request sees. */
function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (typeof inner === "object" && inner !== null) deepFreeze(inner);
  return Object.freeze(value);
}

const tokenStateCacheLimit = 10_000;

/** True at once from the token-state cache; otherwise what storage says, and the cache keeps it. */
function tokenStateIsCurrent(auth: Auth, claims: Readonly<AccessTokenClaims>, now: number): true | Promise<boolean> {
  const cacheMs = auth.config.tokenStateCacheSeconds * 1000;
  const cached = auth.tokenStateCache.get(claims.sid);
  const age = cached ? now - cached.checkedAt : Number.NaN;
  if (
    cached &&
    cached.userId === claims.sub &&
    cached.tokenVersion === claims.tv &&
    cached.org === orgKeyOf(claims.org, claims.org_roles) &&
    age >= 0 &&
    age < cacheMs
  ) {
    if (now < cached.sessionExpiresAt) return true;
  }
  const generation = auth.revocations.generation;
  return findTokenState(auth.storage, claims.sid, claims.sub).then((state) =>
    stateIsCurrent(auth, claims, now, generation, state),
  );
}

function stateIsCurrent(
  auth: Auth,
  claims: Readonly<AccessTokenClaims>,
  now: number,
  generation: number,
  state: TokenState | null,
): boolean {
  if (state === null) return false;
  const { session, user } = state;
  const org = orgKeyOf(claims.org, claims.org_roles);
  const current =
    user !== null &&
    !user.disabled &&
    user.tokenVersion === claims.tv &&
    session.userId === claims.sub &&
    session.revokedAt === null &&
    session.expiresAt > now &&
    org === currentOrgKeyOf(state);
  if (current && auth.config.tokenStateCacheSeconds > 0 && auth.revocations.generation === generation) {
    const entry = { userId: claims.sub, tokenVersion: claims.tv, org, checkedAt: now, sessionExpiresAt: session.expiresAt };
    setBounded(auth.tokenStateCache, claims.sid, entry, tokenStateCacheLimit);
  }
  return current;
}
