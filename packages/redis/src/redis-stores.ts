import { createHash } from "node:crypto";
import {
  type ChallengeKind,
  type ChallengeRecord,
  type ChallengeStore,
  type CounterStore,
  type Storage,
  storageUnavailable,
} from "@portcullis/core";
import { ErrorReply } from "redis";
import { type Connection, type RedisConnection, connectionOf } from "./connection.js";
import { evictionGuard } from "./eviction-policy.js";
import { asStorageError } from "./unavailable.js";

/** Options of {@link redisStores}. */
export interface RedisStoresOptions {
  /**
   * A node-redis client, connected (`await client.connect()`), with an `error` listener of
   * yours. Its command timeout (`commandOptions.timeout`, 5 s by default in node-redis) bounds
   * how long a request waits for a Redis that does not answer before it answers 50300.
   */
  client: RedisConnection;
  /**
   * How long one round trip to Redis may take, in milliseconds, before the operation answers
   * 50300: node-redis's own command timeout covers only commands it has not sent yet, so a Redis
   * that stops answering mid-command (a network that drops packets, a primary that hangs) would
   * otherwise hold the request forever. Default 2000.
   */
  timeoutMs?: number;
  /**
   * Put before every key, followed by `:`, so that several applications or deployments can
   * share one Redis. Default `"portcullis"`.
   */
  prefix?: string;
  /**
   * The durable storage these stores go beside (`{ ...durable, challenges, counters }`). Core's
   * sweep calls only `challenges.deleteExpired`, which in SQL storage and `memoryStorage` also
   * prunes sessions and refresh tokens past their expiry: given here, the Redis
   * `challenges.deleteExpired` calls the durable one too, so that pruning goes on. Without it,
   * expired sessions and refresh tokens stay in the durable store.
   */
  durable?: Pick<Storage, "challenges">;
  /**
   * How many replicas must acknowledge a consumed challenge or a counted attempt before it is
   * answered (Redis `WAIT` after the script). With asynchronous replication, a failover can
   * lose the last writes of a primary and let a consumed challenge be consumed again; with 1,
   * a consumption that no replica acknowledged within {@link waitTimeoutMs} answers 50300
   * instead (it is spent on the primary: that fails closed). Default 0: no waiting.
   */
  waitForReplicas?: number;
  /** How long `WAIT` waits for {@link waitForReplicas} acknowledgements, in milliseconds. Default 1000. */
  waitTimeoutMs?: number;
  /**
   * Serve a Redis whose `maxmemory-policy` this client may not read (neither `INFO` nor
   * `CONFIG GET` allowed) as though it were `noeviction`. Unsafe: a Redis that evicts forgets
   * lockouts and single-use challenges. Default false: the stores refuse such a server (50300)
   * as they refuse one whose policy evicts (ST-4).
   */
  unsafeAssumeNoEviction?: boolean;
}

/** The stores {@link redisStores} returns: spread them over a durable storage. */
export type RedisStores = Pick<Storage, "challenges" | "counters">;

/**
 * A {@link ChallengeStore} and a {@link CounterStore} on Redis or Redis Cluster (node-redis),
 * for the short-lived, write-heavy state (ceremonies, OAuth states, temporary tokens, throttle
 * counters), to combine with any durable storage. Every single-use and counting operation is
 * one Lua script on one key (ST-1, TMP-4, RL-4), so on Redis Cluster each runs on the node that
 * holds its key's slot, with nothing in between. When Redis cannot be reached, times out, is
 * failing over or is out of memory, each method throws `storageUnavailable(cause)`: the request
 * answers 50300, and the next one succeeds once the client has reconnected or found the
 * promoted replica. A Redis that may evict keys would forget lockouts and spent challenges: the
 * stores serve only primaries whose `maxmemory-policy` is `noeviction`, read before the first
 * operation and after each reconnection, and answer 50300 naming the policy otherwise (ST-4;
 * {@link checkEvictionPolicy} for a start-up or readiness check).
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * const client = createClient({ url: process.env.REDIS_URL, commandOptions: { timeout: 1000 } });
 * client.on("error", (error) => log.warn(error));
 * await client.connect();
 * await checkEvictionPolicy(client); // stop here if Redis may evict keys
 * const sql = await connectStorage({ url: process.env.DATABASE_URL! });
 * const { challenges, counters } = redisStores({ client, prefix: "auth", durable: sql });
 * const auth = createAuth({ storage: { ...sql, challenges, counters }, issuer, audience, secrets });
 * ```
 */
