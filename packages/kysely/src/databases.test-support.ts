/**
 * The databases the tests run against: PGlite everywhere, and the PostgreSQL and MariaDB servers
 * of this machine (127.0.0.1:5432, trust auth, database `test`; 127.0.0.1:3306, root without a
 * password, database `test`), each test file in a schema or database of its own that it drops
 * afterwards, so runs never meet. Not a test file; excluded from the build.
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import type { LegacyRefreshToken, Storage, UserFieldDefinitions } from "@portcullis/core";
import { Kysely, MysqlDialect, PostgresDialect, sql } from "kysely";
import mysql from "mysql2";
import pg from "pg";
import { connectStorage } from "./connect.js";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { pgliteStorage } from "./pglite.js";

export const postgresUrl = process.env.PORTCULLIS_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";
export const mariadbUrl = process.env.PORTCULLIS_TEST_MARIADB ?? "mysql://root@127.0.0.1:3306/test";

/** Why a server cannot be reached on its port, or null when it can. */
export async function serverMissing(url: string): Promise<string | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const done = (reason: string | null) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(2000, () => done(`nothing answers at ${hostname}:${port} (timeout)`));
    socket.once("connect", () => done(null));
    socket.once("error", (error: NodeJS.ErrnoException) => done(`nothing answers at ${hostname}:${port} (${error.code})`));
  });
}

/** A name no other run uses: `portcullis_t_<hex>`. */
export const scratchName = () => `portcullis_t_${randomBytes(6).toString("hex")}`;

/** A database of one test file's own: a fresh PostgreSQL schema, and the storage on it, made by `connectStorage` as a service makes it. */
export async function postgresScratch(
  prefix = "",
  userFields?: UserFieldDefinitions,
): Promise<{ storage: KyselyStorage; drop(): Promise<void> }> {
  const schema = scratchName();
  const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  admin.on("error", () => {});
  await admin.query(`create schema ${schema}`);
  const url = new URL(postgresUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const storage = await connectStorage({ url: url.href, prefix, userFields });
  return {
    storage,
    async drop() {
      await storage.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

/** A database of one test file's own on MariaDB, and the storage on it. */
export async function mariadbScratch(
  prefix = "",
  userFields?: UserFieldDefinitions,
): Promise<{ storage: KyselyStorage; drop(): Promise<void> }> {
  const database = scratchName();
  const { hostname, port, username } = new URL(mariadbUrl);
  const connection = { host: hostname, port: Number(port), user: decodeURIComponent(username) };
  const admin = new Kysely({ dialect: new MysqlDialect({ pool: mysql.createPool({ ...connection, connectionLimit: 1 }) }) });
  await sql.raw(`create database ${database}`).execute(admin);
  const pool = mysql.createPool({ ...connection, database, connectionLimit: 10, flags: ["+FOUND_ROWS"] });
  const storage = kyselyStorage({
    db: new Kysely({ dialect: new MysqlDialect({ pool }) }),
    dialect: "mysql",
    prefix,
    userFields,
  });
  return {
    storage,
    async drop() {
      await storage.close();
      await sql.raw(`drop database ${database}`).execute(admin);
      await admin.destroy();
    },
  };
}

/**
 * A PostgreSQL database of one test file's own whose default collation is ICU's `icuLocale`
 * (`en-US`: `a` before `B`, accents second), and the storage on it: what a service whose
 * database was made with a language's locale has.
 */
export async function postgresIcuScratch(icuLocale: string): Promise<{ storage: KyselyStorage; drop(): Promise<void> }> {
  const database = scratchName();
  const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  admin.on("error", () => {});
  await admin.query(
    `create database ${database} template template0 locale_provider icu icu_locale '${icuLocale}' lc_collate 'C.UTF-8' lc_ctype 'C.UTF-8'`,
  );
  const url = new URL(postgresUrl);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.href, max: 10 });
  pool.on("error", () => {});
  const storage = kyselyStorage({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), dialect: "postgres" });
  return {
    storage,
    async drop() {
      await storage.close();
      await admin.query(`drop database ${database} with (force)`);
      await admin.end();
    },
  };
}

/** The databases every SQL test runs on: embedded PGlite, and this machine's PostgreSQL and MariaDB. */
export const everyDatabase = [
  {
    name: "PGlite",
    url: null,
    open: async (prefix = "") => {
      const storage = await pgliteStorage({ dataDir: "memory://", prefix });
      return { storage, drop: () => storage.close() };
    },
  },
  { name: "PostgreSQL", url: postgresUrl, open: postgresScratch },
  { name: "MariaDB", url: mariadbUrl, open: mariadbScratch },
] as const;

/**
 * Writes a refresh token of a release before schema version 5 into `storage`'s refresh_tokens
 * table, as that release left it: the conformance kit's `insertLegacyRefreshToken`, for the
 * store's `findLegacyRefreshToken`.
 */
export async function insertLegacyRefreshToken(storage: Storage, token: LegacyRefreshToken): Promise<void> {
  const { db, tables } = storage as KyselyStorage;
  await db
    .insertInto(tables.refreshTokens)
    .values({
      hash: token.hash,
      session_id: token.sessionId,
      user_id: token.userId,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      spent_at: token.spentAt,
    })
    .execute();
}
