// The one file that uses ldapjs: replacing it with another client changes this file only.
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import ldap from "ldapjs";
import { encodeFilter, parseFilter } from "./filter.js";

/** Where a connection failed: the socket, TLS, a deadline, or an LDAP result code. */
export type LdapFailureKind = "connection" | "tls" | "timeout" | "result";

/** A failure of the LDAP client; `resultCode` is the LDAP result when `kind` is "result". */
export class LdapFailure extends Error {
  override readonly name = "LdapFailure";
  readonly kind: LdapFailureKind;
  readonly resultCode: number | null;

  constructor(kind: LdapFailureKind, message: string, options: { cause?: unknown; resultCode?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.resultCode = options.resultCode ?? null;
  }
}

/** An entry a search returned: its DN and its attributes' values as bytes, by lower-cased name. */
export interface LdapEntry {
  dn: string;
  attributes: Map<string, Buffer[]>;
}

/** What one search asks for; `filter` is RFC 4515 text, escaped values sent as the bytes they stand for. */
export interface LdapSearch {
  scope: "base" | "sub";
  filter: string;
  attributes: string[];
  /** The most entries wanted; more answer sizeLimitExceeded (4). */
  sizeLimit: number;
}

/** One open connection: every call fails with {@link LdapFailure}. */
export interface LdapConnection {
  /** StartTLS (RFC 4513 §3): on any failure the connection is closed, never used in plaintext. */
  startTls(): Promise<void>;
  /** A simple bind; the password is sent as its UTF-8 bytes, unchanged. */
  bind(dn: string, password: string): Promise<void>;
  search(baseDn: string, search: LdapSearch): Promise<LdapEntry[]>;
  /** Unbinds and closes the socket; safe to call more than once. */
  close(): Promise<void>;
}

/** How to reach the server and how long each step may take. */
export interface LdapConnectOptions {
  /** `ldap://host:port` or `ldaps://host:port`. */
  url: string;
  /** PEM certificates to trust; null trusts Node's default CAs. */
  ca: string | null;
  /** For connecting and for the TLS handshake (ldaps:// or StartTLS). */
  connectTimeoutMs: number;
  /** For each bind and search. */
  operationTimeoutMs: number;
  /** Aborting it ends whatever runs (kind "timeout"), closes the socket, and fails every later call. */
  signal?: AbortSignal;
}

/** Result codes ldapjs reports as its own errors, `code` being the LDAP result. */
function resultCodeOf(error: unknown): number | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : null;
}

const connectionErrorCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/** TLS verification of the server: its certificate against `ca`, and its name; never switched off. */
function tlsOptions(host: string, ca: string | null): ConnectionOptions {
  return {
    host,
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...(ca === null ? {} : { ca }),
    rejectUnauthorized: true,
  };
}

/**
 * Runs `start` with a deadline and the caller's `signal`; past the deadline, or once the signal
 * aborts, `onStop` runs and the promise fails with kind "timeout". An aborted signal never starts it.
 */
