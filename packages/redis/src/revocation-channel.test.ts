// The Redis revocation channel on the machine's single Redis server: two auth instances with a
// 60 s token-state cache, in one process on a shared memoryStorage and in two processes on one
// PostgreSQL schema, each on its own Redis connection. A session ended on A is refused on B
// within 100 ms; with B's way to Redis cut (a forwarder that resets or goes silent), B says so in
// an event and refuses within the cache bound, and after the cut heals it hears again.
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import {
  type Auth,
  type AuthEvent,
  type TokenSet,
  createAuth,
  logout,
  memoryStorage,
  revocationChannelStatus,
  revokeAllSessions,
  signOutEverywhere,
  verifyAccessToken,
} from "@portcullis/core";
import { type KyselyStorage, connectStorage, migrate } from "@portcullis/kysely";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { createTestUser, testAudience, testIssuer } from "../../../test/fixtures/auth.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { type TcpForwarder, startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { type ScratchSchema, createScratchSchema } from "../../../test/storage/scratch-schema.js";
import { postgresUrl, serverMissing } from "../../kysely/src/databases.test-support.js";
import { redisMissing, redisUrl } from "./redis.test-support.js";
import { heartbeatMs, outcome, refused, secrets, signIn, sleep, until } from "./revocation.test-support.js";
import { type RedisRevocationChannel, redisRevocationChannel } from "./revocation-channel.js";
import type { InstanceConfig, InstanceMessage } from "./revocation-instance.test-support.js";

