import { rotateRefreshToken } from "../../storage/refresh-rotation.js";
import type { RefreshRotation, RotationResult, SessionRecord, Storage } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleRefreshToken, sampleSession, sampleTotp, uniqueHash } from "./samples.js";

const HOUR = 3_600_000;
const use = { userAgent: "Agent/2.0", address: "198.51.100.0/24" };

/** A rotation of `hash` an hour into {@link BASE_TIME}, to a fresh hash, with an idle lifetime of two hours. */
function rotationOf(hash: string, overrides: Partial<RefreshRotation> = {}): RefreshRotation {
  return { hash, now: BASE_TIME + HOUR / 2, nextHash: uniqueHash(), idleMs: 2 * HOUR, use, ...overrides };
}

/** The `totpEnabled` of a rotation that rotated; undefined for any other outcome. */
const totpEnabledOf = (result: RotationResult) => (result.outcome === "rotated" ? result.totpEnabled : undefined);

/** A stored user, a stored session of theirs and a stored unspent token of it; `session` overrides the session's fields. */
async function tokenOfSession(
  storage: Storage,
  session: Partial<SessionRecord> = {},
  user: Parameters<typeof createUser>[1] = {},
) {
  const userId = await createUser(storage, user);
  const stored = sampleSession(userId, session);
  await storage.sessions.createSession(stored);
  const token = sampleRefreshToken(stored);
  await storage.sessions.insertRefreshToken(token);
  return { userId, session: stored, token };
}

/**
 * Registers the tests of a refresh's writes, as core makes them: through the store's
 * `rotateRefreshToken` when it has one, else through its single operations (RT-2, RT-3, RT-4,
 * TV-2, ST-1).
 */
