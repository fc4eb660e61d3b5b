import type { PGlite } from "@electric-sql/pglite";
import type { UserFieldDefinitions } from "@portcullis/core";
import { Kysely, PostgresDialect } from "kysely";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { loadDriver } from "./load-driver.js";
import { migrate } from "./migrate.js";
import { lockDataDirectory } from "./pglite-lock.js";
import { migrateUserFields } from "./user-fields.js";
import type { UsersTableOptions } from "./users-table.js";

/**
 * A `pg`-style pool over one PGlite database, for Kysely's own PostgreSQL dialect. PGlite is one
 * connection: the pool hands it to one caller at a time (a transaction keeps it until it ends).
 */
function pgliteAsPool(database: PGlite, end: () => Promise<void>) {
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
    end,
    options: {},
  };
}

/** Options of {@link pgliteStorage}. */
export interface PgliteStorageOptions {
  /**
   * Where the database lives: a directory (created if need be), or `memory://` for one that ends
   * with the process. A directory is locked while open: a second process (or a second storage in
   * this one) that opens it gets an error naming the directory and the holder's pid.
   */
  dataDir: string;
  /** Table-name prefix, as for `kyselyStorage`. */
  prefix?: string;
  /** Your own users table, as for `kyselyStorage` (docs/existing-users-table.md). */
  users?: UsersTableOptions;
  /**
   * Bring the schema up to date at once (default true): an embedded database has no one else to
   * do it. With `userFields`, the columns of the fields too (`migrateUserFields`).
   */
  migrate?: boolean;
  /** The additional user fields, as for `kyselyStorage`. */
  userFields?: UserFieldDefinitions;
}

/**
 * Embedded PostgreSQL (PGlite, WebAssembly) in a data directory: no server to run, and what it
 * stores survives restarts. One process opens a data directory at a time: it is locked by a file
 * in it (`portcullis.lock`), and opening one that another process holds throws; a lock left by a
 * process that died is taken over (see docs/storage.md). Needs `@electric-sql/pglite` installed
 * beside this package.
 *
 * @throws Error when another process has the data directory open, and when `@electric-sql/pglite`
 * is not installed, saying `npm i @electric-sql/pglite`.
 *
 * @example
 * ```ts
 * const storage = await pgliteStorage({ dataDir: "./auth-data" });
 * const auth = createAuth({ storage, ... });
 * ```
 */
export async function pgliteStorage(options: PgliteStorageOptions): Promise<KyselyStorage> {
  return pgliteStorageWith(options, () => import("@electric-sql/pglite"));
}

/**
 * {@link pgliteStorage} with PGlite as `load` imports it; a test passes its own to play a PGlite
 * that is not installed. `load` is typed loosely so that the declarations never name PGlite's types.
 */
export async function pgliteStorageWith(options: PgliteStorageOptions, load: () => Promise<unknown>): Promise<KyselyStorage> {
  const { PGlite } = (await loadDriver(load, "@electric-sql/pglite", "pgliteStorage")) as typeof import("@electric-sql/pglite");
  const directory = fileSystemDirectory(options.dataDir);
  const lock = directory === null ? null : lockDataDirectory(directory);
  let storage: KyselyStorage | undefined;
  try {
    const database = await PGlite.create(options.dataDir);
    // Closes the database and frees the directory once, whether Kysely's driver ever started (and
    // ends the pool) or the storage is closed before its first query (Kysely then ends nothing).
    let ending: Promise<void> | null = null;
    const end = () => {
      ending ??= database.close().finally(() => lock?.release());
      return ending;
    };
    // Kysely's PostgreSQL dialect only needs connect(), query() and release() of a pool.
    const pool = pgliteAsPool(database, end) as unknown as ConstructorParameters<typeof PostgresDialect>[0]["pool"];
    const opened = kyselyStorage({
      db: new Kysely({ dialect: new PostgresDialect({ pool }) }),
      dialect: "postgres",
      prefix: options.prefix,
      userFields: options.userFields,
      users: options.users,
    });
    storage = {
      ...opened,
      async close() {
        await opened.close();
        await end();
      },
    };
    if (options.migrate !== false) {
      await migrate(storage);
      if (options.userFields !== undefined) await migrateUserFields(storage, options.userFields);
    }
    return storage;
  } catch (error) {
    await storage?.close().catch(() => {});
    lock?.release();
    throw error;
  }
}

/** The directory of a `dataDir` PGlite keeps on the file system (a path, or `file://` and a path); null for `memory://` and the browser's stores. */
function fileSystemDirectory(dataDir: string): string | null {
  if (dataDir.startsWith("file://")) return dataDir.slice("file://".length);
  return dataDir === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir) ? null : dataDir;
}