const redisPort = Number(new URL(redisUrl).port || 6379);
const redisVia = (port: number) => {
  const url = new URL(redisUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return url.toString();
};
/** A channel of the run's own, so that parallel runs on one Redis never hear each other. */
const runChannel = () => `{portcullis-test-${randomBytes(6).toString("hex")}}:revocations`;

/** A node-redis client, connected, to `url`. */
async function connectedClient(url: string) {
  const client = createClient({ url, commandOptions: { timeout: 2000 } });
  client.on("error", () => {});
  await client.connect();
  return client;
}

const missing = (await redisMissing()) ?? (await serverMissing(postgresUrl));
const describeWithServices = describeNeedingService("packages/redis/src/revocation-channel.test.ts", missing);

describeWithServices("the Redis revocation channel, two instances in one process", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Instances A and B on one memoryStorage, each with its own client (B's through `bUrl`) and channel; B's clock is A's plus `offset.ms`. */
  async function twoInstances(bUrl = redisUrl) {
    const storage = memoryStorage();
    const channel = runChannel();
    const offset = { ms: 0 };
    const make = async (url: string, now: () => number) => {
      const client = await connectedClient(url);
      const revocationChannel = redisRevocationChannel({ client, channel, heartbeatMs });
      const events: AuthEvent[] = [];
      const auth = createAuth({
        storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets,
        tokenStateCacheSeconds: 60,
        revocationChannel,
        now,
        sweepInterval: false,
        onInternalError: () => {},
      });
      auth.events.on("*", (event) => {
        events.push(event);
      });
      cleanups.push(() => {
        revocationChannel.close();
        client.destroy();
      });
      await until(
        "connected",
        async () => revocationChannelStatus(auth),
        (status) => status === "connected",
        5000,
      );
      return { auth, events, revocationChannel };
    };
    const a = await make(redisUrl, Date.now);
    const b = await make(bUrl, () => Date.now() + offset.ms);
    return { a, b, offset };
  }

  it("SE-3: a session ended on A is refused on B within 100 ms; until then B answers from its cache, without storage", async () => {
    const { a, b } = await twoInstances();
    const user = await createTestUser(a.auth, "ended-on-a");
    const tokens = await signIn(a.auth, user.username);
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    const { sessionId } = await verifyAccessToken(b.auth, { token: tokens.accessToken });
    expect(b.auth.tokenStateCache.has(sessionId)).toBe(true);
    const findTokenState = vi.spyOn(b.auth.storage.sessions, "findTokenState");
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    expect(findTokenState).not.toHaveBeenCalled();
    findTokenState.mockRestore();
    await logout(a.auth, { refreshToken: tokens.refreshToken });
    const took = await until(
      "refused on B",
      () => outcome(b.auth, tokens),
      (result) => result === refused,
      100,
    );
    expect(took).toBeLessThan(100);
    const other = await signIn(a.auth, user.username);
    expect(await outcome(b.auth, other)).toBe("fulfilled");
    await signOutEverywhere(a.auth, { userId: user.id });
    await until(
      "token version seen on B",
      () => outcome(b.auth, other),
      (result) => result === refused,
      100,
    );
  });

  it("STUP-6, ASVS 7.4.5: revokeAllSessions on A is refused on B within 100 ms, for every user, though B cached them for 60 s", async () => {
    const { a, b } = await twoInstances();
    const users = [await createTestUser(a.auth, "everyone-1"), await createTestUser(a.auth, "everyone-2")];
    const signedIn = [await signIn(a.auth, users[0]?.username as string), await signIn(a.auth, users[1]?.username as string)];
    for (const tokens of signedIn) expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    await revokeAllSessions(a.auth);
    for (const tokens of signedIn) {
      const took = await until(
        "refused on B",
        () => outcome(b.auth, tokens),
        (result) => result === refused,
        100,
      );
      expect(took).toBeLessThan(100);
    }
  });

  it("a connection that goes silent is lost at the next heartbeat, B falls back to the 60 s bound, and hears again once it heals", async () => {
    const forwarder: TcpForwarder = await startTcpForwarder(redisPort);
    cleanups.push(() => forwarder.close());
    const { a, b, offset } = await twoInstances(redisVia(forwarder.port));
    const user = await createTestUser(a.auth, "silent");
    const tokens = await signIn(a.auth, user.username);
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    forwarder.cut("silence-open");
    await until(
      "lost",
      async () => revocationChannelStatus(b.auth),
      (status) => status === "lost",
      3 * heartbeatMs + 500,
    );
    expect(b.events.at(-1)).toMatchObject({ type: "revocation_channel.lost", maxRevocationDelaySeconds: 60 });
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    await logout(a.auth, { refreshToken: tokens.refreshToken });
    await sleep(50);
    expect(await outcome(b.auth, tokens)).toBe("fulfilled");
    offset.ms = 60_000;
    expect(await outcome(b.auth, tokens)).toBe(refused);
    forwarder.restore();
    await until(
      "restored",
      async () => revocationChannelStatus(b.auth),
      (status) => status === "connected",
      10_000,
    );
    expect(b.events.at(-1)).toMatchObject({ type: "revocation_channel.restored" });
    const again = await signIn(a.auth, user.username);
    expect(await outcome(b.auth, again)).toBe("fulfilled");
    await logout(a.auth, { refreshToken: again.refreshToken });
    await until(
      "refused on B after the restore",
      () => outcome(b.auth, again),
      (result) => result === refused,
      100,
    );
  });

  it("a channel whose Redis never answers is lost from the start and fails no flow", async () => {
    const forwarder = await startTcpForwarder(redisPort);
    cleanups.push(() => forwarder.close());
    const client = await connectedClient(redisVia(forwarder.port));
    forwarder.cut("reset");
    const revocationChannel: RedisRevocationChannel = redisRevocationChannel({ client, channel: runChannel(), heartbeatMs });
    const reported: unknown[] = [];
    const auth = createAuth({
      storage: memoryStorage(),
      issuer: testIssuer,
      audience: testAudience,
      secrets,
      revocationChannel,
      sweepInterval: false,
      onInternalError: (error) => reported.push(error),
    });
    cleanups.push(() => {
      revocationChannel.close();
      client.destroy();
    });
    await until(
      "lost",
      async () => revocationChannelStatus(auth),
      (status) => status === "lost",
      3000,
    );
    const user = await createTestUser(auth, "no-redis");
    const tokens = await signIn(auth, user.username);
    await logout(auth, { refreshToken: tokens.refreshToken });
    expect(await outcome(auth, tokens)).toBe(refused);
    expect(reported.length).toBeGreaterThan(0);
  });

  it("refuses a channel name with a stray brace and a heartbeat out of range", async () => {
    const client = await connectedClient(redisUrl);
    cleanups.push(() => client.destroy());
    expect(() => redisRevocationChannel({ client, channel: "a}b" })).toThrow(/hash tag/);
    expect(() => redisRevocationChannel({ client, channel: "" })).toThrow(/non-empty/);
    expect(() => redisRevocationChannel({ client, heartbeatMs: 50 })).toThrow(/heartbeatMs/);
  });
});

const program = fileURLToPath(new URL("./revocation-instance.test-support.ts", import.meta.url));
const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Instance B: a Node process of its own (revocation-instance.test-support.ts). */
class InstanceProcess {
  readonly events: AuthEvent[] = [];
  #waiting: { type: InstanceMessage["type"]; resolve: (message: InstanceMessage) => void } | null = null;
  constructor(readonly child: ChildProcess) {
    child.on("message", (message: InstanceMessage) => {
      if (message.type === "event") this.events.push(message.event);
      else if (this.#waiting && (message.type === this.#waiting.type || message.type === "failed")) {
        const { resolve } = this.#waiting;
        this.#waiting = null;
        resolve(message);
      }
    });
  }
  async ask(message: InstanceMessage, answer: InstanceMessage["type"]): Promise<InstanceMessage> {
    const reply = new Promise<InstanceMessage>((resolve) => {
      this.#waiting = { type: answer, resolve };
    });
    this.child.send(message);
    const got = await reply;
    if (got.type === "failed") throw new Error(`instance B: ${got.message}`);
    return got;
  }
  async verify(tokens: TokenSet): Promise<number | "fulfilled"> {
    const reply = await this.ask({ type: "verify", token: tokens.accessToken }, "verified");
    return reply.type === "verified" ? reply.outcome : -1;
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return resolve();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
      this.child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.disconnect();
    });
  }
}

