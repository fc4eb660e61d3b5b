import { type Algorithm, hash, verify } from "@node-rs/argon2";
import express from "express";
import { Hono } from "hono";
import {
  type BenchSecrets,
  type ServerOptions,
  type ServerReady,
  argon2LoginPath,
  jsonPostPath,
  protectedPath,
} from "../common.js";
import { hashParameters, listenExpress, listenHono, ok, tokenShapedAnswer } from "./listen.js";

/**
 * The argon2id parameters Portcullis hashes with by default (OWASP's; `defaultHashing` in
 * packages/core/src/config.ts, `outputLen` in packages/core/src/crypto/password-hasher.ts).
 */
const argon2Options = { algorithm: 2 as Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1, outputLen: 32 };

/**
 * One row of pgbench's table updated per call, as pgbench's script does (figure 7's ceiling):
 * the same prepared `UPDATE` by primary key of a random row, on a pool of `connections`.
 */
async function pgbenchUpdate(url: string, connections: number): Promise<() => Promise<void>> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: url, max: connections });
  const { benchRows } = await import("../postgres.js");
  return async () => {
    const id = 1 + Math.floor(Math.random() * benchRows);
    await pool.query({ name: "bench_update", text: "UPDATE bench_rows SET n = n + 1 WHERE id = $1", values: [id] });
  };
}

/**
 * The same one-row `UPDATE` by primary key of a random row on MariaDB (the MariaDB ceiling of
 * figure 7), on a `mysql2` pool of `connections`: `execute` prepares it once per connection
 * (binary protocol), so each call is one `COM_STMT_EXECUTE` round trip, autocommitted.
 */
async function mysqlUpdate(url: string, connections: number): Promise<() => Promise<void>> {
  const { createPool } = await import("mysql2/promise");
  const { benchRows } = await import("../postgres.js");
  const pool = createPool({ uri: url, connectionLimit: connections });
  return async () => {
    const id = 1 + Math.floor(Math.random() * benchRows);
    await pool.execute("UPDATE bench_rows SET n = n + 1 WHERE id = ?", [id]);
  };
}

/** The ceiling's one-row `UPDATE` on the database the options name, or null for none. */
function ceilingUpdate(options: ServerOptions): Promise<() => Promise<void>> | null {
  const pool = options.pool ?? 10;
  if (options.postgresUrl !== undefined) return pgbenchUpdate(options.postgresUrl, pool);
  if (options.mysqlUrl !== undefined) return mysqlUpdate(options.mysqlUrl, pool);
  return null;
}

/**
 * Bare Express 5: the protected route with no check, a JSON POST that answers a token-shaped
 * body, and a login that is one raw argon2id `verify` of a stored hash. With `postgresUrl`, the
 * JSON POST first runs pgbench's one-row `UPDATE` in that schema: one round trip to PostgreSQL
 * and nothing else, the most a Node server that touches the database once per request can do.
 * With `mysqlUrl`, the same `UPDATE` on that MariaDB database, prepared: one round trip to MariaDB.
 */
export async function startBareExpress(secrets: BenchSecrets, options: ServerOptions = {}): Promise<ServerReady> {
  const storedHash = await hash(secrets.BENCH_PASSWORD, argon2Options);
  const update = await ceilingUpdate(options);
  const app = express();
  app.get(protectedPath, (_req, res) => {
    res.json(ok);
  });
  app.post(jsonPostPath, express.json(), async (req, res) => {
    if (typeof req.body?.refreshToken !== "string") {
      res.status(400).json({ code: 40002 });
      return;
    }
    await update?.();
    res.json(tokenShapedAnswer());
  });
  app.post(argon2LoginPath, express.json(), async (req, res) => {
    const proven = typeof req.body?.password === "string" && (await verify(storedHash, req.body.password));
    if (proven) res.json(tokenShapedAnswer());
    else res.status(401).json({ code: 40100 });
  });
  return { port: await listenExpress(app), passwordHashParameters: hashParameters(storedHash) };
}

/** Bare Hono on `@hono/node-server`: the protected route with no check. */
export async function startBareHono(): Promise<ServerReady> {
  const app = new Hono();
  app.get(protectedPath, (c) => c.json(ok));
  return { port: await listenHono(app) };
}
