import type { SessionStore } from "@portcullis/core";
import { type StoreContext, num } from "./context.js";

/** How many sessions one statement of `sessions.revokeAll` covers at most: ids of the primary key, revoked or not. */
export const revokeAllBatch = 10_000;

/** How many times a range's UPDATE is sent when the database ended it as a deadlock's victim. */
const deadlockAttempts = 3;

/** PostgreSQL 40P01 and MySQL ER_LOCK_DEADLOCK (1213): the statement was rolled back to break a deadlock. */
function isDeadlock(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return code === "40P01" || code === "ER_LOCK_DEADLOCK" || errno === 1213;
}

/**
 * `sessions.revokeAll` on SQL (STUP-6): the sessions table in ranges of {@link revokeAllBatch}
 * primary-key ids, in key order. For each range, a SELECT finds its last id (`LIMIT 1 OFFSET`
 * through the primary key's index), then one conditional UPDATE revokes the range's live sessions
 * (`revoked_at IS NULL AND expires_at > now`), so each session is revoked by one caller and no
 * statement holds more than a range's locks; the last range has no upper bound. Ranges taken in
 * key order lock rows in the same order in every concurrent call. A user's own revocation locks
 * their sessions in another order (PostgreSQL reads them by `user_id`), so a range's UPDATE that the
 * database rolls back to break a deadlock is sent again: it is conditional, and changes nothing twice.
 */
export function revokeAllSessions({ db, tables: t }: StoreContext): SessionStore["revokeAll"] {
  return async (now) => {
    let revoked = 0;
    // Every id sorts after the empty string, whatever the column's collation.
    let after = "";
    for (;;) {
      const last = await db
        .selectFrom(t.sessions)
        .select("id")
        .where("id", ">", after)
        .orderBy("id")
        .limit(1)
        .offset(revokeAllBatch - 1)
        .executeTakeFirst();
      const update = db
        .updateTable(t.sessions)
        .set({ revoked_at: now })
        .where("id", ">", after)
        .$if(last !== undefined, (query) => query.where("id", "<=", last?.id as string))
        .where("revoked_at", "is", null)
        .where("expires_at", ">", now);
      for (let attempt = 1; ; attempt += 1) {
        try {
          revoked += num((await update.executeTakeFirst()).numUpdatedRows);
          break;
        } catch (error) {
          if (attempt === deadlockAttempts || !isDeadlock(error)) throw error;
        }
      }
      if (last === undefined) return revoked;
      after = last.id as string;
    }
  };
}
