import { rotatedSession } from "../../storage/refresh-rotation.js";
import type { SessionRecord } from "../../storage/types.js";
import { type SuiteContext, concurrently } from "./harness.js";
import { rotationOf } from "./refresh-rotation.js";
import { BASE_TIME, createUser, sampleSession, uniqueId } from "./samples.js";

/** A User-Agent of 256 code points, some beyond U+FFFF (more than 256 UTF-16 units), as a flow cuts it. */
const longUserAgent = Array.from(`Mozilla/5.0 (X11; Linux x86_64) ${"é\u{1F600}'%_\\".repeat(60)}`)
  .slice(0, 256)
  .join("");

/**
 * Registers the tests of the session operations that the account and admin routes use: the
 * listing (SE-1), ending every session of a user but one (SE-2), concurrently (SE-3), and
 * where a session was last used, which its refresh records (issue 21).
 */
export function sessionListingTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("listing and ending a user's sessions (SE-1, SE-2, SE-3)", () => {
    it("SE-1: listByUser returns only that user's live sessions, newest first, at most limit", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const now = BASE_TIME + 1000;
      const live = [1, 2, 3, 4].map((at) =>
        sampleSession(userId, {
          createdAt: BASE_TIME + at,
          lastUsedAt: BASE_TIME + at * 10,
          userAgent: at === 4 ? longUserAgent : `agent ${at}`,
          address: at === 4 ? "2001:db8:1::/48" : "203.0.113.0/24",
        }),
      );
      const revoked = sampleSession(userId, { createdAt: BASE_TIME + 5, revokedAt: BASE_TIME + 6 });
      const expired = sampleSession(userId, { createdAt: BASE_TIME + 7, expiresAt: now });
      const others = sampleSession(otherId, { createdAt: BASE_TIME + 8 });
      for (const session of [live[2], revoked, live[0], others, expired, live[3], live[1]]) {
        await storage.sessions.createSession(session as SessionRecord);
      }
      const newestFirst = [...live].reverse();
      expect(await storage.sessions.listByUser(userId, now, 10)).toEqual(newestFirst);
      expect(await storage.sessions.listByUser(userId, now, 2)).toEqual(newestFirst.slice(0, 2));
      expect(await storage.sessions.listByUser(userId, now, 1)).toEqual(newestFirst.slice(0, 1));
      expect(await storage.sessions.listByUser(otherId, now, 10)).toEqual([others]);
      expect(await storage.sessions.listByUser(uniqueId("user"), now, 10)).toEqual([]);
      expect(await storage.sessions.listByUser(userId, BASE_TIME + 24 * 3_600_000, 10)).toEqual([]);
    });

    it("STUP-8, ASVS 7.1.2: listByUser puts sessions that began in the same millisecond in one order, the same on every call, so a shorter limit reads the start of a longer one", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const newest = sampleSession(userId, { createdAt: BASE_TIME + 9 });
      const sameTime = Array.from({ length: 6 }, () => sampleSession(userId, { createdAt: BASE_TIME + 5 }));
      const oldest = sampleSession(userId, { createdAt: BASE_TIME + 1 });
      for (const session of [sameTime[3], oldest, sameTime[0], newest, sameTime[5], sameTime[1], sameTime[4], sameTime[2]]) {
        await storage.sessions.createSession(session as SessionRecord);
      }
      const now = BASE_TIME + 100;
      const whole = (await storage.sessions.listByUser(userId, now, 10)).map((session) => session.id);
      expect(whole).toHaveLength(8);
      expect(whole[0]).toBe(newest.id);
      expect(whole[7]).toBe(oldest.id);
      expect([...whole.slice(1, 7)].sort()).toEqual(sameTime.map((session) => session.id).sort());
      for (let limit = 1; limit <= 8; limit += 1) {
        const start = (await storage.sessions.listByUser(userId, now, limit)).map((session) => session.id);
        expect(start).toEqual(whole.slice(0, limit));
      }
      const ended = whole[2] as string;
      expect(await storage.sessions.revokeSession(ended, now)).toBe(true);
      expect((await storage.sessions.listByUser(userId, now, 10)).map((session) => session.id)).toEqual(
        whole.filter((id) => id !== ended),
      );
    });

    it("SE-2: revokeUserSessions with exceptSessionId ends the others, keeps that one live, and counts what it ended", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const [kept, first, second] = [1, 2, 3].map((at) => sampleSession(userId, { createdAt: BASE_TIME + at })) as [
        SessionRecord,
        SessionRecord,
        SessionRecord,
      ];
      const revoked = sampleSession(userId, { revokedAt: BASE_TIME + 5 });
      const others = sampleSession(otherId);
      for (const session of [kept, first, second, revoked, others]) await storage.sessions.createSession(session);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 100, kept.id)).toBe(2);
      expect(await storage.sessions.findSession(kept.id)).toEqual(kept);
      expect(await storage.sessions.findSession(first.id)).toEqual({ ...first, revokedAt: BASE_TIME + 100 });
      expect(await storage.sessions.findSession(second.id)).toEqual({ ...second, revokedAt: BASE_TIME + 100 });
      expect(await storage.sessions.findSession(revoked.id)).toEqual(revoked);
      expect(await storage.sessions.findSession(others.id)).toEqual(others);
      expect(await storage.sessions.listByUser(userId, BASE_TIME + 200, 10)).toEqual([kept]);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 200, kept.id)).toBe(0);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 300)).toBe(1);
      expect(await storage.sessions.findSession(kept.id)).toEqual({ ...kept, revokedAt: BASE_TIME + 300 });
    });

    it("SE-2: an exceptSessionId of another user's session keeps none of this user's and touches nothing of the other's", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const mine = [sampleSession(userId), sampleSession(userId)];
      const others = sampleSession(otherId);
      for (const session of [...mine, others]) await storage.sessions.createSession(session);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 100, others.id)).toBe(2);
      for (const session of mine) expect((await storage.sessions.findSession(session.id))?.revokedAt).toBe(BASE_TIME + 100);
      expect(await storage.sessions.findSession(others.id)).toEqual(others);
      expect(await storage.sessions.revokeUserSessions(userId, BASE_TIME + 200, uniqueId("session"))).toBe(0);
    });

    it("SE-3: concurrent revokeUserSessions calls, with and without a kept session, end each session once and their counts add up", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const sessions = Array.from({ length: 12 }, (_, at) => sampleSession(userId, { createdAt: BASE_TIME + at }));
      for (const session of sessions) await storage.sessions.createSession(session);
      const times = Array.from({ length: 20 }, (_, index) => BASE_TIME + 100 + index);
      const counts = await concurrently(20, (index) =>
        storage.sessions.revokeUserSessions(
          userId,
          times[index] as number,
          index % 2 === 0 ? (sessions[index % sessions.length] as SessionRecord).id : undefined,
        ),
      );
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(sessions.length);
      for (const session of sessions) {
        const revokedAt = (await storage.sessions.findSession(session.id))?.revokedAt;
        expect(times.includes(revokedAt as number)).toBe(true);
      }
      expect(await storage.sessions.listByUser(userId, BASE_TIME + 200, 20)).toEqual([]);
    });
  });

  describe("where a session was last used, moved by its rotation (SE-1)", () => {
    it("SE-1: a rotation moves lastUsedAt, userAgent and address in the listing, and nothing of another session", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const session = sampleSession(userId, { userAgent: "first", address: "198.51.100.0/24" });
      const neighbour = sampleSession(userId, { createdAt: BASE_TIME + 1 });
      for (const created of [session, neighbour]) await storage.sessions.createSession(created);
      const first = rotationOf(session, { now: BASE_TIME + 50, use: { userAgent: longUserAgent, address: "2001:db8:1::/48" } });
      expect((await storage.sessions.rotateRefresh(first)).outcome).toBe("rotated");
      const used = {
        ...rotatedSession(session, first),
        lastUsedAt: BASE_TIME + 50,
        userAgent: longUserAgent,
        address: "2001:db8:1::/48",
      };
      expect(await storage.sessions.listByUser(userId, BASE_TIME + 60, 10)).toEqual([neighbour, used]);
      const second = rotationOf(used, { now: BASE_TIME + 70, use: { userAgent: null, address: null } });
      expect((await storage.sessions.rotateRefresh(second)).outcome).toBe("rotated");
      const [, listed] = await storage.sessions.listByUser(userId, BASE_TIME + 80, 10);
      expect(listed).toEqual({ ...rotatedSession(used, second), lastUsedAt: BASE_TIME + 70, userAgent: null, address: null });
    });
  });
}
