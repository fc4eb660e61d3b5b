import { sql } from "kysely";
import { type StoreContext, num } from "./context.js";

/**
 * Deletes what no flow can use any more, at most `limit` rows of each kind, those that expired
 * first: expired
 * challenges, ended throttling windows, the refresh tokens the releases before schema version 5
 * stored, past their idle expiry (spent ones too: reuse of one is then "unknown", and it was
 * refused anyway; a refresh writes none now) and sessions past their absolute
 * expiry. Each is one statement over the index on its expiry column, so it holds only the rows
 * it deletes, briefly; on PostgreSQL it deletes them by their physical address, found by that
 * index, so a batch reads the large tables' key indexes not at all. Returns how many rows it deleted in all. `challenges.deleteExpired` runs it
 * (core's sweep calls that).
 */
export async function deleteExpiredRows({ db, postgres, tables: t }: StoreContext, now: number, limit: number): Promise<number> {
  const kinds = [
    [t.challenges, "expires_at"],
    [t.counters, "reset_at"],
    [t.refreshTokens, "expires_at"],
    [t.sessions, "expires_at"],
  ] as const;
  let deleted = 0;
  for (const [table, end] of kinds) {
    if (postgres) {
      // PostgreSQL has no DELETE … LIMIT: a bounded select names the rows by their physical
      // address (a TID scan), so no row is looked up again through its key; a row updated
      // meanwhile has moved and is left alone (a throttling window just restarted stays). The
      // order makes the select read the expiry index from its start, whatever the planner thinks
      // of a scan: a table whose expired rows all lie at its end would be read whole.
      const expired = sql`delete from ${sql.table(table)} where ctid = any(array(
        select ctid from ${sql.table(table)} where ${sql.ref(end)} <= ${now} order by ${sql.ref(end)} limit ${limit}))`;
      deleted += num((await expired.execute(db)).numAffectedRows ?? 0);
    } else {
      // MySQL has DELETE … LIMIT, and refuses a subquery on the table it deletes from.
      const expired = db.deleteFrom(table).where(end, "<=", now).orderBy(end).limit(limit);
      deleted += num((await expired.executeTakeFirst()).numDeletedRows);
    }
  }
  return deleted;
}