export function redisStores(options: RedisStoresOptions): RedisStores {
  const {
    client,
    prefix = "portcullis",
    durable,
    timeoutMs = 2000,
    waitForReplicas = 0,
    waitTimeoutMs = 1000,
    unsafeAssumeNoEviction = false,
  } = options ?? {};
  if (client === null || typeof client !== "object") throw new TypeError("redisStores needs a node-redis client as `client`");
  if (typeof prefix !== "string" || prefix === "") throw new TypeError("redisStores: `prefix` must be a non-empty string");
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
    throw new TypeError("redisStores: `timeoutMs` must be a whole number of milliseconds, 1 or more");
  if (!Number.isSafeInteger(waitForReplicas) || waitForReplicas < 0)
    throw new TypeError("redisStores: `waitForReplicas` must be a whole number, 0 or more");
  if (!Number.isSafeInteger(waitTimeoutMs) || waitTimeoutMs < 1)
    throw new TypeError("redisStores: `waitTimeoutMs` must be a whole number of milliseconds, 1 or more");
  if (waitForReplicas > 0 && waitTimeoutMs >= timeoutMs)
    throw new TypeError("redisStores: `waitTimeoutMs` must be below `timeoutMs`, or every WAIT would time out as unanswered");
  if (typeof unsafeAssumeNoEviction !== "boolean")
    throw new TypeError("redisStores: `unsafeAssumeNoEviction` must be true or false");
  const redis: Redis = { ...connectionOf(client, timeoutMs), prefix, waitForReplicas, waitTimeoutMs };
  const guard = evictionGuard(client, timeoutMs, unsafeAssumeNoEviction);
  return {
    challenges: guarded(redisChallenges(redis, durable), guard),
    counters: guarded(redisCounters(redis), guard),
  };
}

interface Redis extends Connection {
  prefix: string;
  waitForReplicas: number;
  waitTimeoutMs: number;
}

/**
 * `store` with each method run only once `guard` (the eviction policy, ST-4) passed, and its
 * node-redis errors turned into `storageUnavailable` when Redis could not be reached.
 */
function guarded<T extends object>(store: T, guard: () => Promise<void>): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        await guard();
        return await (method as (...args: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        throw asStorageError(error);
      }
    };
  }
  return wrapped as T;
}

interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash("sha1").update(source).digest("hex") });

/** Runs `script` on `key` atomically: `EVALSHA`, or `EVAL` when the server has not cached it (a restart, a failover). */
async function run<T>(redis: Redis, { source, sha }: Script, key: string, args: (string | number)[]): Promise<T> {
  const rest = args.map(String);
  try {
    return await redis.send<T>(key, ["EVALSHA", sha, "1", key, ...rest]);
  } catch (error) {
    if (!(error instanceof ErrorReply && error.message.startsWith("NOSCRIPT"))) throw error;
    return redis.send<T>(key, ["EVAL", source, "1", key, ...rest]);
  }
}

/** Waits for {@link RedisStoresOptions.waitForReplicas} replicas to hold the writes made on `key`'s node so far. */
async function replicated(redis: Redis, key: string): Promise<void> {
  if (redis.waitForReplicas === 0) return;
  const acknowledged = await redis.send<number>(key, ["WAIT", String(redis.waitForReplicas), String(redis.waitTimeoutMs)]);
  if (Number(acknowledged) < redis.waitForReplicas) {
    throw storageUnavailable(
      new Error(`Redis WAIT: ${acknowledged} of ${redis.waitForReplicas} replicas acknowledged within ${redis.waitTimeoutMs} ms`),
    );
  }
}

/**
 * Redis deletes a record this long after its lifetime (`expiresAt - createdAt`, or a counter's
 * window). A TTL counts the server's clock from the write, while whether a record is live is
 * decided by comparing its `expiresAt` with the `now` each call passes: the TTL only reclaims memory.
 */
const expiryGraceMs = 60_000;

/** `text` with the characters that mean something in a `SCAN MATCH` pattern escaped. */
const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, "\\$&");

// A challenge is a hash: `kind`, `expiresAt` and `attempts`, which the scripts compare and
// count, and `record`, the JSON of the rest, which they never decode.

const putScript = script(`
-- ARGV: kind, expiresAt, attempts, the rest as JSON, the TTL in ms.
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'kind', ARGV[1], 'expiresAt', ARGV[2], 'attempts', ARGV[3], 'record', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`);

const liveChallenge = `
-- ARGV: kind, now, then what the script adds.
local challenge = redis.call('HMGET', KEYS[1], 'kind', 'expiresAt', 'attempts', 'record')
if challenge[1] ~= ARGV[1] or tonumber(challenge[2]) <= tonumber(ARGV[2]) then return false end`;

const consumeScript = script(`${liveChallenge}
redis.call('DEL', KEYS[1])
return challenge`);

const takeAttemptScript = script(`${liveChallenge}
-- ARGV[3]: the limit of attempts.
if tonumber(challenge[3]) >= tonumber(ARGV[3]) then return false end
challenge[3] = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return challenge`);

