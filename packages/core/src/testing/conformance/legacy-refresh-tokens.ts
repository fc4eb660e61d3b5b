import type { SuiteContext } from "./harness.js";
import { BASE_TIME, createUser, sampleLegacyRefreshToken, sampleSession, uniqueHash } from "./samples.js";

/**
 * Registers the tests of `sessions.findLegacyRefreshToken`, for a store that has it (one whose
 * earlier releases kept a row per refresh token): it reads such a token by its hash, spent or not,
 * changing nothing, and finds nothing else, a session's current hash included (RT-1, RT-2). The
 * tokens it reads are stored through the run's `insertLegacyRefreshToken`; without one, only the
 * tokens it must not find are checked. A store without the method passes them as not applying.
 */
export function legacyRefreshTokenTests({
  test: { describe, it, expect },
  makeStorage,
  insertLegacyRefreshToken,
}: SuiteContext): void {
  describe("an earlier release's refresh tokens (findLegacyRefreshToken, where the store has it)", () => {
    it("RT-1: findLegacyRefreshToken finds no unknown hash, nor a session's current one", async () => {
      const storage = await makeStorage();
      const find = storage.sessions.findLegacyRefreshToken?.bind(storage.sessions);
      if (!find) return;
      const session = sampleSession(await createUser(storage));
      await storage.sessions.createSession(session);
      expect(await find(uniqueHash())).toBeNull();
      expect(await find(session.refreshHash as string)).toBeNull();
    });

    it("RT-2: findLegacyRefreshToken reads a stored token, unspent or spent (when spent), the same on every read", async () => {
      const storage = await makeStorage();
      const find = storage.sessions.findLegacyRefreshToken?.bind(storage.sessions);
      if (!find || !insertLegacyRefreshToken) return;
      const session = sampleSession(await createUser(storage));
      await storage.sessions.createSession(session);
      const unspent = sampleLegacyRefreshToken(session, { hash: session.refreshHash as string });
      const spent = sampleLegacyRefreshToken(session, { createdAt: BASE_TIME - 10, spentAt: BASE_TIME });
      for (const token of [unspent, spent]) await insertLegacyRefreshToken(storage, token);
      for (const token of [unspent, spent, unspent, spent]) expect(await find(token.hash)).toEqual(token);
      expect(await storage.sessions.findSession(session.id)).toEqual(session);
    });
  });
}
