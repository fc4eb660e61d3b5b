import { createHash } from "node:crypto";
import type { UserFieldDefinitions } from "@portcullis/core";
import {
  Kysely,
  MysqlDialect,
  type MysqlPool,
  type MysqlPoolConnection,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
} from "kysely";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { loadDriver } from "./load-driver.js";
import { isConnectionFailure } from "./unavailable.js";
import type { UsersTableOptions } from "./users-table.js";

const preparedNames = new Map<string, string>();

/**
 * The name to prepare a statement under: one that begins with the comment `/* prepared *\/` (a
 * store's hot statement, such as a refresh's rotation) is named after its text's hash, so the
 * same text gets the same name on every connection and another text never shares it. Undefined
 * for every other statement, sent unnamed as Kysely sends it.
 */
function preparedName(text: string): string | undefined {
  if (!text.startsWith("/* prepared */")) return undefined;
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `portcullis_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * A `pg` pool whose clients are destroyed, not reused, once a statement on them failed for want
 * of a connection: after `query_timeout` fires, `pg` still counts that statement as running, so a
 * client handed back as it is would stall every request it serves next. With `prepare`, a
 * statement the stores mark as worth preparing (see {@link preparedName}) is sent as a named
 * statement, which PostgreSQL parses and plans once per connection.
 */
function discardingBrokenClients(pool: import("pg").Pool, prepare: boolean): PostgresPool {
  return {
    async connect() {
      const client = await pool.connect();
      let broken: Error | undefined;
      return {
        async query(text: string, values: unknown[]) {
          try {
            const name = prepare ? preparedName(text) : undefined;
            return await (name ? client.query({ name, text, values }) : client.query(text, values));
          } catch (error) {
            if (isConnectionFailure(error)) broken = error as Error;
            throw error;
          }
        },
        release: () => client.release(broken ?? false),
      } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/**
 * Replaces a `mysql2` pool connection's `query` and `release`, once, in place (so the pool and
 * Kysely still know it): each statement times out after `timeoutMs`, and a connection on which a
 * statement failed for want of a connection is destroyed on release instead of reused. When
 * `mysql2`'s timeout fires it fails the statement but keeps it as the connection's current
 * command, so a connection handed back as it is would hold every statement sent on it next
 * behind that one, for ever.
 */
function discardWhenBroken(connection: import("mysql2").PoolConnection, timeoutMs: number): void {
  let broken = false;
  const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
  const release = connection.release.bind(connection);
  const noting =
    (done: (...args: unknown[]) => void) =>
    (error: unknown, ...results: unknown[]) => {
      if (isConnectionFailure(error)) broken = true;
      done(error, ...results);
    };
  Object.assign(connection, {
    query: (sql: unknown, values: unknown, done: unknown) => {
      const settle = typeof done === "function" ? noting(done as (...args: unknown[]) => void) : done;
      return typeof sql === "string" ? query({ sql, values, timeout: timeoutMs }, settle) : query(sql, values, settle);
    },
    release() {
      if (!broken) return release();
      // destroy() takes it out of the pool and ends it politely; the socket goes at once, since
      // a connection that went silent would never answer the goodbye.
      connection.destroy();
      (connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
    },
  });
}

/**
 * A `mysql2` pool with `pg`'s bounds: waiting for a connection (a free one, or a new one
 * connecting) fails after `connectTimeoutMs`, as `connectionTimeoutMillis` does, and statements
 * are bounded and broken connections dropped by {@link discardWhenBroken}. Kysely's MySQL driver
 * sends plain SQL, which `mysql2` would wait on for ever, and `mysql2` queues callers for a busy
 * pool with no limit, each new connection its own `connectTimeout` after the last.
 */
function boundedMysqlPool(pool: import("mysql2").Pool, connectTimeoutMs: number, queryTimeoutMs: number): MysqlPool {
  const prepared = new WeakSet<object>();
  return {
    getConnection(callback) {
      let waiting = true;
      const timer = setTimeout(() => {
        waiting = false;
        const error = Object.assign(new Error("timeout exceeded when trying to connect"), { code: "ETIMEDOUT" });
        callback(error, undefined as unknown as MysqlPoolConnection);
      }, connectTimeoutMs);
      pool.getConnection((error, connection) => {
        if (!error && !prepared.has(connection)) {
          prepared.add(connection);
          discardWhenBroken(connection, queryTimeoutMs);
        }
        if (!waiting) {
          if (!error) connection.release();
          return;
        }
        waiting = false;
        clearTimeout(timer);
        callback(error, connection as unknown as MysqlPoolConnection);
      });
    },
    end: (callback) => pool.end(callback),
  };
}

/** The parts of a database URL that connectStorage uses, decoded. */
interface DatabaseUrl {
  protocol: string;
  hostname: string;
  port: string;
  username: string;
  password: string;
  database: string;
}

/**
 * Parses a database URL. A malformed one throws a TypeError of its own, without a cause: the
 * TypeError of `new URL` keeps the whole text as `input`, password and all, and a `URIError`
 * of a broken escape says nothing useful; neither may reach a log or a terminal.
 */
function parseDatabaseUrl(text: unknown): DatabaseUrl {
  if (text === undefined || text === null || text === "" || (typeof text === "string" && text.trim() === "")) {
    throw new TypeError(
      `@portcullis/kysely: url is ${text === undefined || text === null ? "missing" : "empty"}; give connectStorage the database's URL, postgres://user:password@host:5432/database or mysql://user:password@host:3306/database (is DATABASE_URL set where the service runs?)`,
    );
  }
  if (typeof text !== "string") throw new TypeError(`@portcullis/kysely: url must be a string; got ${typeof text}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(
      "@portcullis/kysely: url is not a valid URL; expected postgres://user:password@host:5432/database or mysql://user:password@host:3306/database, with any of @ : / ? # % in the user name or password percent-encoded (encodeURIComponent)",
    );
  }
  try {
    return {
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.slice(1)),
    };
  } catch {
    throw new TypeError("@portcullis/kysely: url holds a malformed %-escape in its user name, password or database name");
  }
}

/** Options of {@link connectStorage}. */
export interface ConnectStorageOptions {
  /** `postgres://user@host:5432/db` (or `postgresql://`), or `mysql://user@host:3306/db` (or `mariadb://`). */
  url: string;
  /** Table-name prefix, as for `kyselyStorage`. */
  prefix?: string;
  /** The additional user fields, as for `kyselyStorage` (add their columns with `portcullis fields`). */
  userFields?: UserFieldDefinitions;
  /** Your own users table, as for `kyselyStorage` (docs/existing-users-table.md). */
  users?: UsersTableOptions;
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** How long to wait for a connection before the request answers 50300. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** How long one statement may run before the request answers 50300. Default 10000 ms. */
  queryTimeoutMs?: number;
  /**
   * PostgreSQL: send the stores' hot statements (a refresh's rotation) as named prepared
   * statements, parsed and planned once per connection instead of on every call. Default true;
   * false for a pooler between this process and PostgreSQL that cannot keep a connection's
   * prepared statements (PgBouncer before 1.21, or without `max_prepared_statements`, in
   * transaction mode).
   */
  preparedStatements?: boolean;
  /** Receives errors of idle pooled connections (the server restarted, a connection was cut); by default they are dropped, and the pool replaces the connection. */
  onPoolError?: (error: unknown) => void;
}

