// PostgreSQL for figure 7: a scratch schema, and pgbench's TPS for a single-row UPDATE in it.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Pinning, runToEnd } from "./processes.js";

/** The server figure 7 uses; `BENCH_POSTGRES_URL` names another. */
export const postgresUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Rows of the table pgbench updates: small, so every row stays in cache. */
export const benchRows = 100;

/** A schema of one run's own on {@link postgresUrl}, dropped with everything in it at the end. */
export interface ScratchSchema {
  name: string;
  /** {@link postgresUrl} whose connections have the schema as their `search_path`. */
  url: string;
  /** Runs pgbench's single-row UPDATE script in the schema for `seconds` with `clients` clients and returns its TPS. */
  pgbenchTps(pinning: Pinning, clients: number, seconds: number): Promise<number>;
  drop(): Promise<void>;
}

/** Why figure 7 cannot run here (no server, no pgbench), or null when it can. */
export async function postgresMissing(): Promise<string | null> {
  const version = spawnSync("pgbench", ["--version"]);
  if (version.error || version.status !== 0) return "pgbench is not installed";
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return null;
  } catch (error) {
    return `PostgreSQL at ${postgresUrl} is not reachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Creates a scratch schema with the table the pgbench script updates: `bench_rows(id primary
 * key, n)`, {@link benchRows} rows.
 */
export async function createScratchSchema(): Promise<ScratchSchema> {
  const name = `portcullis_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create schema ${name}`);
  await admin.query(`create table ${name}.bench_rows (id integer primary key, n bigint not null default 0)`);
  await admin.query(`insert into ${name}.bench_rows (id) select generate_series(1, ${benchRows})`);
  const url = new URL(postgresUrl);
  url.searchParams.set("options", `-c search_path=${name}`);
  const script = join(tmpdir(), `${name}.sql`);
  await writeFile(script, `\\set id random(1, ${benchRows})\nUPDATE bench_rows SET n = n + 1 WHERE id = :id;\n`);

  return {
    name,
    url: url.toString(),
    async pgbenchTps(pinning, clients, seconds) {
      const server = new URL(postgresUrl);
      const connection = [
        "-h",
        server.hostname,
        "-p",
        server.port || "5432",
        "-U",
        decodeURIComponent(server.username || "postgres"),
      ];
      const database = decodeURIComponent(server.pathname.slice(1));
      const options = ["-n", "-f", script, "-c", String(clients), "-j", "1", "-T", String(Math.max(1, Math.round(seconds)))];
      const output = await runToEnd(pinning.load, ["pgbench", ...options, ...connection, database], {
        PGOPTIONS: `-c search_path=${name}`,
      });
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
      if (tps === undefined) throw new Error(`pgbench printed no TPS:\n${output}`);
      return Number(tps);
    },
    async drop() {
      try {
        await admin.query(`drop schema if exists ${name} cascade`);
      } finally {
        await admin.end();
        await rm(script, { force: true });
      }
    },
  };
}
