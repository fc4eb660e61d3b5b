import { storageUnavailable } from "@portcullis/core";
import { ErrorReply } from "redis";
import { type Primary, type RedisConnection, connectionOf, isCluster } from "./connection.js";

/** Options of {@link checkEvictionPolicy}; `redisStores` takes the same. */
export interface EvictionPolicyOptions {
  /**
   * Serve a Redis whose eviction policy this client may not read (neither `INFO` nor
   * `CONFIG GET` allowed: some managed services, or an ACL user without them) as though it were
   * `noeviction`. Unsafe: if the server does evict, lockouts and single-use challenges can be
   * forgotten (RL-1, ST-1). Set it only when you have set `maxmemory-policy noeviction` on the
   * server yourself. A policy that can be read and evicts is refused whatever this says.
   * Default false: such a server is refused like one that evicts.
   */
  unsafeAssumeNoEviction?: boolean;
  /** How long one round trip may take, in milliseconds. Default 2000. */
  timeoutMs?: number;
}

/** One primary's `maxmemory-policy`, or why it could not be read. */
type Reading = { address: string; policy: string } | { address: string; unreadable: string };

/** The readings of every primary behind a client, shared by every store on it until it reconnects. */
interface ClientReadings {
  current: Promise<Reading[]> | null;
}

const readingsByClient = new WeakMap<RedisConnection, ClientReadings>();

/**
 * The readings kept for `client`: forgotten at each (re)connection of the client or of one of a
 * cluster's nodes (a failover's new primary too), so that they are read again before the next
 * operation.
 */
function readingsOf(client: RedisConnection): ClientReadings {
  let readings = readingsByClient.get(client);
  if (readings === undefined) {
    const created: ClientReadings = { current: null };
    const forget = () => {
      created.current = null;
    };
    if (isCluster(client)) client.on("node-ready", forget);
    else client.on("ready", forget);
    readingsByClient.set(client, created);
    readings = created;
  }
  return readings;
}

/** `INFO memory`'s `maxmemory_policy` (any user allowed `INFO`), else `CONFIG GET maxmemory-policy`. */
async function readPolicy(primary: Primary): Promise<Reading> {
  const refusals: string[] = [];
  try {
    const info = String(await primary.sendCommand(["INFO", "memory"]));
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy !== undefined) return { address: primary.address, policy };
    refusals.push("INFO memory has no maxmemory_policy");
  } catch (error) {
    if (!(error instanceof ErrorReply)) throw error;
    refusals.push(`INFO: ${error.message}`);
  }
  try {
    // RESP2 answers ["maxmemory-policy", value]; RESP3 a map.
    const reply = await primary.sendCommand<unknown>(["CONFIG", "GET", "maxmemory-policy"]);
    const policy = Array.isArray(reply) ? reply[1] : (reply as Record<string, unknown> | null)?.["maxmemory-policy"];
    if (typeof policy === "string") return { address: primary.address, policy };
    refusals.push("CONFIG GET answered no maxmemory-policy");
  } catch (error) {
    if (!(error instanceof ErrorReply)) throw error;
    refusals.push(`CONFIG GET: ${error.message}`);
  }
  return { address: primary.address, unreadable: refusals.join("; ") };
}

/** The policy of every primary behind `client`, read now. */
async function readPolicies(client: RedisConnection, timeoutMs: number): Promise<Reading[]> {
  const primaries = await connectionOf(client, timeoutMs).primaries();
  if (primaries.length === 0) throw storageUnavailable(new Error("the Redis Cluster client knows no primary yet"));
  return Promise.all(primaries.map(readPolicy));
}

/** Whether `readings` may be kept until the next reconnection: none evicts (a server that does is read again at each operation, so service resumes once it is fixed). */
const keepable = (readings: Reading[]) => readings.every((reading) => !("policy" in reading) || reading.policy === "noeviction");

/** Why the stores may not serve the primaries read, or null when they may. */
function refusal(readings: Reading[], unsafeAssumeNoEviction: boolean): Error | null {
  for (const reading of readings) {
    if ("policy" in reading && reading.policy !== "noeviction") {
      return new Error(
        `Redis at ${reading.address}: maxmemory-policy is ${reading.policy}, which may evict the stores' keys (lockout counters, single-use challenges) when memory runs out; set maxmemory-policy noeviction`,
      );
    }
    if ("unreadable" in reading && !unsafeAssumeNoEviction) {
      return new Error(
        `Redis at ${reading.address}: its maxmemory-policy could not be read (${reading.unreadable}); allow this client INFO or CONFIG GET, or, once you have set maxmemory-policy noeviction yourself, pass unsafeAssumeNoEviction: true`,
      );
    }
  }
  return null;
}

/**
 * What the stores run before each operation: throws `storageUnavailable` (50300, the reason to
 * `onInternalError`) unless every primary behind `client` has `maxmemory-policy noeviction`
 * (ST-4). The policy is read before the first operation and again after each reconnection.
 */
export function evictionGuard(client: RedisConnection, timeoutMs: number, unsafeAssumeNoEviction: boolean): () => Promise<void> {
  const readings = readingsOf(client);
  return async () => {
    if (readings.current === null) {
      const current = readPolicies(client, timeoutMs);
      readings.current = current;
      current.then(
        (read) => {
          if (!keepable(read) && readings.current === current) readings.current = null;
        },
        () => {
          if (readings.current === current) readings.current = null;
        },
      );
    }
    const reason = refusal(await readings.current, unsafeAssumeNoEviction);
    if (reason !== null) throw storageUnavailable(reason);
  };
}

/**
 * Reads the `maxmemory-policy` of every primary behind `client` now and resolves when each is
 * `noeviction`; rejects with the reason when one may evict keys, or when a policy cannot be read
 * (unless `unsafeAssumeNoEviction`). A Redis that evicts forgets lockouts and single-use
 * challenges (ST-4). `redisStores` refuses such a server by itself (each operation answers
 * 50300) and reads the policy again after each reconnection; call this at start-up to stop
 * there, and from a readiness check to notice a policy changed on a running server: the stores
 * on `client` take what it read. A Redis that cannot be reached rejects with node-redis's error.
 *
 * @example
 * ```ts
 * await client.connect();
 * await checkEvictionPolicy(client); // throws: "Redis at …: maxmemory-policy is volatile-lru, …"
 * app.get("/ready", async (req, res) => res.sendStatus(await checkEvictionPolicy(client).then(() => 200, () => 503)));
 * ```
 */
export async function checkEvictionPolicy(client: RedisConnection, options: EvictionPolicyOptions = {}): Promise<void> {
  const read = await readPolicies(client, options.timeoutMs ?? 2000);
  readingsOf(client).current = keepable(read) ? Promise.resolve(read) : null;
  const reason = refusal(read, options.unsafeAssumeNoEviction === true);
  if (reason !== null) throw reason;
}
