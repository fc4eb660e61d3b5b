import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleChallenge, uniqueHash } from "./samples.js";

/** Registers the `challenges` suite: single use (ST-1), matching id and kind (ST-2), expiry, failure limits. */
export function challengesSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("challenges", () => {
    it("put stores a challenge that find returns; an unknown id is null", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge({ userId: await createUser(storage), kind: "webauthn_register" });
      await storage.challenges.put(challenge);
      expect(await storage.challenges.find(challenge.id, "webauthn_register", BASE_TIME)).toEqual(challenge);
      expect(await storage.challenges.find(challenge.id, "webauthn_register", BASE_TIME)).toEqual(challenge);
      expect(await storage.challenges.find(uniqueHash(), "webauthn_register", BASE_TIME)).toBeNull();
    });

    it("ST-1: consume returns the challenge once, then null", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge({ kind: "oauth_state" });
      await storage.challenges.put(challenge);
      expect(await storage.challenges.consume(challenge.id, "oauth_state", BASE_TIME)).toEqual(challenge);
      expect(await storage.challenges.consume(challenge.id, "oauth_state", BASE_TIME)).toBeNull();
      expect(await storage.challenges.find(challenge.id, "oauth_state", BASE_TIME)).toBeNull();
    });

    it("ST-1: 20 concurrent consumers of one challenge give exactly one winner", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge();
      await storage.challenges.put(challenge);
      const results = await concurrently(20, () => storage.challenges.consume(challenge.id, challenge.kind, BASE_TIME));
      expect(countWhere(results, (result) => result !== null)).toBe(1);
      expect(results.find((result) => result !== null)).toEqual(challenge);
    });

    it("ST-2: find and consume with the right id but the wrong kind return null and leave it in place", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge({ kind: "webauthn_login" });
      await storage.challenges.put(challenge);
      expect(await storage.challenges.find(challenge.id, "webauthn_register", BASE_TIME)).toBeNull();
      expect(await storage.challenges.consume(challenge.id, "webauthn_register", BASE_TIME)).toBeNull();
      expect(await storage.challenges.consume(challenge.id, "totp_login", BASE_TIME)).toBeNull();
      expect(await storage.challenges.recordFailure(challenge.id, "oauth_state", 1)).toBeNull();
      expect(await storage.challenges.consume(challenge.id, "webauthn_login", BASE_TIME)).toEqual(challenge);
    });

    it("ST-2: an expired challenge is returned to nobody (now >= expiresAt)", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge({ expiresAt: BASE_TIME + 1000 });
      await storage.challenges.put(challenge);
      expect(await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME + 999)).toEqual(challenge);
      for (const now of [BASE_TIME + 1000, BASE_TIME + 5000]) {
        expect(await storage.challenges.find(challenge.id, challenge.kind, now)).toBeNull();
        expect(await storage.challenges.consume(challenge.id, challenge.kind, now)).toBeNull();
      }
    });

    it("recordFailure counts up, deletes the challenge at the limit, and is null once it is gone", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge();
      await storage.challenges.put(challenge);
      expect(await storage.challenges.recordFailure(challenge.id, challenge.kind, 3)).toBe(1);
      expect(await storage.challenges.recordFailure(challenge.id, challenge.kind, 3)).toBe(2);
      expect((await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME))?.failedAttempts).toBe(2);
      expect(await storage.challenges.recordFailure(challenge.id, challenge.kind, 3)).toBe(3);
      expect(await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME)).toBeNull();
      expect(await storage.challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toBeNull();
      expect(await storage.challenges.recordFailure(challenge.id, challenge.kind, 3)).toBeNull();
      expect(await storage.challenges.recordFailure(uniqueHash(), challenge.kind, 3)).toBeNull();
    });

    it("20 concurrent recordFailure calls with limit 5 count 1 to 5 once each and delete the challenge", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge();
      await storage.challenges.put(challenge);
      const results = await concurrently(20, () => storage.challenges.recordFailure(challenge.id, challenge.kind, 5));
      const counted = results.filter((result) => result !== null).sort((a, b) => (a ?? 0) - (b ?? 0));
      expect(counted).toEqual([1, 2, 3, 4, 5]);
      expect(await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME)).toBeNull();
    });

    it("deleteExpired deletes expired challenges only and returns how many", async () => {
      const storage = await makeStorage();
      // Times far below BASE_TIME, so that a shared database's other expired rows are not counted.
      const now = 10_000;
      const expired = [
        sampleChallenge({ createdAt: 1000, expiresAt: 9_000 }),
        sampleChallenge({ createdAt: 1000, expiresAt: now }),
      ];
      const live = sampleChallenge({ createdAt: 1000, expiresAt: now + 1 });
      for (const challenge of [...expired, live]) await storage.challenges.put(challenge);
      expect(await storage.challenges.deleteExpired(now)).toBe(2);
      for (const challenge of expired) expect(await storage.challenges.find(challenge.id, challenge.kind, 1000)).toBeNull();
      expect(await storage.challenges.find(live.id, live.kind, 1000)).toEqual(live);
      expect(await storage.challenges.deleteExpired(now)).toBe(0);
    });
  });
}
