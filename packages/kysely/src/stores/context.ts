import { AuthError, ErrorCode } from "@portcullis/core";
import { CompiledQuery, type Kysely, type QueryResult, type RawBuilder, sql } from "kysely";
import type { AnyDatabase, SqlDialect, Tables } from "../schema.js";
import type { FieldColumn } from "../user-fields.js";
import { type UsersTable, isUserIdOf, usersRelation } from "../users-table.js";

/** What every SQL store is built from: the database, its dialect and the prefixed table names. */
export interface StoreContext {
  readonly db: Kysely<AnyDatabase>;
  readonly dialect: SqlDialect;
  /** `dialect === "postgres"`: `RETURNING` and `ON CONFLICT`, where MySQL has neither. */
  readonly postgres: boolean;
  readonly tables: Tables;
  /** The declared additional user fields and their columns of the users table (`userFields`). */
  readonly fieldColumns: readonly FieldColumn[];
  /** Your users table (the `users` option), or null: Portcullis's own `users` table holds the users. */
  readonly hostUsers: UsersTable | null;
  /** The users as a relation with the columns of a {@link UserRow}: `tables.users`, or it joined to your table. */
  readonly usersFrom: RawBuilder<unknown>;
  /** Whether `id` can be a user's: of the form your table keeps ids (see {@link isUserIdOf}); any string without it. */
  isUserId(id: string): boolean;
}

/** The context the stores of one {@link StoreContext.db} share. */
export function storeContext(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  tables: Tables,
  fieldColumns: readonly FieldColumn[] = [],
  hostUsers: UsersTable | null = null,
): StoreContext {
  return {
    db,
    dialect,
    postgres: dialect === "postgres",
    tables,
    fieldColumns,
    hostUsers,
    usersFrom: usersRelation(
      tables.users,
      hostUsers,
      fieldColumns.map(({ column }) => column),
    ),
    isUserId: (id) => isUserIdOf(hostUsers, id),
  };
}

/**
 * A store's hot statement (a refresh's rotation, the token-state check of every protected request),
 * compiled by Kysely once, on its first call, and then sent with each call's values. Kysely would
 * otherwise compile the template on every call, about 9 µs for the rotation. `template` takes
 * placeholders instead of values (see {@link placeholders}) and must bind none of its own; each
 * call's array of values is handed to Kysely, which freezes it.
 */
export function compiledOnce<Row>(
  { db }: StoreContext,
  template: () => RawBuilder<Row>,
): (values: unknown[]) => Promise<QueryResult<Row>> {
  let text: string | undefined;
  return (values) => {
    if (text === undefined) {
      const compiled = template().compile(db);
      if (compiled.parameters.length > 0) throw new TypeError("compiledOnce: the template binds values; use placeholders");
      text = compiled.sql;
    }
    return db.executeQuery(CompiledQuery.raw(text, values)) as Promise<QueryResult<Row>>;
  };
}

/**
 * The `count` placeholders of a {@link compiledOnce} statement, for the values in the order its
 * call gives them: `$1`, `$2`… on PostgreSQL, where each may appear more than once; `?` on MySQL,
 * where each stands for the next value, so each must appear once, in that order.
 */
export function placeholders({ postgres }: StoreContext, count: number): RawBuilder<unknown>[] {
  return Array.from({ length: count }, (_, index) => sql.raw(postgres ? `$${index + 1}` : "?"));
}

/** `alias.column AS alias_column, …`: the columns of one table in a join, named apart from the others'. */
export function selectedAs(alias: string, columns: readonly string[]): RawBuilder<unknown> {
  return sql.raw(columns.map((column) => `${alias}.${column} as ${alias}_${column}`).join(", "));
}

/** The row of one table out of a joined row read with {@link selectedAs}; null when the join found none. */
export function rowOf<Row>(joined: Record<string, unknown>, alias: string, columns: readonly string[]): Row | null {
  if (joined[`${alias}_${columns[0]}`] === null) return null;
  return Object.fromEntries(columns.map((column) => [column, joined[`${alias}_${column}`]])) as Row;
}

/** A BIGINT or INT column as a number: drivers return some as strings or bigints. */
export const num = (value: number | string | bigint) => Number(value);

