import {
  type NewAccount,
  type UserCreation,
  type UserListQuery,
  type UserPatch,
  type UserRecord,
  type UserStore,
  emailKeyOf,
  prefixUpperBound,
} from "@portcullis/core";
import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import type { AnyDatabase, UserRow } from "../schema.js";
import { type FieldColumn, fromFieldColumn, toFieldColumn } from "../user-fields.js";
import { portcullisMadeId, userIdFromRow } from "../users-table.js";
import {
  type StoreContext,
  flag,
  insertUnlessDuplicate,
  num,
  requiringEmailWhereYourTableDoes,
  unlessDuplicate,
  updateCounting,
} from "./context.js";
import { toIdentityRow } from "./identities.js";
import { toPasskeyRow } from "./passkeys.js";
import { recoveryCodeRows } from "./recovery-codes.js";
import { toTotpRow } from "./totp.js";

/** A users row as the record core reads; with declared fields, their columns as `fields`. */
export function toUser(row: UserRow, fieldColumns: readonly FieldColumn[] = []): UserRecord {
  const user: UserRecord = {
    id: userIdFromRow(row.id),
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
export function listUsersQuery(context: StoreContext, { limit, afterUsernameKey, usernameKeyPrefix }: UserListQuery) {
  const upper = usernameKeyPrefix ? prefixUpperBound(usernameKeyPrefix) : null;
  return selectUsers(context)
    .selectAll()
    .$if(afterUsernameKey !== undefined, (query) => query.where("username_key", ">", afterUsernameKey as string))
    .$if(Boolean(usernameKeyPrefix), (query) => query.where("username_key", ">=", usernameKeyPrefix as string))
    .$if(upper !== null, (query) => query.where("username_key", "<", upper as string))
    .orderBy("username_key")
    .limit(limit);
}

/**
 * A SELECT from the users: Portcullis's `users` table, or (with the `users` option) its `accounts`
 * rows joined to yours, with the same column names (see `usersRelation`).
 */
function selectUsers(context: StoreContext): SelectQueryBuilder<AnyDatabase, string, object> {
  const { db, tables: t, hostUsers, usersFrom } = context;
  return (hostUsers === null ? db.selectFrom(t.users) : db.selectFrom(usersFrom.as("u"))) as SelectQueryBuilder<
    AnyDatabase,
    string,
    object
  >;
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

/** The columns of a users row that live in your table (the `users` option), by their names there; the others stay. */
function splitOff(context: StoreContext, row: Record<string, unknown>) {
  const host: Record<string, unknown> = {};
  const own: Record<string, unknown> = { ...row };
  for (const [field, column] of [
    ["username", context.hostUsers?.username],
    ["email", context.hostUsers?.email],
  ] as const) {
    if (column && field in own) {
      host[column] = own[field];
      delete own[field];
    }
  }
  return { host, own };
}

/** The account's factors and links, inserted beside its user in `trx` (IM-1). */
async function insertFactors(
  trx: Kysely<AnyDatabase>,
  { tables: t }: StoreContext,
  userId: string,
  { user, totp, recoveryCodeHashes, passkeys, identities }: NewAccount,
): Promise<void> {
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
}

/**
 * Inserts your row (only the columns the `users` option names, and the id unless the database
 * makes it) and then Portcullis's `accounts` row and `more`, in one transaction: all or nothing.
 * A user whose id is of your table's form keeps it (an import that keeps ids); another gets one
 * made by the database (`RETURNING`, `LAST_INSERT_ID()`) or a random UUID, which is answered.
 */
async function createInYourTable(
  context: StoreContext,
  user: UserRecord,
  more: (trx: Kysely<AnyDatabase>, userId: string) => Promise<void>,
): Promise<UserCreation> {
  const { db, tables: t, postgres } = context;
  const host = context.hostUsers as NonNullable<StoreContext["hostUsers"]>;
  const kept = context.isUserId(user.id);
  const chosen = kept ? user.id : portcullisMadeId(host);
  const { host: yours, own } = splitOff(context, { ...toUserRow(user, context.fieldColumns) });
  let stored = "";
  const written = await requiringEmailWhereYourTableDoes(host.email, () =>
    unlessDuplicate(() =>
      db.transaction().execute(async (trx) => {
        const values = chosen === null ? yours : { [host.idColumn]: chosen, ...yours };
        if (chosen !== null) {
          await trx.insertInto(host.qualified).values(values).execute();
          stored = chosen;
        } else if (postgres) {
          const insert =
            Object.keys(values).length === 0
              ? trx.insertInto(host.qualified).defaultValues()
              : trx.insertInto(host.qualified).values(values);
          const row = await insert.returning(host.idColumn).executeTakeFirstOrThrow();
          stored = userIdFromRow(row[host.idColumn]);
        } else {
          const result =
            Object.keys(values).length === 0
              ? await sql`insert into ${sql.table(host.qualified)} () values ()`.execute(trx)
              : await trx.insertInto(host.qualified).values(values).executeTakeFirstOrThrow();
          stored = userIdFromRow(result.insertId);
        }
        await trx
          .insertInto(t.users)
          .values({ ...own, id: stored })
          .execute();
        await more(trx, stored);
      }),
    ),
  );
  if (!written) return false;
  return kept ? true : stored;
}

/**
 * Sets `set` (columns of a users row) on the user `id`: one UPDATE of Portcullis's table, or, when
 * some of them are your table's, that UPDATE and one of your row in a transaction that first locks
 * the account (so a user Portcullis does not know is never written). `unknown` when there is no
 * such account, `duplicate` when a unique key refused the write (nothing written).
 */
async function writeUser(
  context: StoreContext,
  id: string,
  set: Record<string, unknown>,
): Promise<"written" | "duplicate" | "unknown"> {
  const { db, tables: t } = context;
  const { host: yours, own } = splitOff(context, set);
  const hostUsers = context.hostUsers;
  if (hostUsers === null || Object.keys(yours).length === 0) {
    const written = await unlessDuplicate(() => db.updateTable(t.users).set(own).where("id", "=", id).execute());
    return written ? "written" : "duplicate";
  }
  let known = true;
  const written = await requiringEmailWhereYourTableDoes(hostUsers.email, () =>
    unlessDuplicate(() =>
      db.transaction().execute(async (trx) => {
        const account = await trx.selectFrom(t.users).select("id").where("id", "=", id).forUpdate().executeTakeFirst();
        if (account === undefined) {
          known = false;
          return;
        }
        await trx.updateTable(t.users).set(own).where("id", "=", id).execute();
        await trx.updateTable(hostUsers.qualified).set(yours).where(hostUsers.idColumn, "=", id).execute();
      }),
    ),
  );
  if (!known) return "unknown";
  return written ? "written" : "duplicate";
}

/**
 * The users table as a {@link UserStore}: a taken username key, id or verified address is a
 * duplicate key, so `create` and `setEmail` are one write each. `createAccount` inserts the
 * user's row and its factors' rows in one transaction (IM-1). With the `users` option, a user is
 * your row and Portcullis's `accounts` row, written together in one transaction; an id not of your
 * table's form is no one's, answered without a query.
 */
export function userStore(context: StoreContext): UserStore {
  const { db, tables: t, isUserId, fieldColumns } = context;
  const toRecord = (row: UserRow) => toUser(row, fieldColumns);
  const findBy = async (column: string, value: string) => {
    const row = await selectUsers(context).selectAll().where(column, "=", value).executeTakeFirst();
    return row ? toRecord(row as UserRow) : null;
  };
  const findById = async (id: string) => (isUserId(id) ? findBy("id", id) : null);
  return {
    async create(user) {
      if (context.hostUsers !== null) return createInYourTable(context, user, async () => {});
      return insertUnlessDuplicate(context, t.users, { ...toUserRow(user, fieldColumns) });
    },
    async createAccount(account) {
      const { user, totp, recoveryCodeHashes, passkeys, identities } = account;
      if (context.hostUsers !== null) {
        return createInYourTable(context, user, (trx, userId) => insertFactors(trx, context, userId, account));
      }
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
          await insertFactors(trx, context, user.id, account);
        }),
      );
    },
    findById,
    findByUsernameKey: (usernameKey) => findBy("username_key", usernameKey),
    findByVerifiedEmail: (emailKey) => findBy("verified_email_key", emailKey),
    async setEmail(id, setting, now) {
      if (!isUserId(id)) return { outcome: "unknown" };
      const columns = emailColumns(setting?.email ?? null, setting?.verified === true);
      const written = await writeUser(context, id, { ...columns, updated_at: now });
      if (written === "duplicate") return { outcome: "taken" };
      const user = await findById(id);
      return user ? { outcome: "set", user } : { outcome: "unknown" };
    },
    async update(id, patch, now) {
      if (!isUserId(id)) return null;
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
      return (await writeUser(context, id, set)) === "duplicate" ? null : findById(id);
    },
    async replacePasswordHash(id, expected, next, now) {
      if (!isUserId(id)) return false;
      const result = await db
        .updateTable(t.users)
        .set({ password_hash: next, updated_at: now })
        .where("id", "=", id)
        .where("password_hash", "=", expected)
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
    async incrementTokenVersion(id, now) {
      if (!isUserId(id)) return null;
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
