// Figure 10's data and checks: a PostgreSQL schema filled by SQL with a million users, their live
// sessions and ten refresh-token rows each (most spent or expired), the plan of every statement the
// measured flows send, and the sweep's statements timed while it deletes.

import { connectStorage, kyselyStorage, migrate } from "@portcullis/kysely";
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";

const day = 86_400_000;
const hour = 3_600_000;

/** Rows a scale schema holds once filled. */
export interface ScaleCounts {
  users: number;
  totp: number;
  counters: number;
  liveSessions: number;
  expiredSessions: number;
  refreshTokens: number;
  expiredRefreshTokens: number;
}

/**
 * Fills the migrated schema `schema` with `users` users (`scale-user-0000001`…, all with the
 * password hash `passwordHash`), one live session each, one expired session per five users, and
 * ten refresh-token rows per live session: one live, three spent but not yet expired (a session
 * refreshed through the idle lifetime keeps those), six spent and expired (the sweep's backlog,
 * big enough to last through the sweep's samples);
 * TOTP enabled for one user in ten, and a live throttling window for as many. Plain SQL over
 * `generate_series`, then `ANALYZE` and a `CHECKPOINT`.
 */
export function fillAtScale(url: string, schema: string, users: number, passwordHash: string, now: number): Promise<ScaleCounts> {
  return withClient(url, async (client) => {
    await client.query(`set search_path = ${schema}`);
    await client.query(
      `insert into users (id, username, username_key, password_hash, roles, disabled, token_version, source, created_at, updated_at)
       select 'scale-user-' || lpad(n::text, 7, '0'), 'Scale-User-' || lpad(n::text, 7, '0'), 'scale-user-' || lpad(n::text, 7, '0'),
              $1, '["user"]', false, 0, 'local', $2::bigint - n, $2::bigint - n
       from generate_series(1, $3::int) n`,
      [passwordHash, now, users],
    );
    await client.query(
      `insert into sessions (id, user_id, token_version, amr, created_at, auth_time, expires_at, revoked_at, last_used_at, user_agent, address)
       select 'scale-session-' || n, 'scale-user-' || lpad(n::text, 7, '0'), 0, '["pwd"]', $1::bigint - ${hour}, $1::bigint - ${hour}, $1::bigint + ${29 * day},
              null::bigint, $1::bigint - ${hour}, 'Mozilla/5.0 (X11; Linux x86_64) Scale/1.0', '203.0.113.0/24'
       from generate_series(1, $2::int) n
       union all
       select 'scale-old-session-' || n, 'scale-user-' || lpad(n::text, 7, '0'), 0, '["pwd"]', $1::bigint - ${31 * day}, $1::bigint - ${31 * day}, $1::bigint - ${day},
              null::bigint, $1::bigint - ${2 * day}, null, null
       from generate_series(1, $2::int / 5) n`,
      [now, users],
    );
    await client.query(
      `insert into refresh_tokens (hash, session_id, user_id, created_at, expires_at, spent_at)
       select md5(n || '-' || k) || md5(k || '/' || n), 'scale-session-' || n, 'scale-user-' || lpad(n::text, 7, '0'),
              $1::bigint - ${hour} * (k + 1),
              case when k = 0 then $1::bigint + ${7 * day} when k < 4 then $1::bigint + ${hour} * k else $1::bigint - ${hour} * k end,
              case when k = 0 then null else $1::bigint - ${hour} * k end
       from generate_series(1, $2::int) n, generate_series(0, 9) k`,
      [now, users],
    );
    await client.query(
      `insert into totp (user_id, secret_key_id, secret_sealed, enabled, last_used_step, created_at)
       select 'scale-user-' || lpad(n::text, 7, '0'), 'key-1', md5(n::text) || md5('totp' || n), true, 0, $1::bigint - ${day}
       from generate_series(1, $2::int, 10) n`,
      [now, users],
    );
    await client.query(
      `insert into counters (counter_key, count, reset_at)
       select 'account:' || md5('scale' || n) || ':1', 1 + n % 5, $1::bigint + ${hour} - n % ${hour}
       from generate_series(1, $2::int / 10) n`,
      [now, users],
    );
    await client.query("analyze");
    // The fill wrote gigabytes: flush them now rather than in a checkpoint during the measurements.
    await client.query("checkpoint");
    return {
      users,
      totp: Math.ceil(users / 10),
      counters: Math.floor(users / 10),
      liveSessions: users,
      expiredSessions: Math.floor(users / 5),
      refreshTokens: users * 10,
      expiredRefreshTokens: users * 6,
    };
  });
}

/** Runs `work` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** One statement as a driver sent it, how long the database took, and its plan when asked for. */
export interface SentStatement {
  text: string;
  ms: number;
  /** `EXPLAIN (ANALYZE, BUFFERS)` of the statement, taken just before it ran, its writes rolled back. */
  plan?: string[];
}

/**
 * Storage on `url` through a pool that records every statement it sends, unnamed. With
 * `explain`, each statement outside a transaction is first explained on its connection with
 * the same parameters in a transaction rolled back, so the plan is of the data it then meets.
 */
export function recordingStorage(url: string, { explain = false, max = 4 } = {}) {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => {});
  const sent: SentStatement[] = [];
  const recording: PostgresPool = {
    async connect() {
      const client = await pool.connect();
      let inTransaction = false;
      return {
        async query(text: string, values: unknown[]) {
          let plan: string[] | undefined;
          if (/^\s*begin/i.test(text)) inTransaction = true;
          else if (explain && !inTransaction) {
            await client.query("begin");
            try {
              const { rows } = await client.query(
                `explain (analyze, buffers, costs off, timing off, summary off) ${text}`,
                values,
              );
              plan = rows.map((row: Record<string, string>) => row["QUERY PLAN"] as string);
            } finally {
              await client.query("rollback");
            }
          }
          const started = performance.now();
          try {
            return await client.query(text, values);
          } finally {
            if (/^\s*(commit|rollback)/i.test(text)) inTransaction = false;
            sent.push({ text, ms: performance.now() - started, plan });
          }
        },
        release: () => client.release(),
      } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
  const storage = kyselyStorage({ db: new Kysely({ dialect: new PostgresDialect({ pool: recording }) }), dialect: "postgres" });
  return { storage, sent };
}

/** The tables whose full scan at this size would be the bug figure 10 looks for. */
const bigTables = /\b(users|sessions|refresh_tokens|totp|identities|passkeys|counters|challenges)\b/;

/** Plan lines of `plan` that read one of the large tables without an index. */
export function sequentialScansIn(plan: string[]): string[] {
  return plan.filter((line) => /Seq Scan on/.test(line) && bigTables.test(line));
}

/** Migrates an empty schema at `url` with the package's migrations (what a service runs first). */
export async function migrateSchema(url: string): Promise<void> {
  const storage = await connectStorage({ url, maxConnections: 1 });
  try {
    await migrate(storage);
  } finally {
    await storage.close();
  }
}
