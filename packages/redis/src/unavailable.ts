import { storageUnavailable } from "@portcullis/core";
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ErrorReply,
  MaxCommandRedirectionsError,
  ReconnectStrategyError,
  RootNodesUnavailableError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from "redis";

/**
 * Replies of a server that is there but cannot serve now: loading its data, a replica since a
 * failover, a script running too long, a cluster whose slot is moving or has no primary, out of
 * memory (`OOM`: a write over `maxmemory` under `noeviction`, also from inside a script).
 */
const unavailableReplies = /^(LOADING|READONLY|MASTERDOWN|BUSY|NOREPLICAS|TRYAGAIN|CLUSTERDOWN|MOVED|ASK|OOM)\b/;

/** What node-redis throws when it cannot reach a server, or gave up waiting for one. */
const connectionErrors = [
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  // A command waiting for a server that does not answer fails after the client's command timeout.
  TimeoutError,
  RootNodesUnavailableError,
  MaxCommandRedirectionsError,
];

/** What node-redis's cluster client throws, as a plain Error, while its view of the cluster changes. */
const topologyMessages = /^(Cluster closed|Could not find shard|Cannot find node )/;

/** Socket errors a connection attempt rejects with. */
const socketCodes = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/**
 * Whether `error`, thrown by node-redis, says that Redis could not be reached or cannot serve
 * now (down, timing out, failing over), rather than that a command was wrong.
 *
 * @example
 * ```ts
 * try { await client.ping(); } catch (error) { if (isRedisUnreachable(error)) retryLater(); else throw error; }
 * ```
 */
export function isRedisUnreachable(error: unknown): boolean {
  if (error instanceof ErrorReply) return unavailableReplies.test(error.message);
  if (connectionErrors.some((kind) => error instanceof kind)) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return topologyMessages.test(error.message) || (typeof code === "string" && socketCodes.has(code));
}

/** `error` as core should see it: `storageUnavailable(error)` (50300) when Redis could not be reached, else unchanged. */
export function asStorageError(error: unknown): unknown {
  return isRedisUnreachable(error) ? storageUnavailable(error) : error;
}
