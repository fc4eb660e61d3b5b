// The Redis stores on a Redis that may lose their keys: servers of this file's own (the machine's
// Redis must keep its settings), started with `maxmemory` and an eviction policy
// (test/fixtures/redis-server.ts). A store that evicts forgets lockouts and ceremonies, so the
// stores serve only a server whose maxmemory-policy is noeviction (ST-4); a server out of memory
// answers 50300, and the lockouts it holds hold through it (RL-1).
import { type Auth, type AuthError, ErrorCode, createAuth, isAuthError, memoryStorage } from "@portcullis/core";
import { createClient } from "redis";
import { afterEach, expect, it } from "vitest";
import { createTestUser, generousThrottle, testAudience, testIssuer } from "../../../test/fixtures/auth.js";
import { type RedisServer, redisServerMissing, startRedisServer } from "../../../test/fixtures/redis-server.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type CallResult, post } from "../../../test/http/client.js";
import { type RunningServer, startExpress5 } from "../../../test/http/servers.js";
import { BASE_TIME, sampleChallenge } from "../../core/src/testing/conformance/samples.js";
import { checkEvictionPolicy } from "./eviction-policy.js";
import { redisStores } from "./redis-stores.js";

const describeWithRedisServer = describeNeedingService("packages/redis/src/eviction.test.ts", redisServerMissing());

/** What a test started, stopped after it whatever happened. */
const started: Array<{ close(): Promise<unknown> | unknown }> = [];
afterEach(async () => {
  for (const item of started.splice(0).reverse()) await item.close();
});

/** A redis-server of the test's own with `maxmemory` 2 MB (an empty server uses about 0.9) and `policy`. */
async function server(policy: string, ...options: string[]): Promise<RedisServer> {
  const redis = await startRedisServer(["--maxmemory", "2mb", "--maxmemory-policy", policy, ...options]);
  started.push({ close: () => redis.stop() });
  return redis;
}

/** A connected node-redis client of `redis`, destroyed after the test. */
async function clientOf(redis: RedisServer, options: { username?: string; password?: string; RESP?: 2 | 3 } = {}) {
  const client = createClient({ url: redis.url, ...options, commandOptions: { timeout: 2000 } });
  client.on("error", () => {});
  await client.connect();
  started.push({ close: () => client.destroy() });
  return client;
}

/** What `promise` rejected with, or a failure when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

/** Expects a 50300 whose cause (what `onInternalError` receives) says `reason`. */
function expectUnavailableBecause(error: unknown, reason: RegExp): void {
  expect(isAuthError(error, ErrorCode.Unavailable), String(error)).toBe(true);
  expect(String((error as AuthError).cause)).toMatch(reason);
}

/** A sign-in service on Express with the Redis stores of `redis`: alice, locked after 5 failures. */
async function serviceOn(redis: RedisServer) {
  const client = await clientOf(redis);
  const internalErrors: unknown[] = [];
  const auth: Auth = createAuth({
    storage: { ...memoryStorage(), ...redisStores({ client, prefix: "auth" }) },
    issuer: testIssuer,
    audience: testAudience,
    secrets: { signing: "a".repeat(43), encryption: "b".repeat(64) },
    throttle: { ...generousThrottle, account: [{ limit: 5, window: "15m" }] },
    onInternalError: (error) => internalErrors.push(error),
    passkeys: { rpId: "example.com", rpName: "Example", origins: ["https://app.example.com"] },
  });
  const alice = await createTestUser(auth, "alice");
  const http: RunningServer = await startExpress5(auth);
  started.push({ close: () => http.close() });
  return {
    client,
    internalErrors,
    login: (password: string, username = alice.username) => post(http, "/api/v1/auth/login", { username, password }),
    correctPassword: alice.password,
    /** `count` passkey sign-in begins, 20 at a time, as a stranger floods: each stores a ceremony (RL-7). */
    async flood(count: number, stopWhen: (answer: CallResult) => boolean = () => false): Promise<CallResult[]> {
      const answers: CallResult[] = [];
      while (answers.length < count && !answers.some(stopWhen)) {
        answers.push(
          ...(await Promise.all(Array.from({ length: 20 }, () => post(http, "/api/v1/auth/public-key/login/begin", {})))),
        );
      }
      return answers;
    },
  };
}

const codesOf = (answers: CallResult[]) => new Set(answers.map((answer) => answer.body?.code));

