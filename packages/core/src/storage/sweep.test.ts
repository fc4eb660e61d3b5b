// The sweep of expired rows (issue 20 item 5): the auth instance's timer, its lease among
// instances sharing a storage, its bounded batches, its errors, and a timer that never keeps a
// process alive.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { createAuth } from "../auth.js";
import { memoryStorage } from "./memory.js";
import { maxBatchesPerSweep, resolveSweepInterval, sweepBatchSize, sweepExpired } from "./sweep.js";
import type { Storage } from "./types.js";

const config = {
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "s".repeat(43), encryption: "e".repeat(64) },
};

/** `storage` whose `challenges.deleteExpired` is `deleteExpired`, counting its calls. */
function withDeleteExpired(storage: Storage, deleteExpired: (now: number, limit: number) => Promise<number>) {
  const calls: [number, number][] = [];
  const wrapped: Storage = {
    ...storage,
    challenges: {
      ...storage.challenges,
      deleteExpired: (now, limit) => {
        calls.push([now, limit]);
        return deleteExpired(now, limit);
      },
    },
  };
  return { storage: wrapped, calls };
}

describe("sweepInterval", () => {
  it("defaults to five minutes, takes a duration from one second to a day, or false for none", () => {
    expect(resolveSweepInterval(undefined)).toBe(300_000);
    expect(resolveSweepInterval(1)).toBe(1000);
    expect(resolveSweepInterval("1d")).toBe(86_400_000);
    expect(resolveSweepInterval(false)).toBeNull();
    for (const bad of [0, -1, 1.5, "2d", "soon", true]) {
      expect(() => resolveSweepInterval(bad as never), String(bad)).toThrow(/^Portcullis configuration: sweepInterval /);
    }
  });
});

describe("sweepExpired", () => {
  it("calls deleteExpired with the instance's clock and the batch size while batches come back full, then stops", async () => {
    const returns = [sweepBatchSize, sweepBatchSize + 3, 7];
    const { storage, calls } = withDeleteExpired(memoryStorage(), async () => returns.shift() ?? 0);
    expect(await sweepExpired({ storage, now: () => 42 })).toEqual({
      deleted: 2 * sweepBatchSize + 10,
      batches: 3,
      complete: true,
    });
    expect(calls).toEqual([
      [42, sweepBatchSize],
      [42, sweepBatchSize],
      [42, sweepBatchSize],
    ]);
  });

  it("stops after maxBatchesPerSweep calls against a store whose batches never run dry", async () => {
    const { storage, calls } = withDeleteExpired(memoryStorage(), async (_now, limit) => limit);
    expect(await sweepExpired({ storage, now: () => 42 })).toEqual({
      deleted: maxBatchesPerSweep * sweepBatchSize,
      batches: maxBatchesPerSweep,
      complete: false,
    });
    expect(calls).toHaveLength(maxBatchesPerSweep);
  });

  it("stops between batches once its signal is aborted, answering complete: false", async () => {
    const controller = new AbortController();
    const { storage, calls } = withDeleteExpired(memoryStorage(), async (_now, limit) => {
      if (calls.length === 3) controller.abort();
      return limit;
    });
    expect(await sweepExpired({ storage, now: () => 42 }, { signal: controller.signal })).toEqual({
      deleted: 3 * sweepBatchSize,
      batches: 3,
      complete: false,
    });
    expect(calls).toHaveLength(3);
  });

  it("deletes from memory storage the expired challenges, throttling windows and sessions, and nothing live", async () => {
    const storage = memoryStorage();
    const now = 1_000_000;
    for (const [id, expiresAt] of [
      ["gone", now],
      ["kept", now + 1],
    ] as const) {
      await storage.challenges.put({ id, kind: "oauth_state", userId: null, data: {}, attempts: 0, createdAt: 1, expiresAt });
      await storage.sessions.createSession({
        id,
        userId: "u",
        tokenVersion: 0,
        amr: ["pwd"],
        authTime: 1,
        createdAt: 1,
        expiresAt,
        revokedAt: null,
        lastUsedAt: 1,
        userAgent: null,
        address: null,
        refreshHash: id,
        refreshGeneration: 0,
        refreshExpiresAt: expiresAt,
      });
      await storage.counters.hit(id, 5, expiresAt - 1, 1);
    }
    expect(await sweepExpired({ storage, now: () => now })).toEqual({ deleted: 3, batches: 1, complete: true });
    expect(storage.sizes()).toEqual({ users: 0, sessions: 1, challenges: 1, counters: 1 });
    expect(await storage.sessions.findSession("kept")).not.toBeNull();
    expect(await storage.challenges.find("kept", "oauth_state", now)).not.toBeNull();
    expect(await storage.counters.peek("kept", now)).toBe(1);
  });
});

describe("the auth instance's timer", () => {
  it("issue 20 item 5: sweeps every sweepInterval with no request at all; of two instances sharing a storage, one sweeps per interval", async () => {
    const shared = memoryStorage();
    const frozen = 1_000_000;
    const { storage, calls } = withDeleteExpired(shared, (now, limit) => shared.challenges.deleteExpired(now, limit));
    // Held to the end: the timer holds its instance only weakly, and a collected one stops sweeping.
    const instances = [
      createAuth({ ...config, storage, sweepInterval: 1, now: () => frozen }),
      createAuth({ ...config, storage, sweepInterval: 1, now: () => frozen }),
    ];
    await vi.waitFor(() => expect(calls).toEqual([[frozen, sweepBatchSize]]), { timeout: 5000 });
    // The lease's window is one interval of the instances' clock, which stands still here: no second sweep.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(calls).toEqual([[frozen, sweepBatchSize]]);
    expect(instances).toHaveLength(2);
  });

  it('a failed sweep goes to onInternalError as "sweep", and the next interval tries again', async () => {
    const reported: unknown[] = [];
    let failures = 1;
    const { storage, calls } = withDeleteExpired(memoryStorage(), async () => {
      if (failures-- > 0) throw new Error("storage away");
      return 0;
    });
    const auth = createAuth({
      ...config,
      storage,
      sweepInterval: 1,
      onInternalError: (error, requestId) => reported.push([error, requestId]),
    });
    await vi.waitFor(() => expect(calls.length).toBeGreaterThanOrEqual(2), { timeout: 6000 });
    expect(reported).toEqual([[new Error("storage away"), "sweep"]]);
    expect(auth.config.sweepIntervalMs).toBe(1000);
  });

  it("sweepInterval: false starts no timer", async () => {
    const { storage, calls } = withDeleteExpired(memoryStorage(), async () => 0);
    createAuth({ ...config, storage, sweepInterval: false });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(calls).toEqual([]);
  });

  it("never keeps a process alive: a process that made an auth instance and nothing else exits at once", () => {
    const repositoryRoot = fileURLToPath(new URL("../../../../", import.meta.url));
    const core = fileURLToPath(new URL("../index.ts", import.meta.url));
    const program = `import { createAuth, memoryStorage } from ${JSON.stringify(core)};
      createAuth({ ...${JSON.stringify(config)}, storage: memoryStorage(), sweepInterval: 1 });
      console.log("made");`;
    const started = performance.now();
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
      cwd: repositoryRoot,
      encoding: "utf8",
      timeout: 25_000,
    });
    expect({ status: child.status, signal: child.signal, out: child.stdout.trim(), err: child.stderr }).toEqual({
      status: 0,
      signal: null,
      out: "made",
      err: "",
    });
    expect(performance.now() - started).toBeLessThan(25_000);
  });
});
