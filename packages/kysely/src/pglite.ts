import type { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";

/**
 * A `pg`-style pool over one PGlite database, for Kysely's own PostgreSQL dialect. PGlite is one
 * connection: the pool hands it to one caller at a time (a transaction keeps it until it ends).
 */
function pgliteAsPool(database: PGlite) {
  let queue: Promise<void> = Promise.resolve();
  const client = {
    async query(text: string, values: unknown[]) {
      const result = await database.query<Record<string, unknown>>(text, values);
      const command = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "";
      return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows };
    },
    release: () => {},
  };
  return {
    async connect() {
      let release = () => {};
      const turn = new Promise<void>((resolve) => {
        release = resolve;
      });
      const previous = queue;
      queue = previous.then(() => turn);
      await previous;
      return { ...client, release };
    },
    async end() {
      await database.close();
    },
    options: {},
  };
}

/** Options of {@link pgliteStorage}. */
export interface PgliteStorageOptions {
  /** Where the database lives: a directory (created if need be), or `memory://` for one that ends with the process. */
  dataDir: string;
  /** Table-name prefix, as for `kyselyStorage`. */
  prefix?: string;
  /** Bring the schema up to date at once (default true): an embedded database has no one else to do it. */
  migrate?: boolean;
}

/**
 * Embedded PostgreSQL (PGlite, WebAssembly) in a data directory: no server to run, and what it
 * stores survives restarts. One process opens a data directory at a time. Needs
 * `@electric-sql/pglite` installed beside this package.
 *
 * @example
 * ```ts
 * const storage = await pgliteStorage({ dataDir: "./auth-data" });
 * const auth = createAuth({ storage, ... });
 * ```
 */
export async function pgliteStorage(options: PgliteStorageOptions): Promise<KyselyStorage> {
  const { PGlite } = await import("@electric-sql/pglite").catch((error: unknown) => {
    throw new Error("@portcullis/kysely: pgliteStorage needs @electric-sql/pglite; install it beside @portcullis/kysely", {
      cause: error,
    });
  });
  const database = await PGlite.create(options.dataDir);
  // Kysely's PostgreSQL dialect only needs connect(), query() and release() of a pool.
  const pool = pgliteAsPool(database) as unknown as ConstructorParameters<typeof PostgresDialect>[0]["pool"];
  const storage = kyselyStorage({
    db: new Kysely({ dialect: new PostgresDialect({ pool }) }),
    dialect: "postgres",
    prefix: options.prefix,
  });
  if (options.migrate !== false) await migrate(storage);
  return storage;
}
