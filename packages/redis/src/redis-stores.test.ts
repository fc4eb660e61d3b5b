// The Redis stores on the machine's single Redis server: the public conformance kit with
// memoryStorage for the durable part, one challenge consumed from two processes at once, and a
// service whose Redis goes away and comes back (through a forwarder the tests cut).
import { setTimeout as sleep } from "node:timers/promises";
import { type Auth, ErrorCode, createAuth, isAuthError, memoryStorage } from "@portcullis/core";
import { runStorageConformance } from "@portcullis/core/testing";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestUser, createTestUser, generousThrottle, testAudience, testIssuer } from "../../../test/fixtures/auth.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type TcpForwarder, startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { post } from "../../../test/http/client.js";
import { expectEnvelope } from "../../../test/http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../../../test/http/servers.js";
import { BASE_TIME, sampleChallenge, sampleSession } from "../../core/src/testing/conformance/samples.js";
import { deleteKeys, redisMissing, redisUrl, startConsumerProcess, uniquePrefix, until } from "./redis.test-support.js";
import { redisStores } from "./redis-stores.js";

const describeWithRedis = describeNeedingService("packages/redis/src/redis-stores.test.ts", await redisMissing());

describeWithRedis("Redis stores on one server", () => {
  const prefix = uniquePrefix("single");
  const client = createClient({ url: redisUrl, commandOptions: { timeout: 2000 } });
  client.on("error", (error) => console.error("redis client:", error));

  beforeAll(async () => {
    await client.connect();
  });

  afterAll(async () => {
    if (!client.isOpen) return;
    await deleteKeys(client, prefix);
    expect(await client.scanIterator({ MATCH: `${prefix}:*` }).next()).toMatchObject({ done: false, value: [] });
    client.destroy();
  });

  runStorageConformance({
    name: "Redis stores on one server, memoryStorage for the rest",
    makeStorage: () => ({ ...memoryStorage(), ...redisStores({ client, prefix }) }),
    test: { describe, it, expect },
  });

  it("ST-1: 20 concurrent consumers of one challenge across two processes give exactly one winner", async () => {
    const { challenges } = redisStores({ client, prefix });
    const other = await startConsumerProcess({ url: redisUrl }, prefix);
    try {
      for (let round = 0; round < 5; round += 1) {
        const challenge = sampleChallenge();
        await challenges.put(challenge);
        const at = Date.now() + 200;
        const request = { id: challenge.id, kind: challenge.kind, now: BASE_TIME, times: 10, at };
        const [there, here] = await Promise.all([
          other.consume(request),
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

  it("ST-1: with waitForReplicas, a consumption no replica acknowledged answers 50300 and the challenge stays spent", async () => {
    // This server has no replica: WAIT 1 answers 0 after the timeout.
    const { challenges } = redisStores({ client, prefix, waitForReplicas: 1, waitTimeoutMs: 50 });
    const challenge = sampleChallenge();
    await challenges.put(challenge);
    const error = await challenges.consume(challenge.id, challenge.kind, BASE_TIME).catch((caught: unknown) => caught);
    expect(isAuthError(error, ErrorCode.Unavailable)).toBe(true);
    expect(await redisStores({ client, prefix }).challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toBeNull();
    expect(await challenges.takeAttempt(challenge.id, challenge.kind, 5, BASE_TIME)).toBeNull();
  });

  it("the sweep of the Redis challenges prunes the durable store given as `durable` too", async () => {
    const durable = memoryStorage();
    const { challenges } = redisStores({ client, prefix, durable });
    const now = 20_000;
    const user = "durable-user";
    const ended = sampleSession(user, { createdAt: 1000, expiresAt: now - 1 });
    const live = sampleSession(user, { createdAt: 1000, expiresAt: now + 60_000 });
    await durable.sessions.createSession(ended);
    await durable.sessions.createSession(live);
    await challenges.put(sampleChallenge({ createdAt: 1000, expiresAt: now - 1 }));
    expect(await challenges.deleteExpired(now, 100)).toBeGreaterThanOrEqual(2);
    expect(await durable.sessions.findSession(ended.id)).toBeNull();
    expect(await durable.sessions.findSession(live.id)).not.toBeNull();
    expect(await redisStores({ client, prefix }).challenges.deleteExpired(now, 100)).toBe(0);
  });

  it("refuses a missing client, an empty prefix and impossible replica settings", () => {
    expect(() => redisStores({ client: undefined as never })).toThrow(TypeError);
    expect(() => redisStores({ client, prefix: "" })).toThrow(/prefix/);
    expect(() => redisStores({ client, waitForReplicas: -1 })).toThrow(/waitForReplicas/);
    expect(() => redisStores({ client, waitForReplicas: 1, waitTimeoutMs: 0 })).toThrow(/waitTimeoutMs/);
  });
});

describeWithRedis("Redis stores on one server: Redis goes away and comes back", () => {
  const prefix = uniquePrefix("faults");
  const commandTimeoutMs = 1000;
  /** The stores' timeout, and a margin for a loaded machine. */
  const unavailableWithinMs = commandTimeoutMs + 2000;
  let forwarder: TcpForwarder;
  let client: ReturnType<typeof createClient>;
  let server: RunningServer | undefined;
  let auth: Auth;
  let alice: TestUser;
  const internalErrors: unknown[] = [];

  beforeAll(async () => {
    forwarder = await startTcpForwarder(Number(new URL(redisUrl).port || 6379));
    const url = new URL(redisUrl);
    url.port = String(forwarder.port);
    client = createClient({ url: url.href, commandOptions: { timeout: commandTimeoutMs } });
    client.on("error", () => {});
    await client.connect();
    const { challenges, counters } = redisStores({ client, prefix, timeoutMs: commandTimeoutMs });
    auth = createAuth({
      storage: { ...memoryStorage(), challenges, counters },
      issuer: testIssuer,
      audience: testAudience,
      secrets: { signing: "a".repeat(43), encryption: "b".repeat(64) },
      throttle: generousThrottle,
      onInternalError: (error) => internalErrors.push(error),
    });
    alice = await createTestUser(auth, "alice");
    server = await startExpress5(auth);
  });

  afterAll(async () => {
    forwarder?.restore();
    await server?.close();
    const direct = createClient({ url: redisUrl });
    await direct.connect();
    await deleteKeys(direct, prefix);
    direct.destroy();
    client?.destroy();
    await forwarder?.close();
  });

  const login = () => post(server!, "/api/v1/auth/login", { username: alice.username, password: alice.password });

  for (const mode of ["reset", "stall"] as const) {
    it(`Redis ${mode === "reset" ? "down" : "silent"}: a sign-in answers 50300 within the stores' timeout, and signs in again once Redis is back`, async () => {
      expect((await login()).status).toBe(200);
      forwarder.cut(mode);
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const started = performance.now();
        const answer = await login();
        expect(performance.now() - started).toBeLessThan(unavailableWithinMs);
        expectEnvelope(answer, 50300);
      }
      forwarder.restore();
      let answer = await login();
      for (let attempt = 0; answer.status !== 200 && attempt < 50; attempt += 1) {
        await sleep(100);
        answer = await login();
      }
      expect(answer.status).toBe(200);
    });
  }
});
