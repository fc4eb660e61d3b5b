// Figure 10's data and checks: a PostgreSQL schema filled by SQL with a million users and their
// sessions, each session holding its current refresh token (schema version 5: a refresh writes
// the session's row, and no table grows with refreshes), the plan of every statement the
// measured flows send, and the sweep's statements timed while it deletes.

import { connectStorage, kyselyStorage, migrate } from "@portcullis/kysely";
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from "kysely";
import pg from "pg";

const day = 86_400_000;
const hour = 3_600_000;
/** Expired sessions per user the fill writes: the sweep's backlog. */
export const expiredSessionsPerUser = 2;

/** Rows a scale schema holds once filled. */
export interface ScaleCounts {
  users: number;
  totp: number;
  counters: number;
  liveSessions: number;
  expiredSessions: number;
}

/**
 * The SQL of a refresh token's hash as core stores it (`refresh_hash`: the SHA-256 of the whole
 * token, base64url without padding), of a token made as core makes one, `<session id>.<generation>.<secret>`
 * with a 43-character base64url secret (here derived from the session id by md5, so the fill is
 * repeatable; no filled token is ever presented).
 */
function refreshHashSql(sessionId: string, generation: string): string {
  const base64url = (bytes: string) => `rtrim(translate(encode(${bytes}, 'base64'), '+/', '-_'), '=')`;
  const secret = base64url(`decode(md5(${sessionId}) || md5('secret' || ${sessionId}), 'hex')`);
  return base64url(`sha256(convert_to(${sessionId} || '.' || ${generation} || '.' || ${secret}, 'UTF8'))`);
}

/**
 * Fills the migrated schema `schema` with `users` users (`scale-user-0000001`…, all with the
 * password hash `passwordHash`), one live session each and {@link expiredSessionsPerUser} expired
 * ones per user (the sweep's backlog, big enough to last through the sweep's samples), each
 * session holding its current refresh token's hash, generation and idle expiry as a refresh
 * leaves them (live ones refreshed 0 to 96 times, their token idle-valid for a week; expired
 * ones unused for a week before their end); no rows in the refresh-token table of earlier releases. TOTP enabled
 * for one user in ten, and a live throttling window for as many. Plain SQL over
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
    const live = "'scale-session-' || n";
    const old = "'scale-old-session-' || n || '-' || k";
    await client.query(
      `insert into sessions (id, user_id, token_version, amr, created_at, auth_time, expires_at, revoked_at, last_used_at, user_agent, address,
                             refresh_hash, refresh_generation, refresh_expires_at)
       select ${live}, 'scale-user-' || lpad(n::text, 7, '0'), 0, '["pwd"]', $1::bigint - ${day}, $1::bigint - ${day}, $1::bigint + ${29 * day},
              null::bigint, $1::bigint - ${hour}, 'Mozilla/5.0 (X11; Linux x86_64) Scale/1.0', '203.0.113.0/24',
              ${refreshHashSql(live, "(n % 97)::text")}, n % 97, $1::bigint + ${7 * day} - ${hour}
       from generate_series(1, $2::int) n`,
      [now, users],
    );
    await client.query(
      `insert into sessions (id, user_id, token_version, amr, created_at, auth_time, expires_at, revoked_at, last_used_at, user_agent, address,
                             refresh_hash, refresh_generation, refresh_expires_at)
       select ${old}, 'scale-user-' || lpad(n::text, 7, '0'), 0, '["pwd"]', $1::bigint - ${day}::bigint * (30 + k), $1::bigint - ${day}::bigint * (30 + k),
              $1::bigint - ${day}::bigint * k, null::bigint, $1::bigint - ${day}::bigint * (8 + k), null, null,
              ${refreshHashSql(old, "(n % 13)::text")}, n % 13, $1::bigint - ${day}::bigint * (1 + k)
       from generate_series(1, $2::int) n, generate_series(1, $3::int) k`,
      [now, users, expiredSessionsPerUser],
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
      expiredSessions: users * expiredSessionsPerUser,
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
