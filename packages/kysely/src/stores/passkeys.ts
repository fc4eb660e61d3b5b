import type { PasskeyRecord, PasskeyStore } from "@portcullis/core";
import type { PasskeyRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, findOne, flag, insertUnlessDuplicate, num, numOrNull } from "./context.js";

function toPasskey(row: PasskeyRow): PasskeyRecord {
  return {
    id: row.id,
    userId: userIdFromRow(row.user_id),
    publicKey: row.public_key,
    counter: num(row.counter),
    transports: JSON.parse(row.transports) as string[],
    label: row.label,
    backupEligible: flag(row.backup_eligible),
    backupState: flag(row.backup_state),
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
    userHandle: row.user_handle ?? null,
  };
}

/** A passkey as its row. */
export function toPasskeyRow(passkey: PasskeyRecord) {
  return {
    id: passkey.id,
    user_id: passkey.userId,
    public_key: passkey.publicKey,
    counter: passkey.counter,
    transports: JSON.stringify(passkey.transports),
    label: passkey.label,
    backup_eligible: passkey.backupEligible,
    backup_state: passkey.backupState,
    created_at: passkey.createdAt,
    last_used_at: passkey.lastUsedAt,
    user_handle: passkey.userHandle ?? null,
  };
}

/**
 * The passkeys table as a {@link PasskeyStore}: a credential id registered to anyone is a
 * duplicate key (WA-6), the signature counter moves by compare-and-set (WA-5), and deleting one
 * of a user's last passkeys locks that user's passkey rows in a transaction.
 */
export function passkeyStore(context: StoreContext): PasskeyStore {
  const { db, tables: t, isUserId } = context;
  const findById = (id: string) => findOne(context, t.passkeys, "id", id, toPasskey);
  return {
    async create(passkey) {
      return insertUnlessDuplicate(context, t.passkeys, toPasskeyRow(passkey));
    },
    findById,
    async listByUser(userId) {
      if (!isUserId(userId)) return [];
      const rows = await db.selectFrom(t.passkeys).selectAll().where("user_id", "=", userId).orderBy("created_at").execute();
      return rows.map((row) => toPasskey(row as PasskeyRow));
    },
    async updateCounter(id, expectedCounter, counter, backupState, now) {
      const result = await db
        .updateTable(t.passkeys)
        .set({ counter, backup_state: backupState, last_used_at: now })
        .where("id", "=", id)
        .where("counter", "=", expectedCounter)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      if (counter !== expectedCounter) return false;
      // MySQL counts only changed rows: a counter that stays (both 0) with nothing else new matched too.
      const passkey = await findById(id);
      return passkey !== null && passkey.counter === counter && passkey.backupState === backupState && passkey.lastUsedAt === now;
    },
    async rename(userId, id, label) {
      if (!isUserId(userId)) return false;
      const result = await db
        .updateTable(t.passkeys)
        .set({ label })
        .where("id", "=", id)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      const passkey = await findById(id);
      return passkey !== null && passkey.userId === userId && passkey.label === label;
    },
    async delete(userId, id) {
      if (!isUserId(userId)) return false;
      const result = await db.deleteFrom(t.passkeys).where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    async deleteUnlessLast(userId, id) {
      if (!isUserId(userId)) return "not_found";
      // The user's passkeys, locked: concurrent deletes of the last two take turns.
      return db.transaction().execute(async (trx) => {
        const owned = await trx.selectFrom(t.passkeys).select("id").where("user_id", "=", userId).forUpdate().execute();
        if (!owned.some((row) => row.id === id)) return "not_found";
        if (owned.length < 2) return "last";
        await trx.deleteFrom(t.passkeys).where("id", "=", id).where("user_id", "=", userId).execute();
        return "deleted";
      });
    },
  };
}