/** A nullable BIGINT column (a time that may not have happened) as a number or null. */
export const numOrNull = (value: number | string | bigint | null) => (value === null ? null : Number(value));

/** A BOOLEAN column: PostgreSQL returns booleans, MySQL TINYINT 0/1 (or "1" as text). */
export const flag = (value: boolean | number | string) => value === true || value === 1 || value === "1";

/** PostgreSQL 23505 and MySQL ER_DUP_ENTRY (1062): an insert met a row with its key. */
function isDuplicate(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return code === "23505" || code === "ER_DUP_ENTRY" || errno === 1062;
}

/**
 * Whether `error` is the database refusing a null in `column` (PostgreSQL and PGlite: SQLSTATE
 * 23502 naming the column; MySQL and MariaDB: error 1048, "Column '<column>' cannot be null").
 */
function isNullRefusedIn(error: unknown, column: string): boolean {
  const { code, errno, column: named, message } = (error ?? {}) as Record<string, unknown>;
  if (code === "23502") return named === column;
  return errno === 1048 && typeof message === "string" && message.includes(`'${column}'`);
}

/**
 * Runs a write of your users table (the `users` option) whose `email` column is `emailColumn`: a
 * NOT NULL email column refusing a user without an address is 40001 "email is required", never a
 * database error (50000). Nothing is written: the refused statement ends its transaction.
 */
export async function requiringEmailWhereYourTableDoes<T>(emailColumn: string | null, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (emailColumn !== null && isNullRefusedIn(error, emailColumn)) {
      throw new AuthError(ErrorCode.MissingParameter, "email is required");
    }
    throw error;
  }
}

/** Runs an insert or update; false when it met another row with the same unique key. */
export async function unlessDuplicate(run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run();
    return true;
  } catch (error) {
    if (isDuplicate(error)) return false;
    throw error;
  }
}

/** Inserts `values` into `table`; false, inserting nothing, when a row already has one of its unique keys. */
export function insertUnlessDuplicate({ db }: StoreContext, table: string, values: Record<string, unknown>): Promise<boolean> {
  return unlessDuplicate(() => db.insertInto(table).values(values).execute());
}

/** The row of `table` whose `column` equals `value`, as `toRecord` maps it; null when there is none. */
export async function findOne<Row, Result>(
  { db }: StoreContext,
  table: string,
  column: string,
  value: string,
  toRecord: (row: Row) => Result,
): Promise<Result | null> {
  const row = await db.selectFrom(table).selectAll().where(column, "=", value).executeTakeFirst();
  return row ? toRecord(row as Row) : null;
}

/**
 * An UPDATE that sets `column` to `expression` and reports the new value: `returning` on
 * PostgreSQL, `LAST_INSERT_ID(expression)` on MySQL (the statement's own insert id, so no
 * second query can see another caller's write). Null when no row matched.
 */
export async function updateCounting(
  { db, postgres }: StoreContext,
  table: string,
  column: string,
  expression: ReturnType<typeof sql>,
  // biome-ignore lint/suspicious/noExplicitAny: a where clause over the table's columns.
  where: (query: any) => any,
  extra: Record<string, unknown> = {},
): Promise<number | null> {
  if (postgres) {
    const row = await where(db.updateTable(table).set({ ...extra, [column]: expression }))
      .returning(column)
      .executeTakeFirst();
    return row ? num(row[column]) : null;
  }
  const compiled = where(db.updateTable(table).set({ ...extra, [column]: sql`last_insert_id(${expression})` })).compile();
  const result = await db.executeQuery(compiled);
  return result.numAffectedRows === BigInt(1) && result.insertId !== undefined ? num(result.insertId) : null;
}

/**
 * Inserts `values`, or sets `changes` on the row that already has its `key`: `ON CONFLICT (key)
 * DO UPDATE` on PostgreSQL, `ON DUPLICATE KEY UPDATE` on MySQL. One statement either way.
 */
export async function upsert(
  { db, postgres }: StoreContext,
  table: string,
  key: string,
  values: Record<string, unknown>,
  changes: Record<string, unknown>,
): Promise<void> {
  await db
    .insertInto(table)
    .values(values)
    .$call((query) =>
      postgres ? query.onConflict((conflict) => conflict.column(key).doUpdateSet(changes)) : query.onDuplicateKeyUpdate(changes),
    )
    .execute();
}
