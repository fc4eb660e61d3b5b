import { storageUnavailable } from "@portcullis/core";

/** Replies as RESP gives them, whatever type mapping the client was created with. */
const plainReplies = { typeMapping: {} };

/** What the stores use of a node-redis client from `createClient()`: a single server, or a primary with replicas. */
export interface RedisServerConnection {
  /** Sends one command (node-redis's `client.sendCommand`). */
  sendCommand<T>(args: string[], options?: typeof plainReplies): Promise<T>;
  /** node-redis's `ready` event, at each connection and reconnection: the stores read the server's eviction policy again. */
  on(event: "ready", listener: () => void): unknown;
}

/** What the stores use of a node-redis cluster client from `createCluster()`. */
export interface RedisClusterConnection {
  /** The primaries (node-redis's `cluster.masters`), for `SCAN` and the eviction policy. */
  readonly masters: readonly object[];
  /** The client of one node (node-redis's `cluster.nodeClient`). */
  nodeClient(node: object): Promise<Pick<RedisServerConnection, "sendCommand">>;
  /** Sends one command to the node that holds `firstKey`'s slot (node-redis's `cluster.sendCommand`). */
  sendCommand<T>(firstKey: string, isReadonly: boolean, args: string[], options?: typeof plainReplies): Promise<T>;
  /** node-redis's `node-ready` event, when a node's client connects or reconnects (a new primary after a failover too). */
  on(event: "node-ready", listener: () => void): unknown;
}

/**
 * A connected node-redis client: one from `createClient()` (a single server, or a primary with
 * replicas) or from `createCluster()` (Redis Cluster), whatever its modules, scripts, RESP
 * version or type mapping (node-redis 6). Described by what the stores use of it, so the
 * client's own generic types need not match.
 */
export type RedisConnection = RedisServerConnection | RedisClusterConnection;

/** One primary as the stores reach it: `SCAN` and the eviction policy are read on each. */
export interface Primary {
  /** `host:port` of a cluster's primary; `the server` for a single server's client. */
  address: string;
  sendCommand<T>(args: string[]): Promise<T>;
}

/** What the stores need of a client: one command sent to the node holding a key, and each primary. */
export interface Connection {
  send<T>(key: string, args: string[]): Promise<T>;
  primaries(): Promise<Primary[]>;
}

/** Whether `client` is node-redis's cluster client. */
export function isCluster(client: RedisConnection): client is RedisClusterConnection {
  return "masters" in client && "nodeClient" in client;
}

/** `reply`, or `storageUnavailable` once `timeoutMs` have passed without it. */
function withDeadline<T>(reply: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(storageUnavailable(new Error(`Redis did not answer within ${timeoutMs} ms`))), timeoutMs);
  });
  return Promise.race([reply, deadline]).finally(() => clearTimeout(timer));
}

/** `client` as the stores use it: every round trip bounded by `timeoutMs`, every reply plain. */
export function connectionOf(client: RedisConnection, timeoutMs: number): Connection {
  const bounded = (address: string, node: Pick<RedisServerConnection, "sendCommand">): Primary => ({
    address,
    sendCommand: <T>(args: string[]) => withDeadline(node.sendCommand<T>(args, plainReplies), timeoutMs),
  });
  if (isCluster(client)) {
    const addressOf = (primary: object) => String((primary as { address?: unknown }).address ?? "a primary");
    return {
      send: (key, args) => withDeadline(client.sendCommand(key, false, args, plainReplies), timeoutMs),
      primaries: async () => {
        const masters = [...client.masters];
        const nodes = await withDeadline(Promise.all(masters.map((primary) => client.nodeClient(primary))), timeoutMs);
        return nodes.map((node, index) => bounded(addressOf(masters[index] as object), node));
      },
    };
  }
  return {
    send: (_key, args) => withDeadline(client.sendCommand(args, plainReplies), timeoutMs),
    primaries: async () => [bounded("the server", client)],
  };
}