export function refreshRotationTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("rotating a refresh token (RT-2, RT-3, RT-4, TV-2)", () => {
    it("RT-2: a live token is spent, its replacement stored unspent and the session's use recorded, all in one rotation", async () => {
      const storage = await makeStorage();
      const { session, token } = await tokenOfSession(storage);
      const rotation = rotationOf(token.hash);
      const result = await rotateRefreshToken(storage, rotation);
      const spent = { ...token, spentAt: rotation.now };
      const next = {
        hash: rotation.nextHash,
        sessionId: session.id,
        userId: session.userId,
        createdAt: rotation.now,
        expiresAt: rotation.now + rotation.idleMs,
        spentAt: null,
      };
      const user = await storage.users.findById(session.userId);
      expect(result).toEqual({ outcome: "rotated", token: spent, session, user, totpEnabled: false, next });
      expect(await storage.sessions.findRefreshToken(token.hash)).toEqual(spent);
      expect(await storage.sessions.findRefreshToken(rotation.nextHash)).toEqual(next);
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, lastUsedAt: rotation.now, ...use });
    });

    it("RT-4: the replacement never outlives its session", async () => {
      const storage = await makeStorage();
      const { session, token } = await tokenOfSession(storage, { expiresAt: BASE_TIME + HOUR });
      const rotation = rotationOf(token.hash);
      const result = await rotateRefreshToken(storage, rotation);
      expect(result.outcome === "rotated" ? result.next.expiresAt : null).toBe(session.expiresAt);
      expect((await storage.sessions.findRefreshToken(rotation.nextHash))?.expiresAt).toBe(session.expiresAt);
    });

    it("totpEnabled is true only for a user whose TOTP factor is enabled, not pending", async () => {
      const storage = await makeStorage();
      const pending = await tokenOfSession(storage);
      await storage.totp.putPending(sampleTotp(pending.userId));
      expect(totpEnabledOf(await rotateRefreshToken(storage, rotationOf(pending.token.hash)))).toBe(false);
      const enabled = await tokenOfSession(storage);
      await storage.totp.putPending(sampleTotp(enabled.userId));
      await storage.totp.enable(enabled.userId);
      expect(totpEnabledOf(await rotateRefreshToken(storage, rotationOf(enabled.token.hash)))).toBe(true);
    });

    it("RT-2: a spent token is already_spent and writes nothing; an unknown one is unknown", async () => {
      const storage = await makeStorage();
      const { session, token } = await tokenOfSession(storage);
      const first = rotationOf(token.hash);
      await rotateRefreshToken(storage, first);
      const touched = await storage.sessions.findSession(session.id);
      const again = rotationOf(token.hash, { now: first.now + 1000, use: { userAgent: "Other/1.0", address: null } });
      expect(await rotateRefreshToken(storage, again)).toEqual({
        outcome: "already_spent",
        token: { ...token, spentAt: first.now },
      });
      expect(await storage.sessions.findRefreshToken(again.nextHash)).toBeNull();
      expect(await storage.sessions.findSession(session.id)).toEqual(touched);
      const unknown = rotationOf(uniqueHash());
      expect(await rotateRefreshToken(storage, unknown)).toEqual({ outcome: "unknown" });
      expect(await storage.sessions.findRefreshToken(unknown.nextHash)).toBeNull();
    });

    const refusals: [string, Partial<SessionRecord>, Parameters<typeof createUser>[1], boolean][] = [
      ["a session revoked", { revokedAt: BASE_TIME + 1 }, {}, false],
      ["a session past its absolute expiry", { expiresAt: BASE_TIME + HOUR / 2 }, {}, false],
      ["a disabled user", {}, { disabled: true }, false],
      ["a user at another token version (TV-2)", {}, { tokenVersion: 1 }, false],
      ["a token past its idle expiry", {}, {}, true],
    ];
    for (const [name, session, user, tokenExpired] of refusals) {
      it(`RT-4, TV-2: ${name} is refused: the token spent, no replacement, the session untouched`, async () => {
        const storage = await makeStorage();
        const stored = await tokenOfSession(storage, session, user);
        const rotation = rotationOf(stored.token.hash, tokenExpired ? { now: stored.token.expiresAt } : {});
        const result = await rotateRefreshToken(storage, rotation);
        expect(result).toEqual({
          outcome: "refused",
          token: { ...stored.token, spentAt: rotation.now },
          session: stored.session,
          user: await storage.users.findById(stored.userId),
        });
        expect(await storage.sessions.findRefreshToken(rotation.nextHash)).toBeNull();
        expect(await storage.sessions.findSession(stored.session.id)).toEqual(stored.session);
        expect((await rotateRefreshToken(storage, rotationOf(stored.token.hash))).outcome).toBe("already_spent");
      });
    }

    it("ST-2: a token whose record names another user than its session is refused", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const other = await createUser(storage);
      const session = sampleSession(owner);
      await storage.sessions.createSession(session);
      const token = sampleRefreshToken(session, { userId: other });
      await storage.sessions.insertRefreshToken(token);
      const rotation = rotationOf(token.hash);
      expect((await rotateRefreshToken(storage, rotation)).outcome).toBe("refused");
      expect(await storage.sessions.findRefreshToken(rotation.nextHash)).toBeNull();
      expect(await storage.sessions.findSession(session.id)).toEqual(session);
    });

    it("RT-3, ST-1: 20 concurrent rotations of one token: one rotated, 19 already_spent, one replacement stored", async () => {
      const storage = await makeStorage();
      const { session, token } = await tokenOfSession(storage);
      const rotations = Array.from({ length: 20 }, (_, index) => rotationOf(token.hash, { now: BASE_TIME + HOUR / 2 + index }));
      const results = await concurrently(20, (index) => rotateRefreshToken(storage, rotations[index] as RefreshRotation));
      expect(countWhere(results, (result) => result.outcome === "rotated")).toBe(1);
      expect(countWhere(results, (result) => result.outcome === "already_spent")).toBe(19);
      const stored = await Promise.all(rotations.map((rotation) => storage.sessions.findRefreshToken(rotation.nextHash)));
      expect(countWhere(stored, (record) => record !== null)).toBe(1);
      const winner = rotations[results.findIndex((result) => result.outcome === "rotated")] as RefreshRotation;
      expect((await storage.sessions.findSession(session.id))?.lastUsedAt).toBe(winner.now);
      expect((await storage.sessions.findRefreshToken(token.hash))?.spentAt).toBe(winner.now);
    });
  });
}
