import { type StoreContext, num } from "./context.js";

/**
 * Deletes what no flow can use any more, at most `limit` rows of each kind: expired
 * challenges, ended throttling windows, refresh tokens past their idle expiry (spent ones too:
 * reuse of one is then "unknown", and it was refused anyway) and sessions past their absolute
 * expiry. Each is one statement over the index on its expiry column, so it holds only the rows
 * it deletes, briefly. Returns how many rows it deleted in all. `challenges.deleteExpired` runs it
 * (core's sweep calls that).
 */
export async function deleteExpiredRows({ db, postgres, tables: t }: StoreContext, now: number, limit: number): Promise<number> {
  const kinds = [
    [t.challenges, "id", "expires_at"],
    [t.counters, "counter_key", "reset_at"],
    [t.refreshTokens, "hash", "expires_at"],
    [t.sessions, "id", "expires_at"],
  ] as const;
  let deleted = 0;
  for (const [table, key, end] of kinds) {
    // PostgreSQL has no DELETE … LIMIT: the keys of a bounded select name the rows. MySQL has
    // it, and refuses a subquery on the table it deletes from.
    const expired = postgres
      ? db.deleteFrom(table).where(key, "in", db.selectFrom(table).select(key).where(end, "<=", now).limit(limit))
      : db.deleteFrom(table).where(end, "<=", now).limit(limit);
    deleted += num((await expired.executeTakeFirst()).numDeletedRows);
  }
  return deleted;
}
