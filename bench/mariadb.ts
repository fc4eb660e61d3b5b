// MariaDB for figure 7's MariaDB row: a scratch database with the table its ceiling updates, and a
// storage that records the statements a refresh sends.

import { randomBytes } from "node:crypto";
import { type KyselyStorage, kyselyStorage } from "@portcullis/kysely";
import { Kysely, MysqlDialect, type MysqlPool, type MysqlPoolConnection } from "kysely";
import { createPool } from "mysql2";
import mysql from "mysql2/promise";
import { benchRows } from "./postgres.js";

/** The server of figure 7's MariaDB row; `BENCH_MARIADB_URL` names another (`mysql://` or `mariadb://`). */
export const mariadbUrl = process.env.BENCH_MARIADB_URL ?? "mysql://root@127.0.0.1:3306/test";

/** A database of one run's own on {@link mariadbUrl}, dropped with everything in it at the end. */
export interface ScratchDatabase {
  name: string;
  /** {@link mariadbUrl} naming the scratch database. */
  url: string;
  drop(): Promise<void>;
}

/** Why figure 7's MariaDB row cannot run here (no server answers), or null when it can. */
export async function mariadbMissing(): Promise<string | null> {
  let connection: mysql.Connection | undefined;
  try {
    connection = await mysql.createConnection({ uri: mariadbUrl, connectTimeout: 3000 });
    await connection.query("select 1");
    return null;
  } catch (error) {
    return `MariaDB at ${mariadbUrl} is not reachable (${(error as Error).message}); set BENCH_MARIADB_URL`;
  } finally {
    await connection?.end().catch(() => {});
  }
}

/**
 * Creates a scratch database with the table the ceiling updates, as `createScratchSchema` does
 * on PostgreSQL: `bench_rows(id primary key, n)`, {@link benchRows} rows, InnoDB.
 */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `portcullis_bench_${randomBytes(6).toString("hex")}`;
  const admin = await mysql.createConnection({ uri: mariadbUrl });
  try {
    await admin.query(`create database ${name}`);
    await admin.query(`create table ${name}.bench_rows (id int primary key, n bigint not null default 0) engine = InnoDB`);
    const ids = Array.from({ length: benchRows }, (_, index) => `(${index + 1})`).join(", ");
    await admin.query(`insert into ${name}.bench_rows (id) values ${ids}`);
  } catch (error) {
    await admin.query(`drop database if exists ${name}`).catch(() => {});
    await admin.end();
    throw error;
  }
  const url = new URL(mariadbUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      try {
        await admin.query(`drop database if exists ${name}`);
      } finally {
        await admin.end();
      }
    },
  };
}

/**
 * Storage on the MariaDB database `url`, as `connectStorage` opens it (`FOUND_ROWS`, big numbers
 * as numbers), through a pool that records the text of every statement it sends.
 */
export function recordingMysqlStorage(url: string): { storage: KyselyStorage; sent: { text: string }[] } {
  const sent: { text: string }[] = [];
  const pool = createPool({
    uri: url,
    connectionLimit: 2,
    flags: ["+FOUND_ROWS"],
    supportBigNumbers: true,
    bigNumberStrings: false,
  });
  const recorded = new WeakSet<object>();
  const recording: MysqlPool = {
    getConnection(callback) {
      pool.getConnection((error, connection) => {
        if (!error && !recorded.has(connection)) {
          recorded.add(connection);
          const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
          Object.assign(connection, {
            query: (text: unknown, ...rest: unknown[]) => {
              sent.push({ text: typeof text === "string" ? text : String((text as { sql?: unknown }).sql) });
              return query(text, ...rest);
            },
          });
        }
        callback(error, connection as unknown as MysqlPoolConnection);
      });
    },
    end: (callback) => pool.end(callback),
  };
  const storage = kyselyStorage({ db: new Kysely({ dialect: new MysqlDialect({ pool: recording }) }), dialect: "mysql" });
  return { storage, sent };
}
