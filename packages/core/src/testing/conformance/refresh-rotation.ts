import { rotatedSession } from "../../storage/refresh-rotation.js";
import type { RefreshRotation, RotationResult, SessionRecord, Storage, UserRecord } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleSession, sampleTotp, uniqueHash, uniqueId } from "./samples.js";

const HOUR = 3_600_000;
const use = { userAgent: "Agent/2.0", address: "198.51.100.0/24" };

/**
 * A rotation of `session`'s current refresh token half an hour into {@link BASE_TIME}, to a fresh
 * hash at the next generation, with an idle lifetime of two hours.
 */
export function rotationOf(session: SessionRecord, overrides: Partial<RefreshRotation> = {}): RefreshRotation {
  return {
    sessionId: session.id,
    hash: session.refreshHash ?? uniqueHash(),
    now: BASE_TIME + HOUR / 2,
    nextHash: uniqueHash(),
    nextGeneration: session.refreshGeneration + 1,
    idleMs: 2 * HOUR,
    use,
    ...overrides,
  };
}

/** The `totpEnabled` of a rotation that rotated; undefined for any other outcome. */
const totpEnabledOf = (result: RotationResult) => (result.outcome === "rotated" ? result.totpEnabled : undefined);

/** A stored user and a stored session of theirs; `session` and `user` override their fields. */
async function storedSession(storage: Storage, session: Partial<SessionRecord> = {}, user: Partial<UserRecord> = {}) {
  const userId = await createUser(storage, user);
  const stored = sampleSession(userId, session);
  await storage.sessions.createSession(stored);
  return stored;
}

/**
 * Registers the tests of a refresh's one write, `sessions.rotateRefresh` (RT-1, RT-2, RT-3, RT-4,
 * TV-2, ST-1): the session takes the new token only in place of its current one, only while it and
 * its user may refresh, and of concurrent rotations of one token one does.
 */
