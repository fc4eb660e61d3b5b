import { randomBytes } from "node:crypto";
import type { RevocationChannel, RevocationReceiver } from "@portcullis/core";

/** What the channel calls with each message of a subscription (node-redis's `PubSubListener`). */
type Listener = (message: string, channel: string) => unknown;

/** The connection that receives: node-redis's `client.duplicate()` or `cluster.duplicate()`. */
interface Subscriber {
  connect(): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  destroy(): void;
}

/** What the channel uses of a node-redis client from `createClient()`: `PUBLISH`, and a duplicate for `SUBSCRIBE`. */
export interface RedisServerPubSub {
  /** `PUBLISH`: sends a message to the channel's subscribers. */
  publish(channel: string, message: string): Promise<unknown>;
  /** A new client with the same options, not yet connected: the channel's subscriber connection. */
  duplicate(): Subscriber & {
    /** `SUBSCRIBE`: `listener` receives every message of `channels`; node-redis resubscribes after a reconnection. */
    subscribe(channels: string[], listener: Listener): Promise<unknown>;
  };
}

/** What the channel uses of a node-redis cluster client from `createCluster()`: sharded pub/sub (`SPUBLISH`, `SSUBSCRIBE`). */
export interface RedisClusterPubSub {
  /** The primaries (node-redis's `cluster.masters`): how a cluster client is told from a single server's. */
  readonly masters: readonly object[];
  /** `SPUBLISH`: sends a message to the subscribers of the shard channel, on the shard that owns its slot. */
  sPublish(channel: string, message: string): Promise<unknown>;
  /** A new cluster client with the same options, not yet connected: the channel's subscriber. */
  duplicate(): Subscriber & {
    /** `SSUBSCRIBE`: `listener` receives every message of `channels` (one slot); node-redis follows the slot when it moves. */
    sSubscribe(channels: string[], listener: Listener): Promise<unknown>;
  };
}

/** Options of {@link redisRevocationChannel}. */
export interface RedisRevocationChannelOptions {
  /**
   * A node-redis client from `createClient()` or `createCluster()`, connected, with an `error`
   * listener of yours: it publishes. The channel receives on a duplicate of it
   * (`client.duplicate()`) that it connects, watches and closes itself.
   */
  client: RedisServerPubSub | RedisClusterPubSub;
  /**
   * The pub/sub channel every instance of the service shares. Default
   * `"{portcullis}:revocations"`. Give each deployment sharing one Redis its own. In a cluster
   * the channel's hash tag (the part in braces, or the whole name) picks the shard that carries it.
   */
  channel?: string;
  /**
   * How often, in milliseconds, the channel sends itself a probe through Redis (on a channel
   * only it listens to, in the same shard). A probe not back by the next one means the channel
   * is lost; the first one back after a loss means it is restored. Default 5000; from 100 to 60000.
   */
  heartbeatMs?: number;
}

/** A {@link RevocationChannel} on Redis pub/sub that can be closed. */
export interface RedisRevocationChannel extends RevocationChannel {
  /** Stops the heartbeat and closes the subscriber connection; subscribed instances are told the channel is lost. */
  close(): void;
}

type State = "idle" | "connecting" | "connected" | "lost" | "closed";

const subscriberLost: Record<"server" | "cluster", string[]> = {
  server: ["error", "reconnecting", "end"],
  cluster: ["error", "node-error", "node-reconnecting", "node-disconnect", "disconnect"],
};

/**
 * A revocation channel on Redis pub/sub through node-redis, for `createAuth`'s
 * `revocationChannel`: every instance hears, within Redis' latency, each session that ends and
 * each token version that rises anywhere, and drops its cached token state.
 *
 * On a single server (or a primary with replicas) it uses `PUBLISH` and `SUBSCRIBE`; on Redis
 * Cluster, sharded pub/sub (`SPUBLISH`, `SSUBSCRIBE`, Redis 7), which keeps the messages in
 * the one shard that owns the channel's slot instead of broadcasting them to every node. The
 * subscription is on a connection of its own, a duplicate of `client`, which node-redis
 * reconnects and resubscribes; a heartbeat through Redis tells when it delivers and when it
 * does not, so that core can fall back to `tokenStateCacheSeconds` and say so
 * (`revocation_channel.lost`, `revocation_channel.restored`).
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * import { redisRevocationChannel } from "@portcullis/redis";
 *
 * const client = createClient({ url: process.env.REDIS_URL });
 * client.on("error", (error) => console.error("redis", error));
 * await client.connect();
 * const revocationChannel = redisRevocationChannel({ client });
 * const auth = createAuth({ ...config, tokenStateCacheSeconds: 60, revocationChannel });
 * // at shutdown: revocationChannel.close();
 * ```
 */
