import { storageUnavailable } from "@portcullis/core";
import { isMissingTable } from "./schema-hints.js";

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

/** The schema check a storage makes before its stores' operations. */
export interface SchemaGuard {
  /** Resolves once the schema is known to be current; rejects with an error that says what to run. */
  ready(): Promise<void>;
  /** The error to throw for a driver's "no such table" met after `ready`: the check made again, saying what to run. */
  missingTable(cause: unknown): Promise<Error>;
}

/**
 * Wraps each method of a store: it first awaits `schema.ready()` (the schema check), a connection
 * failure it meets is thrown as `storageUnavailable` (50300 to the client) instead of the
 * driver's error, and a table found missing (the tables dropped since the check) as the check's
 * error, which says to run migrate.
 */
export function withUnavailableAsAuthError<T extends object>(store: T, schema: SchemaGuard): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        await schema.ready();
        return await (method as (...args: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        const failure = isMissingTable(error) ? await schema.missingTable(error).catch((caught: unknown) => caught) : error;
        throw isConnectionFailure(failure) ? storageUnavailable(failure) : failure;
      }
    };
  }
  return wrapped as T;
}
