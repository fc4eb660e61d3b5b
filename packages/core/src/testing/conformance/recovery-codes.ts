import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, uniqueHash } from "./samples.js";

/** Registers the `recoveryCodes` suite: replacing voids the old set (RC-1), each code works once (RC-3). */
export function recoveryCodesSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  const hashes = (count: number) => Array.from({ length: count }, () => uniqueHash());

  describe("recoveryCodes", () => {
    it("replace stores the set that count reports; count of a user without codes is 0", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      expect(await storage.recoveryCodes.count(userId)).toBe(0);
      await storage.recoveryCodes.replace(userId, hashes(10), BASE_TIME);
      expect(await storage.recoveryCodes.count(userId)).toBe(10);
    });

    it("RC-1: replace voids the old set", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const oldSet = hashes(3);
      const newSet = hashes(2);
      await storage.recoveryCodes.replace(userId, oldSet, BASE_TIME);
      await storage.recoveryCodes.replace(userId, newSet, BASE_TIME + 1);
      expect(await storage.recoveryCodes.count(userId)).toBe(2);
      for (const hash of oldSet) expect(await storage.recoveryCodes.consume(userId, hash)).toBe(false);
      expect(await storage.recoveryCodes.consume(userId, newSet[0] ?? "")).toBe(true);
      expect(await storage.recoveryCodes.count(userId)).toBe(1);
    });

    it("RC-1: 20 users replacing their sets at once each get theirs, a first set and a second (no writer waits on another user's codes)", async () => {
      const storage = await makeStorage();
      const userIds = await Promise.all(Array.from({ length: 20 }, () => createUser(storage)));
      for (const round of [1, 2]) {
        await concurrently(20, (index) => storage.recoveryCodes.replace(userIds[index] as string, hashes(10), BASE_TIME + round));
        for (const userId of userIds) expect(await storage.recoveryCodes.count(userId)).toBe(10);
      }
    });

    it("RC-1, ST-1: 10 replaces of one user's set at once leave one whole set, never two mixed", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const sets = Array.from({ length: 10 }, () => hashes(10));
      await concurrently(10, (index) => storage.recoveryCodes.replace(userId, sets[index] as string[], BASE_TIME));
      expect(await storage.recoveryCodes.count(userId)).toBe(10);
      const kept = [];
      for (const set of sets) if (await storage.recoveryCodes.has(userId, set[0] as string)) kept.push(set);
      expect(kept).toHaveLength(1);
      for (const hash of kept[0] ?? []) expect(await storage.recoveryCodes.has(userId, hash)).toBe(true);
    });

    it("has tells whether an unused code exists, for that user only, and spends nothing", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const stranger = await createUser(storage);
      const [code = "", other = ""] = hashes(2);
      await storage.recoveryCodes.replace(owner, [code], BASE_TIME);
      await storage.recoveryCodes.replace(stranger, [other], BASE_TIME);
      expect(await storage.recoveryCodes.has(owner, code)).toBe(true);
      expect(await storage.recoveryCodes.has(owner, code)).toBe(true);
      expect(await storage.recoveryCodes.has(stranger, code)).toBe(false);
      expect(await storage.recoveryCodes.has(owner, other)).toBe(false);
      expect(await storage.recoveryCodes.count(owner)).toBe(1);
      expect(await storage.recoveryCodes.consume(owner, code)).toBe(true);
      expect(await storage.recoveryCodes.has(owner, code)).toBe(false);
    });

    it("RC-3: a code is consumed once", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const [first = "", second = ""] = hashes(2);
      await storage.recoveryCodes.replace(userId, [first, second], BASE_TIME);
      expect(await storage.recoveryCodes.consume(userId, first)).toBe(true);
      expect(await storage.recoveryCodes.consume(userId, first)).toBe(false);
      expect(await storage.recoveryCodes.consume(userId, uniqueHash())).toBe(false);
      expect(await storage.recoveryCodes.count(userId)).toBe(1);
    });

    it("RC-3, ST-1: 20 concurrent consumers of one code give exactly one winner", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const codes = hashes(10);
      await storage.recoveryCodes.replace(userId, codes, BASE_TIME);
      const results = await concurrently(20, () => storage.recoveryCodes.consume(userId, codes[3] ?? ""));
      expect(countWhere(results, (consumed) => consumed)).toBe(1);
      expect(await storage.recoveryCodes.count(userId)).toBe(9);
    });

    it("ST-2: consume with the right hash but another user's id is false", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const stranger = await createUser(storage);
      const [code = ""] = hashes(1);
      await storage.recoveryCodes.replace(owner, [code], BASE_TIME);
      await storage.recoveryCodes.replace(stranger, hashes(1), BASE_TIME);
      expect(await storage.recoveryCodes.consume(stranger, code)).toBe(false);
      expect(await storage.recoveryCodes.count(owner)).toBe(1);
      expect(await storage.recoveryCodes.count(stranger)).toBe(1);
      expect(await storage.recoveryCodes.consume(owner, code)).toBe(true);
    });

    it("removeAll deletes only that user's codes", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const codes = hashes(3);
      await storage.recoveryCodes.replace(userId, codes, BASE_TIME);
      await storage.recoveryCodes.replace(otherId, hashes(2), BASE_TIME);
      await storage.recoveryCodes.removeAll(userId);
      expect(await storage.recoveryCodes.count(userId)).toBe(0);
      expect(await storage.recoveryCodes.consume(userId, codes[0] ?? "")).toBe(false);
      expect(await storage.recoveryCodes.count(otherId)).toBe(2);
    });
  });
}
