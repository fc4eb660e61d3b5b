import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { directoryRolesAtRefresh, sameRoles } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { RevocationReason } from "../events/types.js";
import type { SessionRecord, UserRecord } from "../storage/types.js";
import { type TokenSet, issueTokens } from "../tokens/issue-tokens.js";
import { sessionUseOf } from "../users/session-use.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { requiredString } from "./input.js";

/** The input of {@link refresh}. */
export interface RefreshInput {
  refreshToken: string;
  ip?: string;
  /** The request's `User-Agent`: the session records it, with the address and the time, as where it was last used. */
  userAgent?: string;
}

const invalidToken = () => new AuthError(ErrorCode.InvalidToken);

/**
 * Exchanges a refresh token for a new access token and a new refresh token
 * (`POST /auth/refresh`). The presented token is spent by one atomic write, so of N parallel
 * refreshes exactly one succeeds (RT-3); there is no grace window. A token presented after it
 * was spent is reuse: the whole session is revoked, its newest token included, and
 * `refresh_token.reused` is emitted (RT-2). Refresh never moves the session's absolute expiry
 * (RT-4), and a session whose user changed token version, or was disabled, ends (TV-2). The
 * session is read before the spend: of N concurrent refreshes exactly one answers with tokens,
 * even when a loser's reuse detection revokes the session meanwhile (those tokens then die with it).
 *
 * A directory user's groups are read again first, when the policy's `refreshMapping` says so
 * (LDAP-5): the new access token carries the roles they map to now, and a user gone from the
 * directory or from every mapped group (with no fallback role) loses the session, and every
 * other, through a raised token version; changed roles raise it too, ending the other sessions'
 * tokens with the old roles while this session carries on with the new ones. The directory is read before the token is spent, so a
 * directory that is down leaves the refresh token usable.
 *
 * The session records the time, the `User-Agent` and the address of the refresh as where it was
 * last used (`lastUsedAt`, shown in the sessions list); access-token checks never write.
 *
 * @throws {AuthError} 40101 for any invalid, expired, spent or revoked token, 50300 the directory is unavailable.
 * @example
 * ```ts
 * const { accessToken, refreshToken } = await refresh(auth, { refreshToken: stored });
 * ```
 */
export async function refresh(auth: Auth, input: RefreshInput): Promise<TokenSet> {
  const presented = requiredString(input.refreshToken, "refreshToken");
  const now = auth.now();
  const hash = sha256(presented);
  const before = await readBeforeSpending(auth, hash, now);
  const result = await auth.storage.sessions.spendRefreshToken(hash, now);
  if (result.outcome === "unknown") throw invalidToken();
  const { sessionId, userId } = result.token;
  if (result.outcome === "already_spent") {
    auth.emit({ type: "refresh_token.reused", userId, sessionId, at: now, ip: input.ip });
    await revokeSession(auth, userId, sessionId, "refresh_token_reused");
    throw invalidToken();
  }
  // Expired (or its session gone) when read before the spend: refused, the spend having made a later reuse visible.
  if (!before?.session) throw invalidToken();
  const { session } = before;
  if (session.revokedAt !== null || session.expiresAt <= now || session.userId !== userId) throw invalidToken();
  let user = await auth.storage.users.findById(userId);
  if (!user || user.disabled || user.tokenVersion !== session.tokenVersion) {
    await revokeSession(auth, userId, sessionId, user?.disabled ? "user_disabled" : "token_version_changed");
    throw invalidToken();
  }
  if (user.source === "directory") {
    const roles = before.directoryRoles === undefined ? await directoryRolesAtRefresh(auth, user) : before.directoryRoles;
    if (roles === null) {
      await revokeSession(auth, userId, sessionId, "directory_access_lost");
      await raiseTokenVersion(auth, userId, "directory_access_lost");
      throw invalidToken();
    }
    if (!sameRoles(roles, user.roles)) user = await carryOnWithRoles(auth, user, session.id, roles);
  }
  const tokens = await issueTokens(auth, user, session);
  await auth.storage.sessions.recordUse(sessionId, now, sessionUseOf(auth, input));
  auth.emit({ type: "token.refreshed", userId, sessionId, at: now, ip: input.ip });
  return tokens;
}

/**
 * Gives a directory user the roles the directory maps to now and raises the token version (TV-1),
 * so every other token with the old roles is refused; the session being refreshed moves to the
 * new version and carries on.
 */
async function carryOnWithRoles(auth: Auth, user: UserRecord, sessionId: string, roles: string[]): Promise<UserRecord> {
  const updated = (await auth.storage.users.update(user.id, { roles }, auth.now())) ?? user;
  const tokenVersion = await raiseTokenVersion(auth, user.id, "roles_changed");
  await auth.storage.sessions.setTokenVersion(sessionId, tokenVersion);
  return { ...updated, tokenVersion };
}

/**
 * What a refresh reads before it spends its token, so that what it decides cannot be changed by a
 * concurrent request: the token's session (a concurrent reuse of the same token revoking it after
 * the spend must not fail the one that spent it: exactly one succeeds, RT-3, and the tokens it
 * mints die with the session, RT-2), and a directory user's roles as the directory maps them now
 * (see {@link directoryRolesAtRefresh}; a directory that is down then leaves the token unspent).
 * Null for a token that is unknown, spent or expired: the spend decides those.
 */
async function readBeforeSpending(
  auth: Auth,
  hash: string,
  now: number,
): Promise<{ session: SessionRecord | null; directoryRoles: string[] | null | undefined } | null> {
  const token = await auth.storage.sessions.findRefreshToken(hash);
  if (!token || token.spentAt !== null || token.expiresAt <= now) return null;
  const session = await auth.storage.sessions.findSession(token.sessionId);
  if (auth.directory === null) return { session, directoryRoles: undefined };
  const user = await auth.storage.users.findById(token.userId);
  return { session, directoryRoles: user?.source === "directory" ? await directoryRolesAtRefresh(auth, user) : undefined };
}

/** Revokes one session and reports it; a session already revoked is left as it is. Returns whether this call revoked it. */
export async function revokeSession(auth: Auth, userId: string, sessionId: string, reason: RevocationReason): Promise<boolean> {
  const now = auth.now();
  auth.tokenStateCache.delete(sessionId);
  const revoked = await auth.storage.sessions.revokeSession(sessionId, now);
  if (revoked) auth.emit({ type: "session.revoked", userId, sessionId, reason, at: now });
  return revoked;
}
