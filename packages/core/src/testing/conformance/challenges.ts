import type { ChallengeKind } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleChallenge, uniqueHash } from "./samples.js";

/** Every kind of challenge, so that a kind added to `ChallengeKind` fails the type check here until the suite stores it. */
const everyChallengeKind = {
  totp_login: true,
  oauth_state: true,
  webauthn_login: true,
  webauthn_register: true,
  webauthn_reauthenticate: true,
  webauthn_sign_up: true,
  password_reset: true,
  password_reset_newest: true,
  email_verification: true,
  email_verification_newest: true,
  second_factor_enrolment: true,
  email_sign_in: true,
} satisfies Record<ChallengeKind, true>;

/** Registers the `challenges` suite: single use (ST-1), matching id and kind (ST-2), expiry, attempt limits. */
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

    it("ST-2: a challenge of every kind is stored, found and consumed by its own kind only, the longest kind's name too (STUP-4's second_factor_enrolment)", async () => {
      const storage = await makeStorage();
      const kinds = Object.keys(everyChallengeKind) as ChallengeKind[];
      const challenges = kinds.map((kind) => sampleChallenge({ kind }));
      for (const challenge of challenges) await storage.challenges.put(challenge);
      for (const [index, challenge] of challenges.entries()) {
        const other = kinds[(index + 1) % kinds.length] as ChallengeKind;
        expect(await storage.challenges.find(challenge.id, other, BASE_TIME)).toBeNull();
        expect(await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
        expect(await storage.challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
      }
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

    it("TMP-4: takeAttempt counts attempts up to the limit, then hands the challenge to no one, while it can still be consumed", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge();
      await storage.challenges.put(challenge);
      expect(await storage.challenges.takeAttempt(challenge.id, challenge.kind, 3, BASE_TIME)).toEqual({
        ...challenge,
        attempts: 1,
      });
      expect((await storage.challenges.takeAttempt(challenge.id, challenge.kind, 3, BASE_TIME))?.attempts).toBe(2);
      expect((await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME))?.attempts).toBe(2);
      expect((await storage.challenges.takeAttempt(challenge.id, challenge.kind, 3, BASE_TIME))?.attempts).toBe(3);
      expect(await storage.challenges.takeAttempt(challenge.id, challenge.kind, 3, BASE_TIME)).toBeNull();
      expect((await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME))?.attempts).toBe(3);
      expect(await storage.challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual({ ...challenge, attempts: 3 });
      expect(await storage.challenges.takeAttempt(challenge.id, challenge.kind, 3, BASE_TIME)).toBeNull();
      expect(await storage.challenges.takeAttempt(uniqueHash(), challenge.kind, 3, BASE_TIME)).toBeNull();
    });

    it("ST-2: takeAttempt matches id and kind, refuses an expired challenge, and counts nothing when it refuses", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge({ kind: "totp_login", expiresAt: BASE_TIME + 1000 });
      await storage.challenges.put(challenge);
      expect(await storage.challenges.takeAttempt(challenge.id, "oauth_state", 5, BASE_TIME)).toBeNull();
      expect(await storage.challenges.takeAttempt(challenge.id, "totp_login", 5, BASE_TIME + 1000)).toBeNull();
      expect((await storage.challenges.find(challenge.id, "totp_login", BASE_TIME))?.attempts).toBe(0);
      expect((await storage.challenges.takeAttempt(challenge.id, "totp_login", 5, BASE_TIME + 999))?.attempts).toBe(1);
    });

    it("TMP-4, ST-1: 20 concurrent takeAttempt calls with limit 5 count 1 to 5 once each; the rest get null", async () => {
      const storage = await makeStorage();
      const challenge = sampleChallenge();
      await storage.challenges.put(challenge);
      const results = await concurrently(20, () => storage.challenges.takeAttempt(challenge.id, challenge.kind, 5, BASE_TIME));
      const counted = results.flatMap((result) => (result === null ? [] : [result.attempts])).sort((a, b) => a - b);
      expect(counted).toEqual([1, 2, 3, 4, 5]);
      expect((await storage.challenges.find(challenge.id, challenge.kind, BASE_TIME))?.attempts).toBe(5);
    });

    it("deleteExpired deletes expired challenges only and returns how many rows it deleted", async () => {
      const storage = await makeStorage();
      // Times far below BASE_TIME, so that a shared database's other rows are not expired.
      const now = 10_000;
      const expired = [
        sampleChallenge({ createdAt: 1000, expiresAt: 9_000 }),
        sampleChallenge({ createdAt: 1000, expiresAt: now }),
      ];
      const live = sampleChallenge({ createdAt: 1000, expiresAt: now + 1 });
      for (const challenge of [...expired, live]) await storage.challenges.put(challenge);
      expect(await storage.challenges.deleteExpired(now, 100)).toBe(2);
      for (const challenge of expired) expect(await storage.challenges.find(challenge.id, challenge.kind, 1000)).toBeNull();
      expect(await storage.challenges.find(live.id, live.kind, 1000)).toEqual(live);
      expect(await storage.challenges.deleteExpired(now, 100)).toBe(0);
    });

    it("deleteExpired(now, limit) deletes at most `limit` expired challenges a call, so one call is short; called again while it returns `limit`, it deletes them all and no live one", async () => {
      const storage = await makeStorage();
      // Expired before any other test's rows, which are still live at this time.
      const now = 5_000;
      const expired = [1000, 2000, 3000, 4000, 5000].map((expiresAt) => sampleChallenge({ createdAt: 1, expiresAt }));
      const live = sampleChallenge({ createdAt: 1, expiresAt: now + 1 });
      for (const challenge of [...expired, live]) await storage.challenges.put(challenge);
      const left = async () => {
        const found = await Promise.all(expired.map((challenge) => storage.challenges.find(challenge.id, challenge.kind, 1)));
        return countWhere(found, (challenge) => challenge !== null);
      };
      const first = await storage.challenges.deleteExpired(now, 2);
      expect(await left()).toBe(3);
      expect(first >= 2).toBe(true);
      let calls = 1;
      while (calls < 10 && (await storage.challenges.deleteExpired(now, 2)) >= 2) calls += 1;
      expect(await left()).toBe(0);
      expect(await storage.challenges.find(live.id, live.kind, 1)).toEqual(live);
    });
  });
}