const deleteIfExpiredScript = script(`
-- ARGV: now. Deletes the challenge if it expired at now; returns 1 if it did.
local expiresAt = redis.call('HGET', KEYS[1], 'expiresAt')
if expiresAt and tonumber(expiresAt) <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`);

type StoredChallenge = [kind: string, expiresAt: string, attempts: string | number, record: string];

function challengeOf([kind, expiresAt, attempts, record]: StoredChallenge): ChallengeRecord {
  return { ...JSON.parse(record), kind: kind as ChallengeKind, expiresAt: Number(expiresAt), attempts: Number(attempts) };
}

function redisChallenges(redis: Redis, durable: RedisStoresOptions["durable"]): ChallengeStore {
  const keyPrefix = `${redis.prefix}:challenge:`;
  const keyOf = (id: string) => `${keyPrefix}${id}`;
  const stored = (reply: StoredChallenge | null) => (reply === null ? null : challengeOf(reply));

  async function deleteExpiredInRedis(now: number, limit: number): Promise<number> {
    let deleted = 0;
    for (const primary of await redis.primaries()) {
      let cursor = "0";
      do {
        const [next, keys] = await primary.sendCommand<[string, string[]]>([
          "SCAN",
          cursor,
          "MATCH",
          `${escapeGlob(keyPrefix)}*`,
          "COUNT",
          "1000",
        ]);
        cursor = String(next);
        for (let start = 0; start < keys.length && deleted < limit; ) {
          const batch = keys.slice(start, start + (limit - deleted));
          start += batch.length;
          const results = await Promise.all(batch.map((key) => run<number>(redis, deleteIfExpiredScript, key, [now])));
          deleted += results.reduce((sum, result) => sum + Number(result), 0);
        }
        if (deleted >= limit) return deleted;
      } while (cursor !== "0");
    }
    return deleted;
  }

  return {
    async put({ id, kind, expiresAt, attempts, ...rest }) {
      const ttl = Math.ceil(Math.max(expiresAt - rest.createdAt, 0) + expiryGraceMs);
      await run(redis, putScript, keyOf(id), [kind, expiresAt, attempts, JSON.stringify({ id, ...rest }), ttl]);
    },
    async find(id, kind, now) {
      const reply = await redis.send<(string | null)[]>(keyOf(id), [
        "HMGET",
        keyOf(id),
        "kind",
        "expiresAt",
        "attempts",
        "record",
      ]);
      const [storedKind, expiresAt] = reply;
      return storedKind === kind && Number(expiresAt) > now ? challengeOf(reply as StoredChallenge) : null;
    },
    async consume(id, kind, now) {
      const challenge = stored(await run<StoredChallenge | null>(redis, consumeScript, keyOf(id), [kind, now]));
      if (challenge !== null) await replicated(redis, keyOf(id));
      return challenge;
    },
    async takeAttempt(id, kind, limit, now) {
      const challenge = stored(await run<StoredChallenge | null>(redis, takeAttemptScript, keyOf(id), [kind, now, limit]));
      if (challenge !== null) await replicated(redis, keyOf(id));
      return challenge;
    },
    async deleteExpired(now, limit) {
      const deleted = await deleteExpiredInRedis(now, limit);
      if (deleted >= limit || durable === undefined) return deleted;
      return deleted + (await durable.challenges.deleteExpired(now, limit));
    },
  };
}

// A counter is a hash of `count` and `resetAt`, expiring with its window.

const hitScript = script(`
-- ARGV: now, limit, resetAt of a window starting now, its TTL in ms.
-- Returns the count, 1 if this hit was counted (else 0), and resetAt.
local resetAt = redis.call('HGET', KEYS[1], 'resetAt')
if not resetAt or tonumber(resetAt) <= tonumber(ARGV[1]) then
  resetAt = ARGV[3]
  redis.call('HSET', KEYS[1], 'count', 0, 'resetAt', resetAt)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if count >= tonumber(ARGV[2]) then return {count, 0, resetAt} end
return {redis.call('HINCRBY', KEYS[1], 'count', 1), 1, resetAt}`);

function redisCounters(redis: Redis): CounterStore {
  const keyOf = (key: string) => `${redis.prefix}:counter:${key}`;
  return {
    async hit(key, limit, windowMs, now) {
      const args = [now, limit, now + windowMs, Math.ceil(windowMs + expiryGraceMs)];
      const [count, allowed, resetAt] = await run<[number, number, string]>(redis, hitScript, keyOf(key), args);
      return { count: Number(count), allowed: Number(allowed) === 1, resetAt: Number(resetAt) };
    },
    async peek(key, now) {
      const [count, resetAt] = await redis.send<(string | null)[]>(keyOf(key), ["HMGET", keyOf(key), "count", "resetAt"]);
      return count != null && resetAt != null && Number(resetAt) > now ? Number(count) : 0;
    },
    async reset(key) {
      await redis.send(keyOf(key), ["DEL", keyOf(key)]);
    },
  };
}
