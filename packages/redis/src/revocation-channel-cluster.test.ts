// The Redis revocation channel on a real Redis Cluster (three primaries, one replica each, started
// by the test on loopback ports of its own): sharded pub/sub between two auth instances with a
// 60 s token-state cache, each on its own cluster client. A session ended on A is refused on B
// within 100 ms; the primary that owns the channel's slot killed, B says the channel is lost, and
// once its replica is promoted B hears again.
import { type Auth, type AuthEvent, createAuth, logout, memoryStorage, revocationChannelStatus } from "@portcullis/core";
import { createCluster } from "redis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestUser, testAudience, testIssuer } from "../../../test/fixtures/auth.js";
import { type RedisCluster, redisClusterMissing, startRedisCluster } from "../../../test/fixtures/redis-cluster.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { heartbeatMs, outcome, refused, secrets, signIn, until } from "./revocation.test-support.js";
import { type RedisRevocationChannel, redisRevocationChannel } from "./revocation-channel.js";

const channel = "{portcullis-cluster-test}:revocations";

const describeWithCluster = describeNeedingService(
  "packages/redis/src/revocation-channel-cluster.test.ts",
  redisClusterMissing(),
);

describeWithCluster("the Redis revocation channel on a Redis Cluster (sharded pub/sub)", () => {
  let cluster: RedisCluster | undefined;
  const closers: (() => void)[] = [];
  const storage = memoryStorage();
  let a: { auth: Auth; events: AuthEvent[] };
  let b: { auth: Auth; events: AuthEvent[] };

  const instance = async () => {
    const client = createCluster({
      rootNodes: (cluster as RedisCluster).urls.map((url) => ({ url })),
      defaults: { socket: { connectTimeout: 1000, reconnectStrategy: 100 } },
      commandOptions: { timeout: 1000 },
    });
    client.on("error", () => {});
    await client.connect();
    const revocationChannel: RedisRevocationChannel = redisRevocationChannel({ client, channel, heartbeatMs });
    const events: AuthEvent[] = [];
    const auth = createAuth({
      storage,
      issuer: testIssuer,
      audience: testAudience,
      secrets,
      tokenStateCacheSeconds: 60,
      revocationChannel,
      sweepInterval: false,
      onInternalError: () => {},
    });
    auth.events.on("*", (event) => {
      events.push(event);
    });
    closers.push(() => {
      revocationChannel.close();
      client.destroy();
    });
    await until(
      "connected",
      () => revocationChannelStatus(auth),
      (status) => status === "connected",
      10_000,
    );
    return { auth, events };
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    a = await instance();
    b = await instance();
  });

  afterAll(async () => {
    for (const close of closers) close();
    await cluster?.stop();
  });

  it("SE-3: a session ended on A is refused on B within 100 ms with tokenStateCacheSeconds 60", async () => {
    const user = await createTestUser(a.auth, "cluster-user");
    for (let round = 0; round < 3; round += 1) {
      const tokens = await signIn(a.auth, user.username);
      expect(await outcome(b.auth, tokens)).toBe("fulfilled");
      await logout(a.auth, { refreshToken: tokens.refreshToken });
      expect(
        await until(
          "refused on B",
          () => outcome(b.auth, tokens),
          (result) => result === refused,
          100,
        ),
      ).toBeLessThan(100);
    }
  });

  it("the primary of the channel's slot killed: the channel is lost, then restored once the replica is promoted, and delivers again", async () => {
    const running = cluster as RedisCluster;
    await running.kill(await running.primaryPortOf(channel));
    await until(
      "lost on B",
      () => revocationChannelStatus(b.auth),
      (status) => status === "lost",
      5_000,
    );
    expect(b.events.find((event) => event.type === "revocation_channel.lost")).toMatchObject({ maxRevocationDelaySeconds: 60 });
    await until(
      "restored on B",
      () => revocationChannelStatus(b.auth),
      (status) => status === "connected",
      60_000,
    );
    expect(b.events.at(-1)).toMatchObject({ type: "revocation_channel.restored" });
    await until(
      "restored on A",
      () => revocationChannelStatus(a.auth),
      (status) => status === "connected",
      60_000,
    );
    const user = await createTestUser(a.auth, "after-failover");
    const tokens = await signIn(a.auth, user.username);
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    await logout(a.auth, { refreshToken: tokens.refreshToken });
    await until(
      "refused on B after the failover",
      () => outcome(b.auth, tokens),
      (result) => result === refused,
      100,
    );
  });
});
