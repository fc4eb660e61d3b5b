import type {
  RefreshRotation,
  RefreshTokenRecord,
  RotationResult,
  SessionRecord,
  SessionStore,
  Storage,
  UserRecord,
} from "./types.js";

/**
 * Whether a token this call spent may be exchanged for a new one, given its session and user as
 * they were before the spend: the rule of {@link SessionStore.rotateRefreshToken}.
 */
export function mayRotate(token: RefreshTokenRecord, session: SessionRecord, user: UserRecord, now: number): boolean {
  return (
    token.expiresAt > now &&
    session.revokedAt === null &&
    session.expiresAt > now &&
    session.userId === token.userId &&
    !user.disabled &&
    user.tokenVersion === session.tokenVersion
  );
}

/** The replacement a rotation inserts: unspent, idle-valid for `idleMs` but never past its session (RT-4). */
export function replacementToken(
  rotation: RefreshRotation,
  token: RefreshTokenRecord,
  session: SessionRecord,
): RefreshTokenRecord {
  return {
    hash: rotation.nextHash,
    sessionId: session.id,
    userId: token.userId,
    createdAt: rotation.now,
    expiresAt: Math.min(rotation.now + rotation.idleMs, session.expiresAt),
    spentAt: null,
  };
}

/**
 * One refresh's writes through `storage.sessions.rotateRefreshToken` when the store has it, and
 * otherwise through its single operations in turn: the token and its session read before the
 * spend (so a concurrent reuse revoking the session after it cannot fail the caller that spent
 * it, RT-3), the spend, the user and TOTP reads, then the insert and the session's use.
 */
export async function rotateRefreshToken(storage: Storage, rotation: RefreshRotation): Promise<RotationResult> {
  const { sessions } = storage;
  if (sessions.rotateRefreshToken) return sessions.rotateRefreshToken(rotation);
  const before = await sessions.findRefreshToken(rotation.hash);
  const session = before ? await sessions.findSession(before.sessionId) : null;
  const spend = await sessions.spendRefreshToken(rotation.hash, rotation.now);
  if (spend.outcome !== "spent") return spend;
  const { token } = spend;
  const user = await storage.users.findById(token.userId);
  if (session === null || user === null || !mayRotate(token, session, user, rotation.now)) {
    return { outcome: "refused", token, session, user };
  }
  const next = replacementToken(rotation, token, session);
  await sessions.insertRefreshToken(next);
  await sessions.recordUse(session.id, rotation.now, rotation.use);
  const totp = await storage.totp.get(user.id);
  return { outcome: "rotated", token, session, user, totpEnabled: totp?.enabled === true, next };
}
