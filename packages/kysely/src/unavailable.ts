import { storageUnavailable } from "@portcullis/core";

/** Error codes of a connection that failed or was cut, from Node's sockets, `pg` and `mysql2`. */
const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
]);

/** `pg` messages of a client whose connection is gone or was never made. */
const connectionMessages =
  /Connection terminated|Query read timeout|connection is not queryable|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended|Cannot use a pool after calling end|PGlite is closed|read ECONNRESET|Can't add new command when connection is in closed state/i;

/**
 * Whether an error thrown by a driver means the database could not be reached (the server
 * down or restarting, a connection refused, cut or timed out), not that a statement was wrong:
 * SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown), 53300
 * (too many connections), Node's socket errors, and the drivers' own messages for them.
 */
export function isConnectionFailure(error: unknown): boolean {
  const { code, message, fatal } = (error ?? {}) as { code?: unknown; message?: unknown; fatal?: unknown };
  if (typeof code === "string" && (connectionCodes.has(code) || /^08/.test(code) || /^57P/.test(code) || code === "53300")) {
    return true;
  }
  if (fatal === true) return true;
  return typeof message === "string" && connectionMessages.test(message);
}

/**
 * Wraps each method of a store: it first awaits `ready` (the schema check), and a connection
 * failure it meets is thrown as `storageUnavailable` (50300 to the client) instead of the driver's error.
 */
export function withUnavailableAsAuthError<T extends object>(store: T, ready: () => Promise<void>): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        await ready();
        return await (method as (...args: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        throw isConnectionFailure(error) ? storageUnavailable(error) : error;
      }
    };
  }
  return wrapped as T;
}
