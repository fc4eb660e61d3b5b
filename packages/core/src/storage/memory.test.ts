import { describe, expect, it } from "vitest";
import { runStorageConformance } from "../testing/index.js";
import { type MemoryStorage, type MemoryStorageSizes, expiringMap, memoryStorage } from "./memory.js";

runStorageConformance({ name: "memory", makeStorage: memoryStorage, test: { describe, it, expect } });

const minute = 60_000;

/**
 * Feeds `total` entries with distinct keys into one table while the clock moves `stepMs` per
 * entry, and returns the largest size the table reached.
 */
async function peakSize(
  table: keyof MemoryStorageSizes,
  total: number,
  stepMs: number,
  insert: (storage: MemoryStorage, index: number, now: number) => Promise<unknown>,
): Promise<{ peak: number; final: number }> {
  const storage = memoryStorage();
  let peak = 0;
  for (let index = 0; index < total; index += 1) {
    await insert(storage, index, index * stepMs);
    peak = Math.max(peak, storage.sizes()[table]);
  }
  return { peak, final: storage.sizes()[table] };
}

describe("memory storage prunes what has expired (bounded memory under a stream of distinct keys)", () => {
  // 60,000 distinct keys, one every 10 ms: at most 6,000 of them are live in any one-minute window.
  const total = 60_000;
  const stepMs = 10;
  const live = minute / stepMs;

  it("RL-1: counter windows of distinct keys are pruned once their window ends", async () => {
    const { peak } = await peakSize("counters", total, stepMs, (storage, index, now) =>
      storage.counters.hit(`account:${index}`, 5, minute, now),
    );
    expect(peak).toBeLessThanOrEqual(2 * live + 1);
  });

  it("expired challenges are pruned", async () => {
    const { peak } = await peakSize("challenges", total, stepMs, (storage, index, now) =>
      storage.challenges.put({
        id: `challenge-${index}`,
        kind: "totp_login",
        userId: null,
        data: {},
        attempts: 0,
        createdAt: now,
        expiresAt: now + minute,
      }),
    );
    expect(peak).toBeLessThanOrEqual(2 * live + 1);
  });

  it("expired refresh tokens, spent ones included, and expired sessions are pruned", async () => {
    const storage = memoryStorage();
    let peakTokens = 0;
    let peakSessions = 0;
    for (let index = 0; index < total; index += 1) {
      const now = index * stepMs;
      const session = {
        id: `session-${index}`,
        userId: "user",
        tokenVersion: 0,
        amr: ["pwd" as const],
        authTime: now,
        createdAt: now,
        expiresAt: now + minute,
        revokedAt: null,
        lastUsedAt: now,
        userAgent: null,
        address: null,
      };
      await storage.sessions.createSession(session);
      const hash = `token-${index}`;
      await storage.sessions.insertRefreshToken({
        hash,
        sessionId: session.id,
        userId: "user",
        createdAt: now,
        expiresAt: now + minute,
        spentAt: null,
      });
      expect((await storage.sessions.spendRefreshToken(hash, now)).outcome).toBe("spent");
      peakTokens = Math.max(peakTokens, storage.sizes().refreshTokens);
      peakSessions = Math.max(peakSessions, storage.sizes().sessions);
    }
    expect(peakTokens).toBeLessThanOrEqual(2 * live + 1);
    expect(peakSessions).toBeLessThanOrEqual(2 * live + 1);
  });

  it("live entries are never pruned: a spent refresh token is still told apart until it expires", async () => {
    const storage = memoryStorage();
    const keep = {
      hash: "kept",
      sessionId: "s",
      userId: "user",
      createdAt: 0,
      expiresAt: 10 * minute,
      spentAt: null,
    };
    await storage.sessions.insertRefreshToken(keep);
    await storage.sessions.spendRefreshToken("kept", 0);
    await storage.counters.hit("kept", 5, 10 * minute, 0);
    for (let index = 0; index < 5000; index += 1) {
      const now = index * 100;
      await storage.sessions.insertRefreshToken({ ...keep, hash: `other-${index}`, createdAt: now, expiresAt: now + 1 });
      await storage.counters.hit(`other-${index}`, 5, 1, now);
    }
    expect((await storage.sessions.spendRefreshToken("kept", 499_900)).outcome).toBe("already_spent");
    expect(await storage.counters.peek("kept", 499_900)).toBe(1);
    expect(storage.sizes().refreshTokens).toBeLessThan(2100);
    expect(storage.sizes().counters).toBeLessThan(2100);
  });
});

describe("expiringMap: a sweep reads only what has expired", () => {
  it("deleteExpired drops the expired entries in expiry order, up to its limit, reading no live one", () => {
    const reads: string[] = [];
    const map = expiringMap<{ id: string; at: number }>((value) => {
      reads.push(value.id);
      return value.at;
    });
    for (let index = 0; index < 500; index += 1) map.set(`live-${index}`, { id: `live-${index}`, at: 1_000 + index }, 0);
    for (const at of [30, 10, 20]) map.set(`due-${at}`, { id: `due-${at}`, at }, 0);
    reads.length = 0;
    expect(map.deleteExpired(30, 2)).toBe(2);
    expect([...map.entries.keys()].filter((key) => key.startsWith("due-"))).toEqual(["due-30"]);
    expect(map.deleteExpired(30, 10)).toBe(1);
    expect(map.deleteExpired(999, 10)).toBe(0);
    expect(reads).toEqual(["due-10", "due-20", "due-30"]);
    expect(map.deleteExpired(1_001, 10)).toBe(2);
    expect(map.entries.size).toBe(498);
  });

  it("keys deleted before their expiry (consumed challenges) leave the heap once due, with no sweep called", () => {
    const map = expiringMap<number>((at) => at);
    for (let index = 0; index < 20_000; index += 1) {
      map.set(`consumed-${index}`, index + 10, index);
      map.entries.delete(`consumed-${index}`);
    }
    expect(map.entries.size).toBe(0);
    expect(map.queued).toBeLessThan(2100);
  });

  it("a key stored again keeps its new expiry; a key deleted meanwhile is passed over", () => {
    const dropped: string[] = [];
    const map = expiringMap<number>(
      (at) => at,
      (key) => dropped.push(key),
    );
    map.set("renewed", 10, 0);
    map.set("renewed", 50, 5);
    map.set("gone", 10, 0);
    map.entries.delete("gone");
    map.set("due", 20, 0);
    expect(map.deleteExpired(20, 10)).toBe(1);
    expect(dropped).toEqual(["due"]);
    expect(map.entries.get("renewed")).toBe(50);
    expect(map.deleteExpired(50, 10)).toBe(1);
    expect(dropped).toEqual(["due", "renewed"]);
    expect(map.entries.size).toBe(0);
  });
});
