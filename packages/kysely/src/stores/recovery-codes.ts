import type { RecoveryCodeStore } from "@portcullis/core";
import { type StoreContext, num } from "./context.js";

/** The rows of a user's recovery codes: one per distinct hash (RC-2: only hashes are stored). */
export function recoveryCodeRows(userId: string, hashes: string[], now: number) {
  return [...new Set(hashes)].map((hash) => ({ user_id: userId, hash, created_at: now }));
}

/**
 * The recovery_codes table as a {@link RecoveryCodeStore}: only hashes are stored (RC-2), a new
 * set replaces the old in one transaction (RC-1), and consuming a code deletes exactly one row (RC-3).
 */
export function recoveryCodeStore({ db, tables: t, isUserId }: StoreContext): RecoveryCodeStore {
  return {
    async replace(userId, hashes, now) {
      // The user's row, locked, orders concurrent replaces of one user's set, so one set stays
      // whole (RC-1). At READ COMMITTED, InnoDB locks only the rows it deletes, not the gaps
      // beside them, where two users replacing their sets at once would deadlock.
      await db
        .transaction()
        .setIsolationLevel("read committed")
        .execute(async (trx) => {
          await trx.selectFrom(t.users).select("id").where("id", "=", userId).forUpdate().execute();
          await trx.deleteFrom(t.recoveryCodes).where("user_id", "=", userId).execute();
          if (hashes.length > 0) {
            await trx
              .insertInto(t.recoveryCodes)
              .values(recoveryCodeRows(userId, hashes, now))
              .execute();
          }
        });
    },
    async has(userId, hash) {
      if (!isUserId(userId)) return false;
      const row = await db
        .selectFrom(t.recoveryCodes)
        .select("hash")
        .where("user_id", "=", userId)
        .where("hash", "=", hash)
        .executeTakeFirst();
      return row !== undefined;
    },
    async consume(userId, hash) {
      if (!isUserId(userId)) return false;
      const result = await db
        .deleteFrom(t.recoveryCodes)
        .where("user_id", "=", userId)
        .where("hash", "=", hash)
        .executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    async count(userId) {
      if (!isUserId(userId)) return 0;
      const row = await db
        .selectFrom(t.recoveryCodes)
        .select((eb) => eb.fn.countAll().as("count"))
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return num(row?.count ?? 0);
    },
    async removeAll(userId) {
      if (!isUserId(userId)) return;
      await db.deleteFrom(t.recoveryCodes).where("user_id", "=", userId).execute();
    },
  };
}