function withDeadline<T>(
  milliseconds: number,
  what: string,
  signal: AbortSignal | undefined,
  onStop: () => void,
  start: () => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = (failure: LdapFailure) => {
      settle();
      onStop();
      reject(failure);
    };
    const onAbort = () => stop(new LdapFailure("timeout", `${what} was aborted`, { cause: signal?.reason }));
    const timer = setTimeout(() => stop(new LdapFailure("timeout", `${what} took longer than ${milliseconds} ms`)), milliseconds);
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    start().then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

function failureOf(error: unknown, kind: LdapFailureKind, what: string): LdapFailure {
  if (error instanceof LdapFailure) return error;
  const resultCode = resultCodeOf(error);
  if (resultCode !== null)
    return new LdapFailure("result", `${what} answered result ${resultCode}`, { cause: error, resultCode });
  return new LdapFailure(kind, `${what} failed`, { cause: error });
}

/** ldapjs wants a filter object; this one carries the bytes {@link encodeFilter} made (ldapjs's own parser sends `\xx` escapes as text). */
function encodedFilter(text: string) {
  const encoded = encodeFilter(parseFilter(text));
  return {
    [Symbol.toStringTag]: "FilterString",
    toBer: () => ({ buffer: encoded }),
    toString: () => text,
  } as unknown as ldap.Filter;
}

function entryOf(found: ldap.SearchEntry): LdapEntry {
  const attributes = new Map<string, Buffer[]>();
  for (const attribute of found.attributes) {
    const name = attribute.type.toLowerCase();
    attributes.set(name, [...(attributes.get(name) ?? []), ...(attribute.buffers as Buffer[])]);
  }
  return { dn: String(found.objectName ?? ""), attributes };
}

/**
 * Opens a connection (ldaps:// verifies the server before this resolves) within the connect
 * timeout. Nothing is bound yet. Once `options.signal` aborts, the socket is destroyed at once.
 *
 * @throws {LdapFailure} kind "connection", "tls" (ldaps:// only) or "timeout".
 */
export async function openLdapConnection(options: LdapConnectOptions): Promise<LdapConnection> {
  const url = new URL(options.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const secure = url.protocol === "ldaps:";
  const tls = tlsOptions(host, options.ca);
  const client = ldap.createClient({ url: options.url, tlsOptions: tls, reconnect: false });
  let lastError: unknown = null;
  client.on("error", (error: unknown) => {
    lastError = error;
  });
  const destroy = () => client.destroy();
  const { signal } = options;

  await withDeadline(
    options.connectTimeoutMs,
    "connecting",
    signal,
    destroy,
    () =>
      new Promise<void>((resolve, reject) => {
        client.once("connect", () => resolve());
        const fail = (error: unknown) => {
          destroy();
          const code = (error as { code?: unknown } | null)?.code;
          const kind = secure && !(typeof code === "string" && connectionErrorCodes.has(code)) ? "tls" : "connection";
          reject(failureOf(error, kind, "connecting"));
        };
        client.once("connectError", fail);
        client.once("error", fail);
      }),
  );

  const operation = <T>(
    what: string,
    kind: LdapFailureKind,
    timeoutMs: number,
    run: (done: (error: unknown, value?: T) => void) => void,
  ) =>
    withDeadline(
      timeoutMs,
      what,
      signal,
      destroy,
      () =>
        new Promise<T>((resolve, reject) => {
          run((error, value) => (error ? reject(failureOf(error, kind, what)) : resolve(value as T)));
        }),
    ).catch((error: unknown) => {
      if (!(error instanceof LdapFailure && error.kind === "result")) destroy();
      throw error instanceof LdapFailure ? error : failureOf(lastError ?? error, kind, what);
    });

  // Between operations too (a caller's hook running), an abort closes the socket at once.
  signal?.addEventListener("abort", destroy, { once: true });
  let closed = false;
  return {
    startTls: () =>
      operation<void>("StartTLS", "tls", options.connectTimeoutMs, (done) =>
        client.starttls(tls, [], (error) => done(error)),
      ).catch((error: unknown) => {
        destroy();
        const failure = error as LdapFailure;
        throw failure.kind === "timeout" ? failure : new LdapFailure("tls", "StartTLS failed", { cause: failure });
      }),
    bind: (dn, password) =>
      operation<void>("bind", "connection", options.operationTimeoutMs, (done) =>
        client.bind(dn, password, (error) => done(error)),
      ),
    search: (baseDn, search) =>
      operation<LdapEntry[]>("search", "connection", options.operationTimeoutMs, (done) => {
        const request = {
          scope: search.scope,
          filter: encodedFilter(search.filter),
          attributes: search.attributes,
          sizeLimit: search.sizeLimit,
          timeLimit: Math.ceil(options.operationTimeoutMs / 1000),
        };
        client.search(baseDn, request, (error, response) => {
          if (error) return done(error);
          const entries: LdapEntry[] = [];
          response.on("searchEntry", (found) => entries.push(entryOf(found)));
          response.on("error", (failure) => done(failure));
          response.on("end", () => done(null, entries));
        });
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      signal?.removeEventListener("abort", destroy);
      if (signal?.aborted) {
        destroy();
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        client.unbind(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      destroy();
    },
  };
}
