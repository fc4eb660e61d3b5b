import type { Auth } from "../auth.js";
import { directoryRolesAtRefresh, sameRoles } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { endUnlessImpersonatorStands } from "../impersonation/impersonate.js";
import { signInStepOf } from "../required-factor/requirement.js";
import { mayRefresh } from "../storage/refresh-rotation.js";
import type { SessionRecord, UserRecord } from "../storage/types.js";
import { type TokenSet, rotatedTokenSet } from "../tokens/issue-tokens.js";
import { type PresentedRefreshToken, nextRefreshToken, readRefreshToken, relationToCurrent } from "../tokens/refresh-token.js";
import { sessionUseOf } from "../users/session-use.js";
import { revokeSession } from "../users/sessions.js";
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
 * (`POST /auth/refresh`). The token names its session, and the exchange is one conditional write
 * of that session (`rotateRefresh`: one UPDATE by primary key on SQL), which takes the new token
 * only while the session holds the presented one, so of N parallel refreshes exactly one
 * succeeds (RT-3). A token the session no longer holds but that this service issued for it (an
 * earlier generation, traced along the chain of replacements: each token's secret is the HMAC of the one it replaced) is reuse: the whole
 * session is revoked, its newest token included, and `refresh_token.reused` is emitted (RT-2).
 * With `refreshReuseInterval`, the token replaced last is answered instead, within that many
 * seconds of its replacement, with the session's current refresh token and a new access token
 * (two tabs that refresh at once), still with the event. Refresh never moves the session's
 * absolute expiry (RT-4), and a session whose user changed token version, or was disabled, ends
 * (TV-2).
 *
 * A directory user's groups are read again first, when the policy's `refreshMapping` says so
 * (LDAP-5): the new access token carries the roles they map to now, and a user gone from the
 * directory or from every mapped group (with no fallback role) loses the session, and every
 * other, through a raised token version; changed roles raise it too, ending the other sessions'
 * tokens with the old roles while this session carries on with the new ones. The directory is read before the token is spent, so a
 * directory that is down leaves the refresh token usable.
 *
 * A user the operator's `secondFactor.required` names who has no second factor (a session begun
 * before the requirement, or before the factor was turned off) loses the session: the next
 * sign-in asks to enrol one (40105; STUP-4). A session of a user who has one carries on.
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
  const token = await readRefreshToken(auth, presented);
  if (token === null) throw invalidToken();
  if (token.spentBeforeUpgrade) return reused(auth, await auth.storage.sessions.findSession(token.sessionId), input, now);
  const directoryRoles = auth.directory === null ? undefined : await directoryRolesBeforeSpending(auth, token, now);
  const next = nextRefreshToken(auth, token);
  const rotation = await auth.storage.sessions.rotateRefresh({
    sessionId: token.sessionId,
    hash: token.hash,
    now,
    nextHash: next.hash,
    nextGeneration: next.generation,
    idleMs: auth.config.ttl.refreshIdle * 1000,
    use: sessionUseOf(auth, input),
  });
  if (rotation.outcome === "refused") return notRotated(auth, token, input, now);
  const { session, totpEnabled } = rotation;
  let { user } = rotation;
  const { sessionId } = token;
  const userId = user.id;
  if (user.source === "directory") {
    const roles = directoryRoles === undefined ? await directoryRolesAtRefresh(auth, user) : directoryRoles;
    if (roles === null) {
      await revokeSession(auth, userId, sessionId, "directory_access_lost");
      await raiseTokenVersion(auth, userId, "directory_access_lost");
      throw invalidToken();
    }
    if (!sameRoles(roles, user.roles)) user = await carryOnWithRoles(auth, user, session.id, roles);
  }
  await endUnlessSecondFactorStands(auth, user, session, totpEnabled);
  await endUnlessImpersonatorStands(auth, session);
  const tokens = await rotatedTokenSet(auth, user, session, next.value, totpEnabled);
  auth.emit({ type: "token.refreshed", userId, sessionId, at: now, ip: input.ip });
  return tokens;
}

/**
 * A refresh whose write was refused: the session is read to say why. Holding the token still, the
 * session or its user may not refresh (ended as {@link endRefusedSession} says); holding another,
 * the token is the one replaced last within `refreshReuseInterval` (answered with the current
 * one), an earlier one (reuse: RT-2), or none it ever held (refused, the session untouched).
 */
