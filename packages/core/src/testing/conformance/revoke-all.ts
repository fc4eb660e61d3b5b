import type { SessionRecord, Storage } from "../../storage/types.js";
import { type SuiteContext, concurrently } from "./harness.js";
import { BASE_TIME, createUser, sampleSession } from "./samples.js";

/** Stores `sessions` in turn. */
async function store(storage: Storage, sessions: readonly SessionRecord[]): Promise<void> {
  for (const session of sessions) await storage.sessions.createSession(session);
}

/**
 * Registers the tests of `sessions.revokeAll`, the incident response that ends every session of
 * every user at once (STUP-6, ASVS 7.4.5). Each test first revokes what earlier tests left live,
 * so that it counts only its own sessions in a storage that is not wiped between tests.
 */
export function revokeAllTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("revoking every session of every user (STUP-6)", () => {
    it("STUP-6, ASVS 7.4.5: revokeAll revokes every live session of every user at now and counts them; revoked and expired ones keep what they had", async () => {
      const storage = await makeStorage();
      const now = BASE_TIME + 60_000;
      await storage.sessions.revokeAll(now);
      const [alice, bob] = [await createUser(storage), await createUser(storage)];
      const live = [sampleSession(alice), sampleSession(alice), sampleSession(bob)];
      const revoked = sampleSession(alice, { revokedAt: BASE_TIME + 5 });
      const expired = sampleSession(bob, { expiresAt: now });
      await store(storage, [live[0] as SessionRecord, revoked, live[1] as SessionRecord, expired, live[2] as SessionRecord]);
      expect(await storage.sessions.revokeAll(now)).toBe(3);
      for (const session of live) expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, revokedAt: now });
      expect(await storage.sessions.findSession(revoked.id)).toEqual(revoked);
      expect(await storage.sessions.findSession(expired.id)).toEqual(expired);
      expect(await storage.sessions.listByUser(alice, now, 10)).toEqual([]);
      expect(await storage.sessions.revokeAll(now + 1)).toBe(0);
      expect((await storage.sessions.findSession(live[0]?.id as string))?.revokedAt).toBe(now);
      // A sign-in after the call is a session of its own, left live.
      const after = sampleSession(alice, { createdAt: now + 2 });
      await storage.sessions.createSession(after);
      expect(await storage.sessions.listByUser(alice, now + 3, 10)).toEqual([after]);
    });

    it("STUP-6, ST-1: of 10 concurrent revokeAll calls each session is revoked by one, so their counts add up to the sessions there were", async () => {
      const storage = await makeStorage();
      const now = BASE_TIME + 120_000;
      await storage.sessions.revokeAll(now);
      const sessions: SessionRecord[] = [];
      for (let user = 0; user < 8; user += 1) {
        const userId = await createUser(storage);
        sessions.push(sampleSession(userId), sampleSession(userId), sampleSession(userId));
      }
      await store(storage, sessions);
      const counts = await concurrently(10, (index) => storage.sessions.revokeAll(now + index));
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(sessions.length);
      for (const session of sessions) {
        const found = await storage.sessions.findSession(session.id);
        expect(found !== null && found.revokedAt !== null && found.revokedAt >= now && found.revokedAt < now + 10).toBe(true);
      }
    });
  });
}