export function redisRevocationChannel(options: RedisRevocationChannelOptions): RedisRevocationChannel {
  const { client } = options;
  const cluster = isCluster(client);
  const channel = channelName(options.channel);
  const heartbeatMs = heartbeatOf(options.heartbeatMs);
  const probeChannel = `${hashTagged(channel) ? channel : `{${channel}}`}:probe:${randomBytes(12).toString("base64url")}`;
  const receivers = new Set<RevocationReceiver>();
  let state: State = "idle";
  let subscriber: Subscriber | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let probe: string | null = null;
  let probes = 0;

  const send = (name: string, text: string): Promise<unknown> =>
    cluster ? client.sPublish(name, text) : (client as RedisServerPubSub).publish(name, text);

  const lost = (error?: unknown) => {
    if (state === "lost" || state === "closed") return;
    state = "lost";
    // Only a probe sent after the loss may restore: one already under way can still come back on a dying connection.
    probe = null;
    for (const receiver of receivers) receiver.lost(error);
  };
  const connected = () => {
    if (state === "connected" || state === "closed") return;
    state = "connected";
    for (const receiver of receivers) receiver.connected();
  };
  const sendProbe = () => {
    if (state === "closed") return;
    probes += 1;
    const text = String(probes);
    probe = text;
    send(probeChannel, text).then(undefined, lost);
  };
  const onMessage: Listener = (message, name) => {
    if (name === probeChannel) {
      if (message === probe) {
        probe = null;
        connected();
      }
      return;
    }
    for (const receiver of receivers) receiver.message(message);
  };
  const beat = () => {
    if (probe !== null) lost(new Error(`the revocation channel's heartbeat did not come back within ${heartbeatMs} ms`));
    sendProbe();
  };

  const start = async () => {
    state = "connecting";
    timer = setInterval(beat, heartbeatMs);
    timer.unref();
    try {
      const duplicate = client.duplicate();
      subscriber = duplicate;
      for (const event of subscriberLost[cluster ? "cluster" : "server"]) duplicate.on(event, lost);
      duplicate.on(cluster ? "node-ready" : "ready", sendProbe);
      await duplicate.connect();
      const channels = [channel, probeChannel];
      if (cluster) await (duplicate as ReturnType<RedisClusterPubSub["duplicate"]>).sSubscribe(channels, onMessage);
      else await (duplicate as ReturnType<RedisServerPubSub["duplicate"]>).subscribe(channels, onMessage);
      sendProbe();
    } catch (error) {
      lost(error);
    }
  };

  return {
    async publish(message) {
      await send(channel, message);
    },
    subscribe(receiver) {
      receivers.add(receiver);
      if (state === "idle") void start();
      else if (state === "connected") receiver.connected();
      else if (state === "lost" || state === "closed") receiver.lost();
    },
    close() {
      if (timer !== null) clearInterval(timer);
      for (const receiver of receivers) if (state !== "lost" && state !== "closed") receiver.lost();
      state = "closed";
      subscriber?.destroy();
    },
  };
}

function isCluster(client: RedisServerPubSub | RedisClusterPubSub): client is RedisClusterPubSub {
  return typeof client === "object" && client !== null && "masters" in client;
}

/** Whether Redis Cluster would hash `name` by a hash tag: a `{`, then at least one character before the next `}`. */
function hashTagged(name: string): boolean {
  const open = name.indexOf("{");
  if (open === -1) return false;
  const close = name.indexOf("}", open + 1);
  return close > open + 1;
}

function channelName(channel: unknown): string {
  if (channel === undefined) return "{portcullis}:revocations";
  if (typeof channel !== "string" || channel === "") throw new TypeError("channel must be a non-empty string");
  if (!hashTagged(channel) && /[{}]/.test(channel)) {
    throw new TypeError(`channel ${JSON.stringify(channel)} has a brace but no hash tag: use "{name}:rest" or no braces`);
  }
  return channel;
}

function heartbeatOf(value: unknown): number {
  if (value === undefined) return 5000;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 100 || value > 60_000) {
    throw new TypeError(`heartbeatMs must be a whole number of milliseconds from 100 to 60000; got ${String(value)}`);
  }
  return value;
}
