// Proves redisStorage() with the public storage conformance suite, against a real Redis.
import { randomBytes } from "node:crypto";
import { ErrorCode, createAuth, createUser, isAuthError, login } from "@portcullis/core";
import { runStorageConformance } from "@portcullis/core/testing";
import { ClientClosedError, createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { sampleSession, sampleUser } from "../../../packages/core/src/testing/conformance/samples.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { escapeGlob, indexUsernames, redisStorage } from "./redis-storage.js";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why no Redis answers at `url`, or null when one does. */
async function redisMissing(): Promise<string | null> {
  const probe = createClient({ url, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (error) {
    return `no Redis answers at ${url} (${error instanceof Error ? error.message : String(error)}); set REDIS_URL to use another`;
  } finally {
    if (probe.isOpen) probe.destroy();
  }
}

const describeWithRedis = describeNeedingService("examples/custom-storage/src/redis-storage.test.ts", await redisMissing());

/** Every run gets its own keys, deleted afterwards: the suite never needs an empty Redis. */
const prefix = `portcullis-test-${randomBytes(8).toString("hex")}`;
const client = createClient({ url });
client.on("error", (error) => console.error("redis client:", error));
let connected: Promise<unknown> | undefined;

describeWithRedis("redisStorage", () => {
  runStorageConformance({
    name: "redis",
    makeStorage: async () => {
      connected ??= client.connect();
      await connected;
      return redisStorage({ client, prefix });
    },
    test: { describe, it, expect },
  });

  describe("upgrading from the first version of this example", () => {
    const upgradePrefix = `${prefix}:upgrade`;
    const storageOf = async () => {
      connected ??= client.connect();
      await connected;
      return redisStorage({ client, prefix: upgradePrefix });
    };

    it("AD-1: indexUsernames adds the users stored before users.list existed, once", async () => {
      const storage = await storageOf();
      const keys = ["zoë", "adam", "\u{1F600}", "\uFF21"];
      for (const key of keys) await storage.users.create(sampleUser({ username: key, usernameKey: key }));
      await client.del(`${upgradePrefix}:username-order`);
      expect(await storage.users.list({ limit: 10 })).toEqual([]);
      expect(await indexUsernames({ client, prefix: upgradePrefix })).toBe(keys.length);
      expect((await storage.users.list({ limit: 10 })).map((user) => user.usernameKey)).toEqual([
        "adam",
        "zoë",
        "\uFF21",
        "\u{1F600}",
      ]);
      expect(await indexUsernames({ client, prefix: upgradePrefix })).toBe(0);
    });

    it("SE-1, STUP-1, RT-1: a session stored before lastUsedAt, userAgent, address, authTime, its refresh token's fields and impersonatorId existed reads as last used, and proven, when it began, holding no refresh token, impersonated by no one, and refuses every rotation", async () => {
      const storage = await storageOf();
      await storage.users.create(sampleUser({ id: "old-user" }));
      const session = sampleSession("old-user");
      const {
        lastUsedAt,
        userAgent,
        address,
        authTime,
        refreshHash,
        refreshGeneration,
        refreshExpiresAt,
        impersonatorId,
        ...before
      } = session;
      const fields = Object.fromEntries(Object.entries(before).map(([field, value]) => [field, JSON.stringify(value)]));
      await client.hSet(`${upgradePrefix}:sessions:${JSON.stringify(session.id)}`, fields);
      await client.zAdd(`${upgradePrefix}:user-sessions:${JSON.stringify("old-user")}`, {
        score: session.expiresAt,
        value: JSON.stringify(session.id),
      });
      const { createdAt } = session;
      const upgraded = {
        ...before,
        lastUsedAt: createdAt,
        userAgent: null,
        address: null,
        authTime: createdAt,
        refreshHash: null,
        refreshGeneration: 0,
        refreshExpiresAt: createdAt,
        impersonatorId: null,
      };
      expect(await storage.sessions.findSession(session.id)).toEqual(upgraded);
      expect(await storage.sessions.listByUser("old-user", createdAt, 10)).toEqual([upgraded]);
      const rotation = { sessionId: session.id, hash: refreshHash as string, nextHash: "next", nextGeneration: 1, idleMs: 1 };
      const use = { userAgent: null, address: null };
      expect(await storage.sessions.rotateRefresh({ ...rotation, now: createdAt + 1, use })).toEqual({ outcome: "refused" });
    });
  });

  it("STUP-8, ASVS 7.1.2: with sessions.maxPerUser, 10 concurrent sign-ins of one account leave exactly the cap live, each ended session reported once", async () => {
    connected ??= client.connect();
    await connected;
    const auth = createAuth({
      storage: redisStorage({ client, prefix: `${prefix}:cap` }),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
      throttle: { account: [{ limit: 1000, window: "15m" }] },
      sessions: { maxPerUser: 3 },
    });
    const ended: string[] = [];
    auth.events.on("session.revoked", (event) => {
      if (event.reason === "session_limit") ended.push(event.sessionId);
    });
    const password = "correct horse battery staple";
    const user = await createUser(auth, { username: "capped", password });
    await Promise.all(Array.from({ length: 10 }, () => login(auth, { username: "capped", password })));
    const live = await auth.storage.sessions.listByUser(user.id, Date.now(), 100);
    expect(live).toHaveLength(3);
    expect(ended).toHaveLength(7);
    expect(new Set(ended).size).toBe(7);
    for (const session of live) expect(ended.includes(session.id)).toBe(false);
  });

  afterAll(async () => {
    if (connected === undefined) return;
    for await (const keys of client.scanIterator({ MATCH: `${escapeGlob(prefix)}:*`, COUNT: 500 })) {
      if (keys.length > 0) await client.del(keys);
    }
    await client.close();
  });
});

describe("redisStorage without a connection", () => {
  it("throws storageUnavailable (50300), with the client's error as the cause", async () => {
    const closed = createClient({ url });
    const error = await redisStorage({ client: closed, prefix })
      .challenges.consume("id", "totp_login", Date.now())
      .catch((caught) => caught);
    expect(isAuthError(error, ErrorCode.Unavailable)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(ClientClosedError);
  });
});