/**
 * How connectStorage loads each driver; a test passes its own to play a driver that is not
 * installed. Typed loosely so that this package's declarations never name a driver's types,
 * which a project without that driver could not resolve.
 */
export interface DriverImports {
  pg: () => Promise<unknown>;
  mysql2: () => Promise<unknown>;
}

const installedDrivers: DriverImports = { pg: () => import("pg"), mysql2: () => import("mysql2") };

/**
 * Storage on a PostgreSQL or MySQL/MariaDB server named by a URL, with a pool this package makes
 * and looks after: every pooled connection has an `error` handler, so one that the server cuts
 * while idle is dropped and replaced instead of crashing the process; waiting for a connection
 * and running a statement are bounded, so an unreachable database answers 50300 in bounded
 * time. MySQL connections report matched rows (`FOUND_ROWS`). Needs `pg` or `mysql2` installed.
 *
 * @throws {TypeError} for a URL that is missing, empty, malformed or of another database, saying
 * which, never repeating it.
 * @throws {Error} when the URL's driver (`pg`, `mysql2`) is not installed, saying `npm i pg` or `npm i mysql2`.
 *
 * @example
 * ```ts
 * const storage = await connectStorage({ url: process.env.DATABASE_URL! });
 * await migrate(storage);
 * ```
 */
export async function connectStorage(options: ConnectStorageOptions): Promise<KyselyStorage> {
  return connectStorageWith(options, installedDrivers);
}

/** {@link connectStorage} with the drivers `drivers` loads. */
export async function connectStorageWith(options: ConnectStorageOptions, drivers: DriverImports): Promise<KyselyStorage> {
  const url = parseDatabaseUrl(options.url);
  const max = options.maxConnections ?? 10;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const queryTimeoutMs = options.queryTimeoutMs ?? 10_000;
  const onPoolError = options.onPoolError ?? (() => {});
  if (url.protocol === "postgres:" || url.protocol === "postgresql:") {
    const { default: pg } = (await loadDriver(drivers.pg, "pg", `a ${url.protocol}// URL`)) as typeof import("pg");
    const pool = new pg.Pool({
      connectionString: options.url,
      max,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: queryTimeoutMs,
    });
    // pg emits `error` on the pool for idle clients, and on a checked-out client whose
    // connection dies; with no listener either one crashes the process.
    pool.on("error", onPoolError);
    pool.on("connect", (client) => client.on("error", onPoolError));
    return kyselyStorage({
      db: new Kysely({
        dialect: new PostgresDialect({ pool: discardingBrokenClients(pool, options.preparedStatements ?? true) }),
      }),
      dialect: "postgres",
      prefix: options.prefix,
      userFields: options.userFields,
      users: options.users,
    });
  }
  if (url.protocol === "mysql:" || url.protocol === "mariadb:") {
    const { createPool } = (await loadDriver(drivers.mysql2, "mysql2", `a ${url.protocol}// URL`)) as typeof import("mysql2");
    const pool = createPool({
      host: url.hostname,
      port: url.port === "" ? 3306 : Number(url.port),
      user: url.username,
      password: url.password,
      database: url.database,
      connectionLimit: max,
      connectTimeout: connectTimeoutMs,
      flags: ["+FOUND_ROWS"],
      supportBigNumbers: true,
      bigNumberStrings: false,
    });
    pool.on("connection", (connection) => connection.on("error", onPoolError));
    return kyselyStorage({
      db: new Kysely({ dialect: new MysqlDialect({ pool: boundedMysqlPool(pool, connectTimeoutMs, queryTimeoutMs) }) }),
      dialect: "mysql",
      prefix: options.prefix,
      userFields: options.userFields,
      users: options.users,
    });
  }
  throw new TypeError(
    `@portcullis/kysely: url must start with postgres://, postgresql://, mysql:// or mariadb://; got ${url.protocol}//…`,
  );
}
