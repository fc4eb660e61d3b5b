// MariaDB for figure 7's MariaDB rows: a scratch database with the table its ceiling updates.

import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { benchRows } from "./postgres.js";

/** The server of figure 7's MariaDB rows; `BENCH_MARIADB_URL` names another (`mysql://` or `mariadb://`). */
export const mariadbUrl = process.env.BENCH_MARIADB_URL ?? "mysql://root@127.0.0.1:3306/test";

/** A database of one run's own on {@link mariadbUrl}, dropped with everything in it at the end. */
export interface ScratchDatabase {
  name: string;
  /** {@link mariadbUrl} naming the scratch database. */
  url: string;
  drop(): Promise<void>;
}

/** The `mysql2` connection options a `mysql://` URL names: host, port, user, password, database. */
export function mysqlConnectionOptions(url: string): mysql.ConnectionOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port === "" ? 3306 : Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)) || undefined,
  };
}

/** Why figure 7's MariaDB rows cannot run here (no server answers), or null when they can. */
export async function mariadbMissing(): Promise<string | null> {
  let connection: mysql.Connection | undefined;
  try {
    connection = await mysql.createConnection({ ...mysqlConnectionOptions(mariadbUrl), connectTimeout: 3000 });
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
  const admin = await mysql.createConnection(mysqlConnectionOptions(mariadbUrl));
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