async function notRotated(auth: Auth, token: PresentedRefreshToken, input: RefreshInput, now: number): Promise<TokenSet> {
  const session = await auth.storage.sessions.findSession(token.sessionId);
  if (session === null) throw invalidToken();
  if (session.refreshHash === token.hash) {
    await endRefusedSession(auth, session, await auth.storage.users.findById(session.userId), now);
    throw invalidToken();
  }
  const standing = relationToCurrent(auth, token, session);
  if (standing.relation === "unrelated") throw invalidToken();
  const interval = auth.config.refreshReuseInterval * 1000;
  // Without an interval nothing is tolerated: not even a refresh whose clock is behind the winner's.
  if (standing.relation === "parent" && interval > 0 && now - session.lastUsedAt < interval) {
    return currentTokensOf(auth, session, standing.current, input, now);
  }
  return reused(auth, session, input, now);
}

/** Reuse (RT-2): the event, and the session revoked with every token it has; 40101 for an unknown session. */
async function reused(
  auth: Auth,
  session: Pick<SessionRecord, "id" | "userId"> | null,
  input: RefreshInput,
  now: number,
): Promise<never> {
  if (session === null) throw invalidToken();
  const { id: sessionId, userId } = session;
  auth.emit({ type: "refresh_token.reused", userId, sessionId, at: now, ip: input.ip, withinReuseInterval: false });
  await revokeSession(auth, userId, sessionId, "refresh_token_reused");
  throw invalidToken();
}

/**
 * The answer to the token replaced last, presented again within `refreshReuseInterval`: the
 * session's current refresh token (`current`, the replacement that token has) and a new access
 * token, when the session and its user may still refresh; nothing is written.
 */
async function currentTokensOf(
  auth: Auth,
  session: SessionRecord,
  current: string,
  input: RefreshInput,
  now: number,
): Promise<TokenSet> {
  const user = await auth.storage.users.findById(session.userId);
  if (!mayRefresh(session, user, now)) {
    await endRefusedSession(auth, session, user, now);
    throw invalidToken();
  }
  const { id: sessionId, userId } = session;
  auth.emit({ type: "refresh_token.reused", userId, sessionId, at: now, ip: input.ip, withinReuseInterval: true });
  const totpEnabled = (await auth.storage.totp.get(userId))?.enabled === true;
  await endUnlessSecondFactorStands(auth, user, session, totpEnabled);
  await endUnlessImpersonatorStands(auth, session);
  return rotatedTokenSet(auth, user, session, current, totpEnabled);
}

/**
 * Ends the session, and refuses the refresh, of a user the operator's `secondFactor.required`
 * names who has no second factor (STUP-4). A session whose sign-in a trusted provider asserted a
 * second factor for (its stored `mfa`: STUP-5) proved two factors itself, as a sign-in would need.
 */
async function endUnlessSecondFactorStands(
  auth: Auth,
  user: UserRecord,
  session: SessionRecord,
  totpEnabled: boolean,
): Promise<void> {
  if ((await signInStepOf(auth, user, session.amr.includes("mfa"), totpEnabled)) !== "enrolment_required") return;
  await revokeSession(auth, user.id, session.id, "second_factor_required");
  throw invalidToken();
}

/**
 * Ends a session whose refresh was refused because of its user (gone, disabled, or at another
 * token version: TV-2). A refusal for the token itself (expired) or its session (expired) leaves
 * the session as it is; one already revoked stays revoked, reported once.
 */
async function endRefusedSession(auth: Auth, session: SessionRecord, user: UserRecord | null, now: number): Promise<void> {
  if (session.expiresAt <= now) return;
  if (user !== null && !user.disabled && user.tokenVersion === session.tokenVersion) return;
  await revokeSession(auth, session.userId, session.id, user?.disabled ? "user_disabled" : "token_version_changed");
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
 * A directory user's roles as the directory maps them now (see {@link directoryRolesAtRefresh}),
 * read before the token is spent so that a directory that is down leaves it usable; undefined
 * for a token its session does not hold now or that expired (the rotation decides those) or a
 * user who is not the directory's.
 */
async function directoryRolesBeforeSpending(
  auth: Auth,
  token: PresentedRefreshToken,
  now: number,
): Promise<string[] | null | undefined> {
  const session = await auth.storage.sessions.findSession(token.sessionId);
  if (!session || session.refreshHash !== token.hash || session.refreshExpiresAt <= now) return undefined;
  const user = await auth.storage.users.findById(session.userId);
  return user?.source === "directory" ? await directoryRolesAtRefresh(auth, user) : undefined;
}
