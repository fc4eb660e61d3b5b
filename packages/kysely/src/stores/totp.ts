import type { TotpRecord, TotpStore } from "@portcullis/core";
import type { TotpRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, findOne, flag, num } from "./context.js";

function toTotp(row: TotpRow): TotpRecord {
  return {
    userId: userIdFromRow(row.user_id),
    secret: { keyId: row.secret_key_id, sealed: row.secret_sealed },
    enabled: flag(row.enabled),
    lastUsedStep: num(row.last_used_step),
    createdAt: num(row.created_at),
  };
}

/** A factor as its row; `enabled` as given (a pending factor is stored with `enabled` false). */
export function toTotpRow(record: TotpRecord) {
  return {
    user_id: record.userId,
    secret_key_id: record.secret.keyId,
    secret_sealed: record.secret.sealed,
    enabled: record.enabled,
    last_used_step: record.lastUsedStep,
    created_at: record.createdAt,
  };
}

/**
 * The totp table as a {@link TotpStore}: enabling, advancing the step and replacing the sealed
 * secret are conditional UPDATEs (TOTP-4, KR-2); a pending factor replaces another pending one with a conditional upsert on
 * PostgreSQL, and under the user's row lock on MySQL.
 */
export function totpStore(context: StoreContext): TotpStore {
  const { db, postgres, tables: t, isUserId } = context;
  return {
    get: async (userId) => (isUserId(userId) ? findOne(context, t.totp, "user_id", userId, toTotp) : null),
    async putPending(record) {
      const values = toTotpRow({ ...record, enabled: false });
      if (postgres) {
        const result = await db
          .insertInto(t.totp)
          .values(values)
          .onConflict((conflict) =>
            conflict
              .column("user_id")
              .doUpdateSet({
                secret_key_id: values.secret_key_id,
                secret_sealed: values.secret_sealed,
                enabled: false,
                last_used_step: values.last_used_step,
                created_at: values.created_at,
              })
              .where(`${t.totp}.enabled`, "=", false),
          )
          .executeTakeFirst();
        return num(result.numInsertedOrUpdatedRows ?? 0) === 1;
      }
      // MySQL: the user's row, locked, orders concurrent writers of one user's factor. A pending
      // factor is updated in place and a missing one inserted: a DELETE of a row that is not there
      // would lock the gap around it, and two users enrolling at once would deadlock on it.
      return db.transaction().execute(async (trx) => {
        await trx.selectFrom(t.users).select("id").where("id", "=", record.userId).forUpdate().execute();
        const current = await trx.selectFrom(t.totp).select("enabled").where("user_id", "=", record.userId).executeTakeFirst();
        if (current === undefined) {
          await trx.insertInto(t.totp).values(values).execute();
          return true;
        }
        if (flag(current.enabled)) return false;
        const { user_id: _, ...changes } = values;
        await trx.updateTable(t.totp).set(changes).where("user_id", "=", record.userId).execute();
        return true;
      });
    },
    async enable(userId) {
      if (!isUserId(userId)) return false;
      const result = await db
        .updateTable(t.totp)
        .set({ enabled: true })
        .where("user_id", "=", userId)
        .where("enabled", "=", false)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async remove(userId) {
      if (!isUserId(userId)) return false;
      const result = await db.deleteFrom(t.totp).where("user_id", "=", userId).executeTakeFirst();
      return num(result.numDeletedRows) > 0;
    },
    async advanceStep(userId, step) {
      if (!isUserId(userId)) return false;
      const result = await db
        .updateTable(t.totp)
        .set({ last_used_step: step })
        .where("user_id", "=", userId)
        .where("last_used_step", "<", step)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async replaceSecret(userId, expected, next) {
      if (!isUserId(userId)) return false;
      const result = await db
        .updateTable(t.totp)
        .set({ secret_key_id: next.keyId, secret_sealed: next.sealed })
        .where("user_id", "=", userId)
        .where("secret_key_id", "=", expected.keyId)
        .where("secret_sealed", "=", expected.sealed)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
  };
}