export function refreshRotationTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("rotating a session's refresh token (RT-1, RT-2, RT-3, RT-4, TV-2)", () => {
    it("RT-1, RT-2: rotateRefresh replaces the session's current hash: the session after it is rotatedSession(before, rotation), the answer the session, user and TOTP state before the write", async () => {
      const storage = await makeStorage();
      const session = await storedSession(storage);
      const user = await storage.users.findById(session.userId);
      const rotation = rotationOf(session);
      expect(await storage.sessions.rotateRefresh(rotation)).toEqual({ outcome: "rotated", session, user, totpEnabled: false });
      const after = {
        ...session,
        refreshHash: rotation.nextHash,
        refreshGeneration: 1,
        refreshExpiresAt: rotation.now + rotation.idleMs,
        lastUsedAt: rotation.now,
        ...use,
      };
      expect(await storage.sessions.findSession(session.id)).toEqual(after);
      expect(after).toEqual(rotatedSession(session, rotation));
      expect(await storage.users.findById(session.userId)).toEqual(user);
    });

    it("RT-2: the hash replaced, presented again, is refused and writes nothing; the new one rotates on, each generation recorded", async () => {
      const storage = await makeStorage();
      const session = await storedSession(storage);
      const first = rotationOf(session);
      await storage.sessions.rotateRefresh(first);
      const rotated = (await storage.sessions.findSession(session.id)) as SessionRecord;
      const again = rotationOf(session, { now: first.now + 1000, use: { userAgent: "Other/1.0", address: null } });
      expect(await storage.sessions.rotateRefresh(again)).toEqual({ outcome: "refused" });
      expect(await storage.sessions.findSession(session.id)).toEqual(rotated);
      let current = rotated;
      for (const generation of [2, 3, 4]) {
        const next = rotationOf(current, { now: first.now + generation * 1000 });
        expect((await storage.sessions.rotateRefresh(next)).outcome).toBe("rotated");
        current = (await storage.sessions.findSession(session.id)) as SessionRecord;
        expect(current).toEqual(rotatedSession(rotated, next));
        expect(current.refreshGeneration).toBe(generation);
      }
    });

    it("RT-4: the new idle expiry never passes the session's absolute expiry, which the rotation leaves as it was", async () => {
      const storage = await makeStorage();
      const session = await storedSession(storage, { expiresAt: BASE_TIME + HOUR });
      expect((await storage.sessions.rotateRefresh(rotationOf(session))).outcome).toBe("rotated");
      const after = await storage.sessions.findSession(session.id);
      expect(after?.refreshExpiresAt).toBe(session.expiresAt);
      expect(after?.expiresAt).toBe(session.expiresAt);
    });

    it("totpEnabled is true only for a user whose TOTP factor is enabled, not pending", async () => {
      const storage = await makeStorage();
      const pending = await storedSession(storage);
      await storage.totp.putPending(sampleTotp(pending.userId));
      expect(totpEnabledOf(await storage.sessions.rotateRefresh(rotationOf(pending)))).toBe(false);
      const enabled = await storedSession(storage);
      await storage.totp.putPending(sampleTotp(enabled.userId));
      await storage.totp.enable(enabled.userId);
      expect(totpEnabledOf(await storage.sessions.rotateRefresh(rotationOf(enabled)))).toBe(true);
    });

    const now = BASE_TIME + HOUR / 2;
    const refusals: [string, Partial<SessionRecord>, Partial<UserRecord>, Partial<RefreshRotation>][] = [
      ["RT-2: a hash the session does not hold (an earlier one, or none it ever held)", {}, {}, { hash: uniqueHash() }],
      ["RT-2: any hash, to a session that holds no refresh token", { refreshHash: null }, {}, {}],
      ["RT-4: a revoked session", { revokedAt: BASE_TIME + 1 }, {}, {}],
      // Its token's idle expiry later, so that only the session's own expiry refuses it.
      ["RT-4: a session past its absolute expiry (expiresAt <= now)", { expiresAt: now, refreshExpiresAt: now + HOUR }, {}, {}],
      ["RT-4: a refresh token past its idle expiry (refreshExpiresAt <= now)", { refreshExpiresAt: now }, {}, {}],
      ["RT-4: a disabled user", {}, { disabled: true }, {}],
      ["TV-2: a user at another token version", {}, { tokenVersion: 1 }, {}],
    ];
    for (const [name, session, user, rotation] of refusals) {
      it(`${name} is refused, writing nothing`, async () => {
        const storage = await makeStorage();
        const stored = await storedSession(storage, session, user);
        const userBefore = await storage.users.findById(stored.userId);
        expect(await storage.sessions.rotateRefresh(rotationOf(stored, rotation))).toEqual({ outcome: "refused" });
        expect(await storage.sessions.findSession(stored.id)).toEqual(stored);
        expect(await storage.users.findById(stored.userId)).toEqual(userBefore);
      });
    }

    it("RT-2: an unknown session is refused and nothing is created", async () => {
      const storage = await makeStorage();
      const rotation = rotationOf(sampleSession(uniqueId("user")));
      expect(await storage.sessions.rotateRefresh(rotation)).toEqual({ outcome: "refused" });
      expect(await storage.sessions.findSession(rotation.sessionId)).toBeNull();
    });

    it("TV-2: a session whose user is missing is refused, writing nothing (where the store can hold one)", async () => {
      const storage = await makeStorage();
      const orphan = sampleSession(uniqueId("user"));
      try {
        await storage.sessions.createSession(orphan);
      } catch {
        return; // The store refuses a session of no user (a foreign key): it never holds one to rotate.
      }
      expect(await storage.sessions.rotateRefresh(rotationOf(orphan))).toEqual({ outcome: "refused" });
      expect(await storage.sessions.findSession(orphan.id)).toEqual(orphan);
    });

    it("RT-3, ST-1: of 20 concurrent rotations of one hash exactly one rotates, and the session holds that one's nextHash", async () => {
      const storage = await makeStorage();
      const session = await storedSession(storage);
      const rotations = Array.from({ length: 20 }, (_, index) => rotationOf(session, { now: BASE_TIME + HOUR / 2 + index }));
      const results = await concurrently(20, (index) => storage.sessions.rotateRefresh(rotations[index] as RefreshRotation));
      expect(countWhere(results, (result) => result.outcome === "rotated")).toBe(1);
      expect(countWhere(results, (result) => result.outcome === "refused")).toBe(19);
      const winner = rotations[results.findIndex((result) => result.outcome === "rotated")] as RefreshRotation;
      expect(await storage.sessions.findSession(session.id)).toEqual(rotatedSession(session, winner));
    });

    it("RT-3: two sessions rotate independently, at once, and neither takes the other's hash", async () => {
      const storage = await makeStorage();
      const first = await storedSession(storage);
      const second = sampleSession(first.userId);
      await storage.sessions.createSession(second);
      const crossed = rotationOf(first, { hash: second.refreshHash as string });
      expect(await storage.sessions.rotateRefresh(crossed)).toEqual({ outcome: "refused" });
      const rotations = [rotationOf(first), rotationOf(second)] as const;
      const results = await Promise.all(rotations.map((rotation) => storage.sessions.rotateRefresh(rotation)));
      expect(results.map((result) => result.outcome)).toEqual(["rotated", "rotated"]);
      expect(await storage.sessions.findSession(first.id)).toEqual(rotatedSession(first, rotations[0]));
      expect(await storage.sessions.findSession(second.id)).toEqual(rotatedSession(second, rotations[1]));
    });
  });
}
