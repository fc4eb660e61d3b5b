import {
  type UserListQuery,
  type UserPatch,
  type UserRecord,
  type UserStore,
  emailKeyOf,
  prefixUpperBound,
} from "@portcullis/core";
import { sql } from "kysely";
import type { UserRow } from "../schema.js";
import { type FieldColumn, fromFieldColumn, toFieldColumn } from "../user-fields.js";
import { type StoreContext, findOne, flag, insertUnlessDuplicate, num, unlessDuplicate, updateCounting } from "./context.js";
import { toIdentityRow } from "./identities.js";
import { toPasskeyRow } from "./passkeys.js";
import { recoveryCodeRows } from "./recovery-codes.js";
import { toTotpRow } from "./totp.js";

/** A users row as the record core reads; with declared fields, their columns as `fields`. */
export function toUser(row: UserRow, fieldColumns: readonly FieldColumn[] = []): UserRecord {
  const user: UserRecord = {
    id: row.id,
    username: row.username,
    usernameKey: row.username_key,
    passwordHash: row.password_hash,
    roles: JSON.parse(row.roles) as string[],
    disabled: flag(row.disabled),
    tokenVersion: num(row.token_version),
    source: row.source as UserRecord["source"],
    email: row.email,
    emailVerified: flag(row.email_verified),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
  if (fieldColumns.length === 0) return user;
  const cells = row as unknown as Record<string, unknown>;
  user.fields = Object.fromEntries(fieldColumns.map(({ field, column }) => [field.name, fromFieldColumn(field, cells[column])]));
  return user;
}

/** The columns of the fields a record or patch gives (those it leaves out are not written). */
function fieldCells(fieldColumns: readonly FieldColumn[], fields: UserRecord["fields"]): Record<string, unknown> {
  if (fields === undefined) return {};
  return Object.fromEntries(
    fieldColumns
      .filter(({ field }) => Object.hasOwn(fields, field.name))
      .map(({ field, column }) => [column, toFieldColumn(field, fields[field.name])]),
  );
}

/**
 * The SELECT behind {@link UserStore.list}: a range over the unique index on `username_key`,
 * `key > after AND key >= prefix AND key < upper bound of the prefix`, in the index's order, with
 * a LIMIT. The column compares bytes (PostgreSQL `"C"`, MySQL `…_bin`), so the range is exactly
 * the keys starting with the prefix, `%`, `_` and `\` being characters like any other, and the
 * database reads only the page from the index. Exported for the test that reads its plan.
 */
export function listUsersQuery({ db, tables: t }: StoreContext, { limit, afterUsernameKey, usernameKeyPrefix }: UserListQuery) {
  const upper = usernameKeyPrefix ? prefixUpperBound(usernameKeyPrefix) : null;
  return db
    .selectFrom(t.users)
    .selectAll()
    .$if(afterUsernameKey !== undefined, (query) => query.where("username_key", ">", afterUsernameKey as string))
    .$if(Boolean(usernameKeyPrefix), (query) => query.where("username_key", ">=", usernameKeyPrefix as string))
    .$if(upper !== null, (query) => query.where("username_key", "<", upper as string))
    .orderBy("username_key")
    .limit(limit);
}

/**
 * The columns of a user's address: `verified_email_key` is `emailKeyOf` of a verified address and
 * null otherwise, and unique (EV-1): the database refuses a second account holding one verified.
 */
function emailColumns(email: string | null, verified: boolean) {
  const held = verified && email !== null;
  return { email, email_verified: held, verified_email_key: held ? emailKeyOf(email) : null };
}

/** A user as the row `create` inserts. Exported for the migration tests, which write older versions' rows. */
export function toUserRow(user: UserRecord, fieldColumns: readonly FieldColumn[] = []): UserRow {
  return {
    ...fieldCells(fieldColumns, user.fields),
    id: user.id,
    username: user.username,
    username_key: user.usernameKey,
    password_hash: user.passwordHash,
    roles: JSON.stringify(user.roles),
    disabled: user.disabled,
    token_version: user.tokenVersion,
    source: user.source,
    ...emailColumns(user.email, user.emailVerified),
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}

/**
 * The users table as a {@link UserStore}: a taken username key, id or verified address is a
 * duplicate key, so `create` and `setEmail` are one write each. `createAccount` inserts the
 * user's row and its factors' rows in one transaction (IM-1).
 */
export function userStore(context: StoreContext): UserStore {
  const { db, tables: t } = context;
  const { fieldColumns } = context;
  const toRecord = (row: UserRow) => toUser(row, fieldColumns);
  const findById = (id: string) => findOne(context, t.users, "id", id, toRecord);
  return {
    async create(user) {
      return insertUnlessDuplicate(context, t.users, { ...toUserRow(user, fieldColumns) });
    },
    async createAccount({ user, totp, recoveryCodeHashes, passkeys, identities }) {
      const userId = user.id;
      // A user alone is one statement, atomic by itself: no transaction's two more round trips.
      if (totp === null && recoveryCodeHashes.length + passkeys.length + identities.length === 0) {
        return insertUnlessDuplicate(context, t.users, { ...toUserRow(user, fieldColumns) });
      }
      // One transaction, one INSERT per table: every row or none. A duplicate key in any of them
      // (the user's id, username or verified address, a credential id, a link) rolls back all,
      // and so does a connection cut part way (the server rolls back what it had open).
      return unlessDuplicate(() =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto(t.users).values(toUserRow(user, fieldColumns)).execute();
          if (totp !== null)
            await trx
              .insertInto(t.totp)
              .values(toTotpRow({ ...totp, userId }))
              .execute();
          const codes = recoveryCodeRows(userId, recoveryCodeHashes, user.createdAt);
          if (codes.length > 0) await trx.insertInto(t.recoveryCodes).values(codes).execute();
          if (passkeys.length > 0) {
            await trx
              .insertInto(t.passkeys)
              .values(passkeys.map((passkey) => toPasskeyRow({ ...passkey, userId })))
              .execute();
          }
          if (identities.length > 0) {
            await trx
              .insertInto(t.identities)
              .values(identities.map((identity) => toIdentityRow({ ...identity, userId })))
              .execute();
          }
        }),
      );
    },
    findById,
    findByUsernameKey: (usernameKey) => findOne(context, t.users, "username_key", usernameKey, toRecord),
    findByVerifiedEmail: (emailKey) => findOne(context, t.users, "verified_email_key", emailKey, toRecord),
    async setEmail(id, setting, now) {
      const columns = emailColumns(setting?.email ?? null, setting?.verified === true);
      const written = await unlessDuplicate(() =>
        db
          .updateTable(t.users)
          .set({ ...columns, updated_at: now })
          .where("id", "=", id)
          .execute(),
      );
      if (!written) return { outcome: "taken" };
      const user = await findById(id);
      return user ? { outcome: "set", user } : { outcome: "unknown" };
    },
    async update(id, patch, now) {
      const set: Record<string, unknown> = { ...fieldCells(fieldColumns, patch.fields), updated_at: now };
      const columns: Record<Exclude<keyof UserPatch, "fields">, string> = {
        username: "username",
        usernameKey: "username_key",
        passwordHash: "password_hash",
        roles: "roles",
        disabled: "disabled",
      };
      for (const [field, column] of Object.entries(columns) as [Exclude<keyof UserPatch, "fields">, string][]) {
        const value = patch[field];
        if (value !== undefined) set[column] = field === "roles" ? JSON.stringify(value) : value;
      }
      const updated = await unlessDuplicate(() => db.updateTable(t.users).set(set).where("id", "=", id).execute());
      return updated ? findById(id) : null;
    },
    async replacePasswordHash(id, expected, next, now) {
      const result = await db
        .updateTable(t.users)
        .set({ password_hash: next, updated_at: now })
        .where("id", "=", id)
        .where("password_hash", "=", expected)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async incrementTokenVersion(id, now) {
      return updateCounting(context, t.users, "token_version", sql`token_version + 1`, (query) => query.where("id", "=", id), {
        updated_at: now,
      });
    },
    async incrementTokenVersionsBySource(source, now) {
      // Two of these at once must lock the rows in one order, or each holds a row the other
      // waits for: PostgreSQL updates rows in the order it finds them, which earlier updates
      // change, so the rows are locked by id first; InnoDB walks them in primary-key order.
      const ofSource = context.postgres
        ? db.selectFrom(t.users).select("id").where("source", "=", source).orderBy("id").forUpdate()
        : undefined;
      const result = await db
        .updateTable(t.users)
        .set({ token_version: sql`token_version + 1`, updated_at: now })
        .where((eb) => (ofSource ? eb("id", "in", ofSource) : eb("source", "=", source)))
        .executeTakeFirst();
      return num(result.numUpdatedRows);
    },
    async list(query) {
      const rows = await listUsersQuery(context, query).execute();
      return rows.map((row) => toRecord(row as UserRow));
    },
  };
}
