/**
 * Databases for the tests of the `users` option (your own users table): on PGlite, PostgreSQL and
 * MariaDB, a scratch namespace for Portcullis's tables (the connection's schema or database) and
 * a second one for a host table kept apart (case 3), both dropped afterwards. Not a test file;
 * excluded from the build.
 */
import type { UserFieldDefinitions } from "@portcullis/core";
import { Kysely, MysqlDialect, PostgresDialect, sql } from "kysely";
import mysql from "mysql2";
import pg from "pg";
import { mariadbUrl, postgresUrl, scratchName } from "./databases.test-support.js";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { pgliteStorage } from "./pglite.js";
import type { SqlDialect } from "./schema.js";
import type { UsersTableOptions } from "./users-table.js";

/** A scratch database of one test: Portcullis's namespace, another for a host table, and a raw connection to both. */
export interface HostScratch {
  dialect: SqlDialect;
  /** A second PostgreSQL schema (MariaDB: database), for a host table apart from Portcullis's. */
  other: string;
  /** Runs SQL as the host application would, on the connection's own schema or database. */
  run(statement: string): Promise<Record<string, unknown>[]>;
  /** A storage with these options over the scratch database; closed by `drop`. */
  storage(options: { prefix?: string; users?: UsersTableOptions; userFields?: UserFieldDefinitions }): Promise<KyselyStorage>;
  drop(): Promise<void>;
}

/** Opens a scratch database on `name` ("PGlite", "PostgreSQL" or "MariaDB"). */
export async function hostScratch(name: "PGlite" | "PostgreSQL" | "MariaDB"): Promise<HostScratch> {
  const other = scratchName();
  if (name === "PGlite") {
    // One PGlite per test: the first storage holds the database, the others share its Kysely.
    const base = await pgliteStorage({ dataDir: "memory://", migrate: false });
    await sql.raw(`create schema ${other}`).execute(base.db);
    return {
      dialect: "postgres",
      other,
      run: async (statement) => (await sql.raw(statement).execute(base.db)).rows as Record<string, unknown>[],
      async storage(options) {
        return kyselyStorage({ db: base.db, dialect: "postgres", ...options });
      },
      drop: () => base.close(),
    };
  }
  if (name === "PostgreSQL") {
    const own = scratchName();
    const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
    admin.on("error", () => {});
    await admin.query(`create schema ${own}`);
    await admin.query(`create schema ${other}`);
    const url = new URL(postgresUrl);
    url.searchParams.set("options", `-c search_path=${own}`);
    const pool = new pg.Pool({ connectionString: url.href, max: 10 });
    pool.on("error", () => {});
    const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
    return {
      dialect: "postgres",
      other,
      run: async (statement) => (await sql.raw(statement).execute(db)).rows as Record<string, unknown>[],
      async storage(options) {
        return kyselyStorage({ db, dialect: "postgres", ...options });
      },
      async drop() {
        await db.destroy();
        await admin.query(`drop schema ${own} cascade`);
        await admin.query(`drop schema ${other} cascade`);
        await admin.end();
      },
    };
  }
  const own = scratchName();
  const { hostname, port, username } = new URL(mariadbUrl);
  const connection = { host: hostname, port: Number(port), user: decodeURIComponent(username) };
  const admin = new Kysely({ dialect: new MysqlDialect({ pool: mysql.createPool({ ...connection, connectionLimit: 1 }) }) });
  await sql.raw(`create database ${own}`).execute(admin);
  await sql.raw(`create database ${other}`).execute(admin);
  const pool = mysql.createPool({ ...connection, database: own, connectionLimit: 10, flags: ["+FOUND_ROWS"] });
  const db = new Kysely({ dialect: new MysqlDialect({ pool }) });
  return {
    dialect: "mysql",
    other,
    run: async (statement) => (await sql.raw(statement).execute(db)).rows as Record<string, unknown>[],
    async storage(options) {
      return kyselyStorage({ db, dialect: "mysql", ...options });
    },
    async drop() {
      await db.destroy();
      await sql.raw(`drop database ${own}`).execute(admin);
      await sql.raw(`drop database ${other}`).execute(admin);
      await admin.destroy();
    },
  };
}

/** Every row of a host table, ordered by `id`, each column as text (null as null): what a comparison before and after reads. */
export async function hostRows(scratch: HostScratch, table: string): Promise<Record<string, string | null>[]> {
  const rows = await scratch.run(`select * from ${table} order by id`);
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([column, value]) => [
        column,
        value === null ? null : value instanceof Date ? value.toISOString() : String(value),
      ]),
    ),
  );
}
