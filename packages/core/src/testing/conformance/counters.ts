import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, uniqueId } from "./samples.js";

/** Registers the `counters` suite: fixed windows, and exactly `limit` of N concurrent hits allowed (RL-4). */
export function countersSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  const windowMs = 60_000;

  describe("counters", () => {
    it("hit counts up to the limit in a window that starts at the first hit, then refuses", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      const resetAt = BASE_TIME + windowMs;
      expect(await storage.counters.hit(key, 3, windowMs, BASE_TIME)).toEqual({ count: 1, allowed: true, resetAt });
      expect(await storage.counters.hit(key, 3, windowMs, BASE_TIME + 10)).toEqual({ count: 2, allowed: true, resetAt });
      expect(await storage.counters.hit(key, 3, windowMs, BASE_TIME + 20)).toEqual({ count: 3, allowed: true, resetAt });
      expect(await storage.counters.hit(key, 3, windowMs, BASE_TIME + 30)).toEqual({ count: 3, allowed: false, resetAt });
      expect(await storage.counters.peek(key, BASE_TIME + 40)).toBe(3);
    });

    it("RL-4: with limit 5, 50 concurrent hits on a fresh key allow exactly 5", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      const results = await concurrently(50, () => storage.counters.hit(key, 5, windowMs, BASE_TIME));
      expect(countWhere(results, (result) => result.allowed)).toBe(5);
      expect(
        results
          .filter((result) => result.allowed)
          .map((result) => result.count)
          .sort((a, b) => a - b),
      ).toEqual([1, 2, 3, 4, 5]);
      expect(countWhere(results, (result) => !result.allowed && result.count === 5)).toBe(45);
      expect(await storage.counters.peek(key, BASE_TIME)).toBe(5);
    });

    it("RL-4: a hit below the limit is allowed while successes reset the key at the same time", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      const results = await concurrently(200, async () => {
        const hit = await storage.counters.hit(key, 1_000_000, windowMs, BASE_TIME);
        await storage.counters.reset(key);
        return hit;
      });
      expect(results.filter((result) => !result.allowed)).toEqual([]);
    });

    it("a limit of 0 refuses every hit and counts none", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      expect((await storage.counters.hit(key, 0, windowMs, BASE_TIME)).allowed).toBe(false);
      expect(await storage.counters.peek(key, BASE_TIME)).toBe(0);
    });

    it("an expired window resets: the next hit starts a new window", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      await storage.counters.hit(key, 2, windowMs, BASE_TIME);
      await storage.counters.hit(key, 2, windowMs, BASE_TIME + 1);
      expect((await storage.counters.hit(key, 2, windowMs, BASE_TIME + windowMs - 1)).allowed).toBe(false);
      expect(await storage.counters.peek(key, BASE_TIME + windowMs - 1)).toBe(2);
      expect(await storage.counters.peek(key, BASE_TIME + windowMs)).toBe(0);
      const later = BASE_TIME + windowMs + 500;
      expect(await storage.counters.hit(key, 2, windowMs, later)).toEqual({ count: 1, allowed: true, resetAt: later + windowMs });
      expect(await storage.counters.peek(key, later)).toBe(1);
    });

    it("peek of an unknown key is 0, and keys are counted apart", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      const otherKey = uniqueId("counter");
      expect(await storage.counters.peek(key, BASE_TIME)).toBe(0);
      await storage.counters.hit(key, 5, windowMs, BASE_TIME);
      await storage.counters.hit(key, 5, windowMs, BASE_TIME);
      expect(await storage.counters.hit(otherKey, 5, windowMs, BASE_TIME)).toEqual({
        count: 1,
        allowed: true,
        resetAt: BASE_TIME + windowMs,
      });
      expect(await storage.counters.peek(key, BASE_TIME)).toBe(2);
      expect(await storage.counters.peek(otherKey, BASE_TIME)).toBe(1);
    });

    it("reset clears the key so the next hit starts a new window", async () => {
      const storage = await makeStorage();
      const key = uniqueId("counter");
      const otherKey = uniqueId("counter");
      await storage.counters.hit(key, 1, windowMs, BASE_TIME);
      await storage.counters.hit(otherKey, 1, windowMs, BASE_TIME);
      expect((await storage.counters.hit(key, 1, windowMs, BASE_TIME + 1)).allowed).toBe(false);
      await storage.counters.reset(key);
      expect(await storage.counters.peek(key, BASE_TIME + 2)).toBe(0);
      expect(await storage.counters.peek(otherKey, BASE_TIME + 2)).toBe(1);
      expect(await storage.counters.hit(key, 1, windowMs, BASE_TIME + 3)).toEqual({
        count: 1,
        allowed: true,
        resetAt: BASE_TIME + 3 + windowMs,
      });
      await storage.counters.reset(uniqueId("counter"));
    });
  });
}
