import { describe, expect, it } from "vitest";
import { sampleSession, sampleUser } from "../testing/conformance/samples.js";
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

  it("expired sessions, rotated or not, are pruned", async () => {
    const { peak } = await peakSize("sessions", total, stepMs, async (storage, index, now) => {
      const session = sampleSession("user", {
        id: `session-${index}`,
        createdAt: now,
        expiresAt: now + minute,
        refreshExpiresAt: now + minute,
      });
      await storage.sessions.createSession(session);
      if (index % 2 === 0) return;
      const rotation = {
        sessionId: session.id,
        hash: session.refreshHash as string,
        nextHash: `next-${index}`,
        nextGeneration: 1,
      };
      await storage.sessions.rotateRefresh({ ...rotation, now, idleMs: minute, use: { userAgent: null, address: null } });
    });
    expect(peak).toBeLessThanOrEqual(2 * live + 1);
  });

  it("live entries are never pruned: a live session still rotates after a stream of short-lived ones", async () => {
    const storage = memoryStorage();
    await storage.users.create(sampleUser({ id: "user" }));
    const kept = sampleSession("user", { createdAt: 0, expiresAt: 10 * minute, refreshExpiresAt: 10 * minute });
    await storage.sessions.createSession(kept);
    await storage.counters.hit("kept", 5, 10 * minute, 0);
    for (let index = 0; index < 5000; index += 1) {
      const now = index * 100;
      await storage.sessions.createSession(sampleSession("user", { createdAt: now, expiresAt: now + 1 }));
      await storage.counters.hit(`other-${index}`, 5, 1, now);
    }
    const rotation = { sessionId: kept.id, hash: kept.refreshHash as string, nextHash: "next", nextGeneration: 1 };
    const rotated = await storage.sessions.rotateRefresh({
      ...rotation,
      now: 499_900,
      idleMs: minute,
      use: { userAgent: null, address: null },
    });
    expect(rotated.outcome).toBe("rotated");
    expect(await storage.counters.peek("kept", 499_900)).toBe(1);
    expect(storage.sizes().sessions).toBeLessThan(2100);
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
