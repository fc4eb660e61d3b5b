import type { Auth } from "../auth.js";
import type { RevocationReason, SessionsEndedReason } from "../events/types.js";
import { forgetTokenState, revoked } from "./token-state.js";

/** What {@link endOtherSessions} ends: the user's sessions, but the one to keep. */
export interface EndOtherSessionsInput {
  userId: string;
  /** The session the change was made from, which goes on; without it every session of the user ends. */
  keepSessionId?: string | undefined;
  reason: SessionsEndedReason;
}

/**
 * Ends every live session of a user but `keepSessionId` (SE-2), with one atomic storage call,
 * without raising the token version: the kept session's access and refresh tokens go on working.
 * The ended sessions' refresh tokens are refused at once, their access tokens at their next check
 * here (this process's cached checks of them are dropped) and on other instances as soon as the
 * `revocationChannel` tells them, or within `tokenStateCacheSeconds` (SE-3, TV-2). Emits `sessions.ended` when it ended any; returns how many.
 */
export async function endOtherSessions(auth: Auth, input: EndOtherSessionsInput): Promise<number> {
  const { userId, keepSessionId, reason } = input;
  const now = auth.now();
  const count = await auth.storage.sessions.revokeUserSessions(userId, now, keepSessionId);
  const revocation = { kind: "user_sessions", userId, keptSessionId: keepSessionId ?? null } as const;
  if (count === 0) {
    forgetTokenState(auth, revocation);
    return 0;
  }
  revoked(auth, revocation);
  auth.emit({ type: "sessions.ended", userId, keptSessionId: keepSessionId ?? null, count, reason, at: now });
  return count;
}

/**
 * Revokes one session and reports it as `session.revoked` with `reason`; a session already
 * revoked is left as it is. Returns whether this call revoked it: of concurrent calls, one does,
 * so each ended session is reported once.
 */
export async function revokeSession(auth: Auth, userId: string, sessionId: string, reason: RevocationReason): Promise<boolean> {
  const now = auth.now();
  const ended = await auth.storage.sessions.revokeSession(sessionId, now);
  if (!ended) {
    forgetTokenState(auth, { kind: "session", sessionId });
    return false;
  }
  revoked(auth, { kind: "session", sessionId });
  auth.emit({ type: "session.revoked", userId, sessionId, reason, at: now });
  return true;
}