async function startInstance(config: InstanceConfig): Promise<InstanceProcess> {
  const child = fork(program, [], {
    cwd: repositoryRoot,
    execArgv: ["--import", "tsx"],
    env: { ...process.env, TSX_TSCONFIG_PATH: `${repositoryRoot}tsconfig.json` },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const instance = new InstanceProcess(child);
  try {
    await Promise.race([
      instance.ask({ type: "start", config }, "ready"),
      new Promise((_, reject) => child.once("exit", (code) => reject(new Error(`instance B exited (${code})`)))),
    ]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return instance;
}

describeWithServices("the Redis revocation channel, two processes on one PostgreSQL", () => {
  let schema: ScratchSchema;
  let storage: KyselyStorage;
  let client: Awaited<ReturnType<typeof connectedClient>>;
  let revocationChannel: RedisRevocationChannel;
  let a: Auth;
  let b: InstanceProcess | undefined;
  let forwarder: TcpForwarder;

  beforeAll(async () => {
    schema = await createScratchSchema();
    storage = await connectStorage({ url: schema.url, maxConnections: 4 });
    await migrate(storage);
    forwarder = await startTcpForwarder(redisPort);
    const channel = runChannel();
    client = await connectedClient(redisUrl);
    revocationChannel = redisRevocationChannel({ client, channel, heartbeatMs });
    a = createAuth({
      storage,
      issuer: testIssuer,
      audience: testAudience,
      secrets,
      tokenStateCacheSeconds: 60,
      revocationChannel,
      sweepInterval: false,
    });
    b = await startInstance({
      databaseUrl: schema.url,
      redisUrl: redisVia(forwarder.port),
      channel,
      heartbeatMs,
      issuer: testIssuer,
      audience: testAudience,
      secrets,
    });
  });

  afterAll(async () => {
    await b?.close();
    revocationChannel?.close();
    client?.destroy();
    await forwarder?.close();
    await storage?.close();
    await schema?.drop();
  });

  it("SE-3: a session ended on A is refused on B within 100 ms with tokenStateCacheSeconds 60", async () => {
    const instance = b as InstanceProcess;
    const user = await createTestUser(a, "two-processes");
    for (let round = 0; round < 3; round += 1) {
      const tokens = await signIn(a, user.username);
      expect(await instance.verify(tokens)).toBe("fulfilled");
      expect(await instance.verify(tokens)).toBe("fulfilled");
      await logout(a, { refreshToken: tokens.refreshToken });
      const took = await until(
        "refused on B",
        () => instance.verify(tokens),
        (result) => result === refused,
        100,
      );
      expect(took).toBeLessThan(100);
    }
  });

  it("with B's connection to Redis reset, B emits revocation_channel.lost and refuses within the 60 s bound of its clock; restored, at once again", async () => {
    const instance = b as InstanceProcess;
    const user = await createTestUser(a, "cut-off");
    const tokens = await signIn(a, user.username);
    expect(await instance.verify(tokens)).toBe("fulfilled");
    forwarder.cut("reset");
    const last = () => instance.events.at(-1)?.type;
    await until("lost on B", last, (type) => type === "revocation_channel.lost", 3 * heartbeatMs + 1000);
    expect(instance.events.at(-1)).toMatchObject({ maxRevocationDelaySeconds: 60 });
    expect(await instance.verify(tokens)).toBe("fulfilled");
    await logout(a, { refreshToken: tokens.refreshToken });
    await sleep(100);
    expect(await instance.verify(tokens)).toBe("fulfilled");
    await instance.ask({ type: "advance", ms: 57_000 }, "advanced");
    expect(await instance.verify(tokens)).toBe("fulfilled");
    await instance.ask({ type: "advance", ms: 3_000 }, "advanced");
    expect(await instance.verify(tokens)).toBe(refused);
    forwarder.restore();
    await until("restored on B", last, (type) => type === "revocation_channel.restored", 10_000);
    const again = await signIn(a, user.username);
    expect(await instance.verify(again)).toBe("fulfilled");
    await signOutEverywhere(a, { userId: user.id });
    await until(
      "refused on B after the restore",
      () => instance.verify(again),
      (result) => result === refused,
      100,
    );
  });
});