describeWithRedisServer("Redis stores on a Redis with maxmemory (servers of the test's own)", () => {
  it("ST-4: on a server whose maxmemory-policy evicts (volatile-lru), every operation answers 50300 naming the policy, from the first; noeviction set, they serve again", async () => {
    const redis = await server("volatile-lru");
    const client = await clientOf(redis);
    const { challenges, counters } = redisStores({ client, prefix: "auth" });
    const challenge = sampleChallenge();
    expectUnavailableBecause(await rejection(challenges.put(challenge)), /maxmemory-policy is volatile-lru.*noeviction/);
    expectUnavailableBecause(await rejection(counters.hit("k", 5, 60_000, BASE_TIME)), /volatile-lru/);
    expectUnavailableBecause(await rejection(challenges.consume(challenge.id, challenge.kind, BASE_TIME)), /volatile-lru/);
    expect(await redis.cli("DBSIZE")).toBe("0\n");
    await redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    await challenges.put(challenge);
    expect(await challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
  });

  it("ST-4: a policy changed on the running server (CONFIG SET allkeys-lru) is refused from the client's next reconnection", async () => {
    const redis = await server("noeviction");
    const client = await clientOf(redis);
    const { counters } = redisStores({ client, prefix: "auth" });
    expect((await counters.hit("k", 5, 60_000, BASE_TIME)).count).toBe(1);
    await redis.cli("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
    const id = String(await client.sendCommand(["CLIENT", "ID"]));
    // Not events.once: it would reject on the "error" the killed connection emits first.
    const reconnected = new Promise((resolve) => client.once("ready", resolve));
    await redis.cli("CLIENT", "KILL", "ID", id);
    await reconnected;
    expectUnavailableBecause(await rejection(counters.hit("k", 5, 60_000, BASE_TIME)), /allkeys-lru/);
    await redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
    expect((await counters.hit("k", 5, 60_000, BASE_TIME)).count).toBe(2);
  });

  it("RL-1, ST-4: a locked account cannot be guessed again after a flood on a server that evicts: the stores refuse to serve there at all", async () => {
    const redis = await server("volatile-lru");
    const service = await serviceOn(redis);
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await service.login("wrong password")).status).not.toBe(200);
    const flood = await service.flood(3000);
    expect(codesOf(flood)).not.toContain(50000);
    // The counter that locked the account is still there, so the right password is not evaluated.
    const answer = await service.login(service.correctPassword);
    expect(answer.status).not.toBe(200);
    expect(answer.body.code).toBe(50300);
    expect(service.internalErrors.length).toBeGreaterThan(0);
    expect(String((service.internalErrors.at(-1) as AuthError).cause)).toMatch(/volatile-lru/);
  });

  it("RL-1: with noeviction, a lockout holds under a flood that fills Redis: writes over maxmemory answer 50300 (OOM), never 50000, and the account stays locked once memory is free", async () => {
    const redis = await server("noeviction");
    const service = await serviceOn(redis);
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await service.login("wrong password")).body.code).toBe(40100);
    expect((await service.login(service.correctPassword)).body.code).toBe(42900);
    const flood = await service.flood(20_000, (answer) => answer.status !== 200);
    expect(codesOf(flood)).toEqual(new Set([0, 50300]));
    expect(String((service.internalErrors.at(-1) as AuthError).cause)).toMatch(/OOM command not allowed/);
    // Out of memory: the right password is refused, as locked (the counter is read, not written) or as unavailable.
    expect([42900, 50300]).toContain((await service.login(service.correctPassword)).body.code);
    // Memory freed (the flood's ceremonies gone): the lock is still there.
    const ceremonies = await service.client.keys("auth:challenge:*");
    for (let start = 0; start < ceremonies.length; start += 500) await service.client.del(ceremonies.slice(start, start + 500));
    expect((await service.login(service.correctPassword)).body.code).toBe(42900);
  });

  it("ST-4: a server that lets the client read neither INFO nor CONFIG GET is refused (50300 naming both); unsafeAssumeNoEviction serves it", async () => {
    const redis = await server("noeviction");
    await redis.cli("ACL", "SETUSER", "limited", "on", ">a long password", "~*", "&*", "+@all", "-info", "-config");
    const client = await clientOf(redis, { username: "limited", password: "a long password" });
    const challenge = sampleChallenge();
    expectUnavailableBecause(
      await rejection(redisStores({ client, prefix: "auth" }).challenges.put(challenge)),
      /could not be read.*NOPERM/,
    );
    const trusting = redisStores({ client, prefix: "auth", unsafeAssumeNoEviction: true });
    await trusting.challenges.put(challenge);
    expect(await trusting.challenges.consume(challenge.id, challenge.kind, BASE_TIME)).toEqual(challenge);
    await expect(checkEvictionPolicy(client)).rejects.toThrow(/could not be read/);
    await expect(checkEvictionPolicy(client, { unsafeAssumeNoEviction: true })).resolves.toBeUndefined();
  });

  it("ST-4: where INFO is not allowed, the policy is read with CONFIG GET, in RESP2 and RESP3", async () => {
    const redis = await server("allkeys-random");
    await redis.cli("ACL", "SETUSER", "configured", "on", ">a long password", "~*", "&*", "+@all", "-info");
    for (const RESP of [2, 3] as const) {
      const client = await clientOf(redis, { username: "configured", password: "a long password", RESP });
      await expect(checkEvictionPolicy(client)).rejects.toThrow(/maxmemory-policy is allkeys-random/);
      expectUnavailableBecause(await rejection(redisStores({ client }).counters.peek("k", BASE_TIME)), /allkeys-random/);
    }
  });

  it("ST-4: checkEvictionPolicy reads the policy again now, for a start-up or readiness check, and the stores on the client take its answer", async () => {
    const redis = await server("noeviction");
    const client = await clientOf(redis);
    const { counters } = redisStores({ client, prefix: "auth" });
    await expect(checkEvictionPolicy(client)).resolves.toBeUndefined();
    expect((await counters.hit("k", 5, 60_000, BASE_TIME)).count).toBe(1);
    await redis.cli("CONFIG", "SET", "maxmemory-policy", "volatile-ttl");
    await expect(checkEvictionPolicy(client)).rejects.toThrow(/maxmemory-policy is volatile-ttl/);
    expectUnavailableBecause(await rejection(counters.hit("k", 5, 60_000, BASE_TIME)), /volatile-ttl/);
  });
});
