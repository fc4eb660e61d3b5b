import { type FieldValue, type ResolvedField, type UserFieldDefinitions, resolveUserFields } from "@portcullis/core";
import { type Kysely, sql } from "kysely";
import type { AnyDatabase, SqlDialect, Tables } from "./schema.js";

/** A declared user field and the column of the users table that holds it. */
export interface FieldColumn {
  readonly field: ResolvedField;
  /** The field's name in snake case: `companyName` is `company_name`. */
  readonly column: string;
}

/** The columns of declared fields, checked as `createAuth` checks them (a `TypeError` naming the mistake). */
export function fieldColumnsOf(fields: UserFieldDefinitions | undefined): readonly FieldColumn[] {
  return resolveUserFields(fields === undefined ? undefined : { fields }).map((field) => ({
    field,
    column: field.name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
  }));
}

/** The SQL type of a field's column: every one nullable, so rows made before it read as its default. */
function columnType(field: ResolvedField, dialect: SqlDialect): string {
  switch (field.kind) {
    case "string":
      return field.maxLength <= 1000 ? `varchar(${Math.max(field.maxLength, 1)})` : "text";
    case "enum":
      return `varchar(${Math.max(...field.values.map((value) => value.length))})`;
    case "integer":
      return "bigint";
    case "number":
      return dialect === "postgres" ? "double precision" : "double";
    case "boolean":
      return "boolean";
    case "stringArray":
      return "text";
  }
}

const quoted = (name: string, dialect: SqlDialect) => (dialect === "postgres" ? `"${name}"` : `\`${name}\``);

/**
 * The statements that add the columns of `fields` missing from the users table: one
 * `ALTER TABLE … ADD COLUMN` each, nullable, so no row is rewritten or lost. What
 * `portcullis fields --print` shows, for a migration tool of your own.
 *
 * @example
 * ```ts
 * fieldMigrationStatements("postgres", tablesWithPrefix("auth_"), fieldColumnsOf(fields), existing);
 * // ['ALTER TABLE "auth_users" ADD COLUMN "company" varchar(100)']
 * ```
 */
export function fieldMigrationStatements(
  dialect: SqlDialect,
  tables: Tables,
  columns: readonly FieldColumn[],
  existing: ReadonlySet<string>,
): string[] {
  const table = tables.users
    .split(".")
    .map((part) => quoted(part, dialect))
    .join(".");
  return columns
    .filter(({ column }) => !existing.has(column))
    .map(({ field, column }) => `ALTER TABLE ${table} ADD COLUMN ${quoted(column, dialect)} ${columnType(field, dialect)}`);
}

/** The column names of the users table, as the database lists them. */
export async function usersTableColumns(db: Kysely<AnyDatabase>, dialect: SqlDialect, tables: Tables): Promise<Set<string>> {
  const [schema, table] = tables.users.includes(".") ? (tables.users.split(".") as [string, string]) : [null, tables.users];
  const where =
    dialect === "postgres"
      ? sql`table_schema = ${schema === null ? sql`current_schema()` : schema}`
      : sql`table_schema = ${schema === null ? sql`database()` : schema}`;
  const rows = await sql<{ column_name: string }>`
    select column_name as column_name from information_schema.columns where ${where} and table_name = ${table}
  `.execute(db);
  return new Set(rows.rows.map((row) => row.column_name));
}

/**
 * Why the users table cannot hold the declared fields (the columns it lacks, and how to add them),
 * or null when it can: checked before the first use of the storage, so a missing column is one
 * clear error at startup rather than a failed sign-in later.
 */
export async function fieldColumnsProblem(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  tables: Tables,
  columns: readonly FieldColumn[],
): Promise<string | null> {
  if (columns.length === 0) return null;
  const existing = await usersTableColumns(db, dialect, tables);
  const missing = columns.filter(({ column }) => !existing.has(column)).map(({ column }) => column);
  if (missing.length === 0) return null;
  return `@portcullis/kysely: the ${tables.users} table has no column for the user fields ${missing.join(", ")}: run \`portcullis fields --fields <module> --url …\` (or apply the statements of \`portcullis fields --print\`) before the service starts`;
}

/**
 * Adds the columns of the declared fields missing from the users table, and answers the
 * statements it ran (none when every column is there: safe to run again). Nullable columns:
 * every existing row keeps its data and reads each new field as its default.
 *
 * @example
 * ```ts
 * await migrateUserFields(storage, fields); // ['ALTER TABLE "users" ADD COLUMN "company" varchar(100)']
 * ```
 */
export async function migrateUserFields(
  storage: { readonly db: Kysely<unknown>; readonly dialect: SqlDialect; readonly tables: Tables },
  fields: UserFieldDefinitions,
): Promise<string[]> {
  const db = storage.db as Kysely<AnyDatabase>;
  const statements = fieldMigrationStatements(
    storage.dialect,
    storage.tables,
    fieldColumnsOf(fields),
    await usersTableColumns(db, storage.dialect, storage.tables),
  );
  for (const statement of statements) await sql.raw(statement).execute(db);
  return statements;
}

/** A field's value as its column holds it: a string array as JSON text, the rest as they are. */
export function toFieldColumn(field: ResolvedField, value: FieldValue | undefined): unknown {
  if (value === undefined || value === null) return null;
  return field.kind === "stringArray" ? JSON.stringify(value) : value;
}

/** A column's value as the field's: booleans from MySQL's 0/1, numbers from bigint strings, arrays from JSON. */
export function fromFieldColumn(field: ResolvedField, value: unknown): FieldValue {
  if (value === null || value === undefined) return null;
  switch (field.kind) {
    case "boolean":
      return value === true || value === 1 || value === "1";
    case "integer":
    case "number":
      return Number(value);
    case "stringArray":
      return JSON.parse(String(value)) as string[];
    default:
      return String(value);
  }
}
