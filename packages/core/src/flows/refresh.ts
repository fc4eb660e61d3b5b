import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { directoryRolesAtRefresh, sameRoles } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { signInStepOf } from "../required-factor/requirement.js";
import { rotateRefreshToken } from "../storage/refresh-rotation.js";
import type { RotationResult, UserRecord } from "../storage/types.js";
import { type TokenSet, rotatedTokenSet } from "../tokens/issue-tokens.js";
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

type RefusedRotation = Extract<RotationResult, { outcome: "refused" }>;

/**
 * Exchanges a refresh token for a new access token and a new refresh token
 * (`POST /auth/refresh`). The presented token is spent by one atomic write, so of N parallel
 * refreshes exactly one succeeds (RT-3); there is no grace window. A token presented after it
 * was spent is reuse: the whole session is revoked, its newest token included, and
 * `refresh_token.reused` is emitted (RT-2). Refresh never moves the session's absolute expiry
 * (RT-4), and a session whose user changed token version, or was disabled, ends (TV-2). The
 * spend, the insert of the new token and the session's use are one operation of the store, one
 * statement on PostgreSQL (`rotateRefreshToken`), which reads the session as it was before the
 * spend: of N concurrent refreshes exactly one answers with tokens, even when a loser's reuse
 * detection revokes the session meanwhile (those tokens then die with it).
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
  const hash = sha256(presented);
  const directoryRoles = auth.directory === null ? undefined : await directoryRolesBeforeSpending(auth, hash, now);
  const next = opaqueToken(auth);
  const rotation = await rotateRefreshToken(auth.storage, {
    hash,
    now,
    nextHash: next.hash,
    idleMs: auth.config.ttl.refreshIdle * 1000,
    use: sessionUseOf(auth, input),
  });
  if (rotation.outcome === "unknown") throw invalidToken();
  const { sessionId, userId } = rotation.token;
  if (rotation.outcome === "already_spent") {
    auth.emit({ type: "refresh_token.reused", userId, sessionId, at: now, ip: input.ip });
    await revokeSession(auth, userId, sessionId, "refresh_token_reused");
    throw invalidToken();
  }
  if (rotation.outcome === "refused") {
    await endRefusedSession(auth, rotation, now);
    throw invalidToken();
  }
  const { session } = rotation;
  let { user } = rotation;
  if (user.source === "directory") {
    const roles = directoryRoles === undefined ? await directoryRolesAtRefresh(auth, user) : directoryRoles;
    if (roles === null) {
      await revokeSession(auth, userId, sessionId, "directory_access_lost");
      await raiseTokenVersion(auth, userId, "directory_access_lost");
      throw invalidToken();
    }
    if (!sameRoles(roles, user.roles)) user = await carryOnWithRoles(auth, user, session.id, roles);
  }
  // A session whose sign-in a trusted provider asserted a second factor for (its stored `mfa`:
  // STUP-5) proved two factors itself, as a sign-in would need (STUP-4).
  const assertedSecondFactor = session.amr.includes("mfa");
  if ((await signInStepOf(auth, user, assertedSecondFactor, rotation.totpEnabled)) === "enrolment_required") {
    await revokeSession(auth, userId, sessionId, "second_factor_required");
    throw invalidToken();
  }
  const tokens = await rotatedTokenSet(auth, user, session, next.value, rotation.totpEnabled);
  auth.emit({ type: "token.refreshed", userId, sessionId, at: now, ip: input.ip });
  return tokens;
}

/**
 * Ends the session of a refresh refused because of its user (gone, disabled, or at another token
 * version: TV-2). A refusal for the token itself (expired) or its session (gone, expired, another
 * user's) leaves the session as it is; one already revoked stays revoked, reported once.
 */
async function endRefusedSession(auth: Auth, { token, session, user }: RefusedRotation, now: number): Promise<void> {
  if (session === null || session.expiresAt <= now || session.userId !== token.userId) return;
  if (user !== null && !user.disabled && user.tokenVersion === session.tokenVersion) return;
  await revokeSession(auth, token.userId, session.id, user?.disabled ? "user_disabled" : "token_version_changed");
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
 * for a token that is unknown, spent or expired (the rotation decides those) or a user who is not
 * the directory's.
 */
async function directoryRolesBeforeSpending(auth: Auth, hash: string, now: number): Promise<string[] | null | undefined> {
  const token = await auth.storage.sessions.findRefreshToken(hash);
  if (!token || token.spentAt !== null || token.expiresAt <= now) return undefined;
  const user = await auth.storage.users.findById(token.userId);
  return user?.source === "directory" ? await directoryRolesAtRefresh(auth, user) : undefined;
}
