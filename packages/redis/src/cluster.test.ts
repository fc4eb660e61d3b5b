// The Redis stores on a real Redis Cluster of three primaries with one replica each, started by
// this file on loopback ports of its own (test/fixtures/redis-cluster.ts): the conformance kit,
// one challenge consumed from two processes at once, and a primary killed mid-run.
import { ErrorCode, isAuthError, memoryStorage } from "@portcullis/core";
import { runStorageConformance } from "@portcullis/core/testing";
import { createCluster } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisCluster, redisClusterMissing, startRedisCluster } from "../../../test/fixtures/redis-cluster.js";
import { redisCli } from "../../../test/fixtures/redis-server.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { BASE_TIME, sampleChallenge } from "../../core/src/testing/conformance/samples.js";
import { checkEvictionPolicy } from "./eviction-policy.js";
import { startConsumerProcess, uniquePrefix, until } from "./redis.test-support.js";
import { redisStores } from "./redis-stores.js";

const describeWithCluster = describeNeedingService("packages/redis/src/cluster.test.ts", redisClusterMissing());

describeWithCluster("Redis stores on a Redis Cluster of three primaries and three replicas", () => {
  const prefix = uniquePrefix("cluster");
  let cluster: RedisCluster | undefined;
  let client: ReturnType<typeof createCluster>;
  const clientErrors: unknown[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = createCluster({
      rootNodes: cluster.urls.map((url) => ({ url })),
      defaults: { socket: { connectTimeout: 1000 } },
      commandOptions: { timeout: 1000 },
    });
    client.on("error", (error) => clientErrors.push(error));
    await client.connect();
  });

  afterAll(async () => {
    try {
      client?.destroy();
    } finally {
      await cluster?.stop();
    }
  });

  runStorageConformance({
    name: "Redis stores on Redis Cluster, memoryStorage for the rest",
    makeStorage: () => ({ ...memoryStorage(), ...redisStores({ client, prefix }) }),
    test: { describe, it, expect },
  });

  it("spreads the stores' keys over the primaries: one script touches one key, on the node of its slot", async () => {
    const { challenges } = redisStores({ client, prefix });
    const ports = new Set<number>();
    for (let index = 0; index < 20; index += 1) {
      const challenge = sampleChallenge();
      await challenges.put(challenge);
      ports.add(await cluster!.primaryPortOf(`${prefix}:challenge:${challenge.id}`));
      expect(await challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
    }
    expect(ports.size).toBe(3);
  });

  it("ST-1: 20 concurrent consumers of one challenge across two processes give exactly one winner", async () => {
    const { challenges } = redisStores({ client, prefix });
    const other = await startConsumerProcess({ rootNodes: cluster!.urls }, prefix);
    try {
      for (let round = 0; round < 5; round += 1) {
        const challenge = sampleChallenge();
        await challenges.put(challenge);
        const at = Date.now() + 200;
        const [there, here] = await Promise.all([
          other.consume({ id: challenge.id, kind: challenge.kind, now: BASE_TIME, times: 10, at }),
          until(at).then(() =>
            Promise.all(Array.from({ length: 10 }, () => challenges.consume(challenge.id, challenge.kind, BASE_TIME))),
          ),
        ]);
        expect(there.unavailable).toBe(0);
        expect(there.winners + here.filter((result) => result !== null).length).toBe(1);
      }
    } finally {
      await other.close();
    }
  });

  it("ST-4: every primary's maxmemory-policy is read: one primary that evicts makes the stores refuse (50300 naming it) even for keys on the others", async () => {
    const challenge = sampleChallenge();
    const holder = await cluster!.primaryPortOf(`${prefix}:challenge:${challenge.id}`);
    const primaries = cluster!.ports.slice(0, 3);
    const evicting = primaries.find((port) => port !== holder) as number;
    const fresh = createCluster({ rootNodes: cluster!.urls.map((url) => ({ url })), commandOptions: { timeout: 1000 } });
    fresh.on("error", () => {});
    await redisCli(evicting, "CONFIG", "SET", "maxmemory-policy", "volatile-lru");
    try {
      await fresh.connect();
      const error = await redisStores({ client: fresh, prefix })
        .challenges.put(challenge)
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      expect(isAuthError(error, ErrorCode.Unavailable), String(error)).toBe(true);
      expect(String((error as Error).cause)).toMatch(new RegExp(`127\\.0\\.0\\.1:${evicting}.*maxmemory-policy is volatile-lru`));
      await expect(checkEvictionPolicy(client)).rejects.toThrow(`127.0.0.1:${evicting}`);
    } finally {
      await redisCli(evicting, "CONFIG", "SET", "maxmemory-policy", "noeviction");
    }
    try {
      const { challenges } = redisStores({ client: fresh, prefix });
      await challenges.put(challenge);
      expect(await challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
      await expect(checkEvictionPolicy(client)).resolves.toBeUndefined();
    } finally {
      fresh.destroy();
    }
  });

  // Last in the file: it leaves the cluster with one primary fewer.
  it("ST-1: a primary killed mid-run: every operation succeeds or answers 50300 in bounded time, no challenge has two winners, and service resumes once its replica is promoted", async () => {
    const timeoutMs = 1000;
    const { challenges, counters } = redisStores({ client, prefix, timeoutMs });
    // Ids with a hash tag: every round's challenge lives in the slot of the primary killed.
    const tag = `{failover-${prefix}}`;
    const victim = await cluster!.primaryPortOf(`${prefix}:challenge:${tag}`);
    const unexpected: unknown[] = [];
    let unavailable = 0;
    let slowest = 0;
    /** Runs one operation: its answer, or `failed` when it answered 50300. */
    const attempt = async <T>(operation: () => Promise<T>): Promise<{ answer: T } | "failed"> => {
      const started = performance.now();
      try {
        return { answer: await operation() };
      } catch (error) {
        if (isAuthError(error, ErrorCode.Unavailable)) unavailable += 1;
        else unexpected.push(error);
        return "failed";
      } finally {
        slowest = Math.max(slowest, performance.now() - started);
      }
    };
    /** One round: put a fresh challenge, 20 concurrent consumers, a counted hit. True when everything succeeded. */
    const round = async (index: number): Promise<boolean> => {
      const challenge = sampleChallenge({ id: `${tag}${index}` });
      const stored = await attempt(() => challenges.put(challenge));
      const consumed = await Promise.all(
        Array.from({ length: 20 }, () => attempt(() => challenges.consume(challenge.id, challenge.kind, BASE_TIME))),
      );
      const winners = consumed.filter((result) => result !== "failed" && result.answer !== null);
      expect(winners.length).toBeLessThanOrEqual(1);
      const hit = await attempt(() => counters.hit(`${tag}hits`, 1_000_000, 60_000, BASE_TIME));
      return [stored, hit, ...consumed].every((result) => result !== "failed") && winners.length === 1;
    };

    let index = 0;
    for (; index < 3; index += 1) expect(await round(index)).toBe(true);
    await cluster!.kill(victim);
    const killedAt = performance.now();
    let recoveredAfterMs: number | null = null;
    while (recoveredAfterMs === null && performance.now() - killedAt < 30_000) {
      index += 1;
      if (await round(index)) recoveredAfterMs = performance.now() - killedAt;
    }
    expect(unexpected).toEqual([]);
    expect(recoveredAfterMs, "service did not resume within 30 s of the kill").not.toBeNull();
    // The kill was felt: operations answered 50300 before the replica took over.
    expect(unavailable).toBeGreaterThan(0);
    // One operation is at most two round trips (EVALSHA, then EVAL on a primary without the script), each bounded.
    expect(slowest).toBeLessThan(2 * timeoutMs + 1500);
    expect(await cluster!.primaryPortOf(`${prefix}:challenge:${tag}`)).not.toBe(victim);
    for (let more = 0; more < 3; more += 1) expect(await round(index + 1 + more)).toBe(true);
    console.info(
      `failover: service resumed ${Math.round(recoveredAfterMs ?? 0)} ms after the kill; ${unavailable} operations answered 50300, the slowest took ${Math.round(slowest)} ms`,
    );
  });
});
