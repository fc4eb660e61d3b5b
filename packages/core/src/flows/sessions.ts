import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AuthMethod, SessionRecord } from "../storage/types.js";
import { endOtherSessions as endSessionsBut, revokeSession } from "../users/sessions.js";
import { signedInUser } from "../users/signed-in-user.js";
import { requiredString } from "./input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

/** A session as its user sees it in the list (`GET /auth/sessions`): never a token. Times are epoch milliseconds. */
export interface SessionInfo {
  /** The session's id, the `sid` claim of its access tokens: not a secret, and no token. */
  id: string;
  /** True for the session of the request that asked. */
  current: boolean;
  createdAt: number;
  /** When it began or last refreshed its tokens; access-token checks do not move it. */
  lastUsedAt: number;
  /** When it ends whatever happens (the absolute lifetime, RT-4). */
  expiresAt: number;
  /** How it was signed in (RFC 8176 values). */
  amr: AuthMethod[];
  /** The `User-Agent` it was last used with, cut to 256 characters; null when none was sent. */
  userAgent: string | null;
  /** The network it was last used from (IPv4 /24, IPv6 /48, or whole with `sessions.keepFullAddress`); null when unknown. */
  address: string | null;
  /**
   * The administrator acting as the user in this session (IMP-3), with their username as it is now
   * (null when their account is gone); null for the user's own sessions.
   */
  impersonatedBy: { id: string; username: string | null } | null;
}

/** How many sessions {@link listSessions} shows at most, newest first. */
export const sessionListLimit = 100;

function toSessionInfo(
  session: SessionRecord,
  currentSessionId: string | undefined,
  impersonators: ReadonlyMap<string, string | null>,
): SessionInfo {
  const { id, createdAt, lastUsedAt, expiresAt, amr, userAgent, address } = session;
  const by = session.impersonatorId ?? null;
  const impersonatedBy = by === null ? null : { id: by, username: impersonators.get(by) ?? null };
  return {
    id,
    current: id === currentSessionId,
    createdAt,
    lastUsedAt,
    expiresAt,
    amr: [...amr],
    userAgent,
    address,
    impersonatedBy,
  };
}

/** The usernames of the administrators acting in `sessions`, by id (null for one whose account is gone). */
async function impersonatorsOf(auth: Auth, sessions: readonly SessionRecord[]): Promise<Map<string, string | null>> {
  const ids = [...new Set(sessions.flatMap((session) => (session.impersonatorId ? [session.impersonatorId] : [])))];
  const users = await Promise.all(ids.map((id) => auth.storage.users.findById(id)));
  return new Map(ids.map((id, index) => [id, users[index]?.username ?? null]));
}

/** The input of {@link listSessions}. */
export interface ListSessionsInput {
  userId: string;
  /** The session of the request, marked `current` in the list. */
  sessionId?: string;
}

/**
 * The signed-in user's live sessions (`GET /auth/sessions`), newest first, at most
 * {@link sessionListLimit}: each with when it began and was last used, until when it lasts, how it
 * was signed in, the user agent and network it was last used from (SE-1), and the administrator
 * acting in it when one impersonates the user (IMP-3). Only the user's own,
 * and never a token.
 *
 * @throws {AuthError} 40101 user gone or disabled.
 * @example
 * ```ts
 * const sessions = await listSessions(auth, { userId: access.userId, sessionId: access.sessionId });
 * ```
 */
export async function listSessions(auth: Auth, input: ListSessionsInput): Promise<SessionInfo[]> {
  const user = await signedInUser(auth, input.userId);
  const sessions = await auth.storage.sessions.listByUser(user.id, auth.now(), sessionListLimit);
  const impersonators = await impersonatorsOf(auth, sessions);
  return sessions.map((session) => toSessionInfo(session, input.sessionId, impersonators));
}

/** The input of {@link endSession}: the session to end, and the proof of a recent sign-in. */
export interface EndSessionInput extends ReauthenticationProof {
  userId: string;
  /** The id of the session to end, as {@link listSessions} shows it. */
  id: string;
}

const noSuchSession = () => new AuthError(ErrorCode.NotFound, "No such session");

/**
 * Ends one of the signed-in user's sessions (`DELETE /auth/sessions/:id`) once the user proves it
 * is them (a recent sign-in, the password, or a TOTP code; as for enrolling TOTP). Its refresh
 * tokens are refused at once, its access tokens at their next check, within
 * `tokenStateCacheSeconds` on other instances (SE-3). Another user's session, an unknown id and
 * one that already ended are the same 40400 (SE-1). Ending the request's own session is a sign-out.
 *
 * @throws {AuthError} 40001 no proof and no recent sign-in, 40100 wrong password, 40103 wrong code,
 *   40101 user gone or disabled, 40400 no such session of this user, 42900 throttled.
 */
export async function endSession(auth: Auth, input: EndSessionInput): Promise<{ ended: true }> {
  const user = await signedInUser(auth, input.userId);
  const id = requiredString(input.id, "id");
  await requireRecentAuthentication(auth, user, input);
  const session = await auth.storage.sessions.findSession(id);
  if (session?.userId !== user.id || session.expiresAt <= auth.now()) throw noSuchSession();
  if (!(await revokeSession(auth, user.id, id, "ended_by_user"))) throw noSuchSession();
  return { ended: true };
}

/** The input of {@link endOtherSessions}: the session that goes on, and the proof of a recent sign-in. */
export interface EndOtherSessionsInput extends ReauthenticationProof {
  userId: string;
}

/**
 * Ends every session of the signed-in user but the request's own, `sessionId`
 * (`POST /auth/sessions/end-others`), once the user proves it is them (a recent sign-in, the
 * password, or a TOTP code). The token version does not move, so this session's tokens go on
 * working (SE-2, SE-3). Returns how many ended.
 *
 * @throws {AuthError} 40001 no proof and no recent sign-in, 40100 wrong password, 40103 wrong code,
 *   40101 user gone or disabled, 42900 throttled.
 * @example
 * ```ts
 * const { ended } = await endOtherSessions(auth, { userId, sessionId, password });
 * ```
 */
export async function endOtherSessions(auth: Auth, input: EndOtherSessionsInput): Promise<{ ended: number }> {
  const user = await signedInUser(auth, input.userId);
  await requireRecentAuthentication(auth, user, input);
  const ended = await endSessionsBut(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "ended_by_user" });
  return { ended };
}
