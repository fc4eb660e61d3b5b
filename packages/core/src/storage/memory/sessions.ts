import { compareCodePoints } from "../code-point-order.js";
import { mayRotate, rotatedSession } from "../refresh-rotation.js";
import type { SessionRecord, SessionStore, UserRecord } from "../types.js";
import { expiringMap } from "./expiring-map.js";
import { frozenCopy, frozenWith } from "./records.js";

/** What the session store reads of the other tables to rotate a session's refresh token, or find a token's state, in one step. */
export interface RotationReads {
  user(id: string): UserRecord | null;
  totpEnabled(userId: string): boolean;
  /** The user's roles in an organization, or null when not a member (OR-7). */
  orgRoles(orgId: string, userId: string): readonly string[] | null;
}

/** The memory {@link SessionStore}: sessions by id and by user, a refresh one replacement of the frozen session (RT-3). */
export function memorySessions(reads: RotationReads) {
  const expiresAt = (record: { expiresAt: number }) => record.expiresAt;
  /** The ids of each user's sessions held in the session map: a session pruned from the map leaves it too. */
  const sessionIdsByUser = new Map<string, Set<string>>();
  const unindex = (id: string, session: SessionRecord) => {
    const ids = sessionIdsByUser.get(session.userId);
    ids?.delete(id);
    if (ids?.size === 0) sessionIdsByUser.delete(session.userId);
  };
  const sessionMap = expiringMap<SessionRecord>(expiresAt, unindex);
  const { entries: sessions, set: setSession } = sessionMap;
  const sessionsOf = (userId: string) => [...(sessionIdsByUser.get(userId) ?? [])].map((id) => sessions.get(id) as SessionRecord);
  const store: SessionStore = {
    async createSession(session) {
      const replaced = sessions.get(session.id);
      if (replaced) unindex(session.id, replaced);
      setSession(session.id, frozenCopy(session), session.createdAt);
      const ids = sessionIdsByUser.get(session.userId) ?? new Set<string>();
      ids.add(session.id);
      sessionIdsByUser.set(session.userId, ids);
    },
    async findSession(id) {
      return sessions.get(id) ?? null;
    },
    async findTokenState(id) {
      const session = sessions.get(id);
      if (session === undefined) return null;
      const orgId = session.activeOrgId ?? null;
      const orgRoles = orgId === null ? null : reads.orgRoles(orgId, session.userId);
      return { session, user: reads.user(session.userId), orgRoles: orgRoles === null ? null : [...orgRoles] };
    },
    async revokeSession(id, now) {
      const session = sessions.get(id);
      if (!session || session.revokedAt !== null) return false;
      sessions.set(id, frozenWith(session, { revokedAt: now }));
      return true;
    },
    async setTokenVersion(id, tokenVersion) {
      const session = sessions.get(id);
      if (!session || session.revokedAt !== null) return false;
      sessions.set(id, frozenWith(session, { tokenVersion }));
      return true;
    },
    async revokeUserSessions(userId, now, exceptSessionId) {
      let revoked = 0;
      for (const session of sessionsOf(userId)) {
        if (session.revokedAt === null && session.id !== exceptSessionId) {
          sessions.set(session.id, frozenWith(session, { revokedAt: now }));
          revoked += 1;
        }
      }
      return revoked;
    },
    async revokeAll(now) {
      let revoked = 0;
      for (const [id, session] of sessions) {
        if (session.revokedAt === null && session.expiresAt > now) {
          sessions.set(id, frozenWith(session, { revokedAt: now }));
          revoked += 1;
        }
      }
      return revoked;
    },
    async listByUser(userId, now, limit) {
      return sessionsOf(userId)
        .filter((session) => session.revokedAt === null && session.expiresAt > now)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id))
        .slice(0, limit);
    },
    async rotateRefresh(rotation) {
      const session = sessions.get(rotation.sessionId);
      if (session === undefined) return { outcome: "refused" };
      const user = reads.user(session.userId);
      if (!mayRotate(session, user, rotation)) return { outcome: "refused" };
      sessions.set(session.id, Object.freeze(rotatedSession(session, rotation)));
      return { outcome: "rotated", session, user, totpEnabled: reads.totpEnabled(user.id) };
    },
  };
  /** The active organization of sessions, as {@link OrganizationStore} sets and clears it. */
  const activeOrganizations = {
    set(sessionId: string, userId: string, orgId: string | null): boolean {
      const session = sessions.get(sessionId);
      if (!session || session.userId !== userId || session.revokedAt !== null) return false;
      sessions.set(sessionId, frozenWith(session, { activeOrgId: orgId }));
      return true;
    },
    /** Clears `orgId` in every session that has it active, or in `userId`'s only; how many lost it. */
    clear(orgId: string, userId?: string): number {
      let cleared = 0;
      const candidates = userId === undefined ? [...sessions.values()] : sessionsOf(userId);
      for (const session of candidates) {
        if (session.activeOrgId === orgId) {
          sessions.set(session.id, frozenWith(session, { activeOrgId: null }));
          cleared += 1;
        }
      }
      return cleared;
    },
  };
  return {
    store,
    activeOrganizations,
    sessionCount: () => sessions.size,
    deleteExpired: (now: number, limit: number) => sessionMap.deleteExpired(now, limit),
  };
}
