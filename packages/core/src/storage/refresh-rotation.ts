import type { RefreshRotation, SessionRecord, SessionStore, UserRecord } from "./types.js";

/**
 * Whether `session` may take the refresh of `rotation`, its user being `user`: the condition of
 * {@link SessionStore.rotateRefresh}. For stores that check it in code (the memory store does).
 */
export function mayRotate(session: SessionRecord, user: UserRecord | null, rotation: RefreshRotation): user is UserRecord {
  return session.id === rotation.sessionId && session.refreshHash === rotation.hash && mayRefresh(session, user, rotation.now);
}

/**
 * Whether `session` may still be refreshed at `now`, its user being `user`: not revoked, neither it
 * nor its refresh token expired (RT-4), and its user there, enabled, at its token version (TV-2).
 */
export function mayRefresh(session: SessionRecord, user: UserRecord | null, now: number): user is UserRecord {
  return (
    session.revokedAt === null &&
    session.expiresAt > now &&
    session.refreshExpiresAt > now &&
    user !== null &&
    user.id === session.userId &&
    !user.disabled &&
    user.tokenVersion === session.tokenVersion
  );
}

/**
 * The session after the write of {@link SessionStore.rotateRefresh}: its new token, generation and
 * idle expiry (never past `expiresAt`: RT-4), and where and when it was last used.
 */
export function rotatedSession(session: SessionRecord, rotation: RefreshRotation): SessionRecord {
  return {
    ...session,
    refreshHash: rotation.nextHash,
    refreshGeneration: rotation.nextGeneration,
    refreshExpiresAt: Math.min(rotation.now + rotation.idleMs, session.expiresAt),
    lastUsedAt: rotation.now,
    userAgent: rotation.use.userAgent,
    address: rotation.use.address,
  };
}
