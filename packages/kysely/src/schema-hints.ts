import { type Kysely, sql } from "kysely";
import type { AnyDatabase, SqlDialect, Tables } from "./schema.js";

/** What every prefix's schema-version table is called after the prefix. */
const schemaTableSuffix = "portcullis_schema";

/** The prefix the tables `t` were named with. */
export const prefixOf = (t: Tables): string => t.schema.slice(0, -schemaTableSuffix.length);

/** How a message names a prefix: `under the prefix "auth_"`, or `without a prefix`. */
const underPrefix = (prefix: string) => (prefix === "" ? "without a prefix" : `under the prefix "${prefix}"`);

/** What to run to migrate the tables `t` names, as an operator types it: the `--prefix` flag when there is one. */
export function migrateCommands(t: Tables): string {
  const prefix = prefixOf(t);
  return `\`await migrate(storage)\` or \`npx portcullis migrate --url <database URL>${prefix === "" ? "" : ` --prefix ${prefix}`}\``;
}

/** The SQL that names the schema (PostgreSQL) or database (MySQL) the connection works in. */
const currentSchema = (dialect: SqlDialect) => sql.raw(dialect === "mysql" ? "database()" : "current_schema()");

/** Where the tables are looked for, as a message says it: `the schema "public"`, `the database "app"`. */
async function whereTablesAre(db: Kysely<AnyDatabase>, dialect: SqlDialect): Promise<string> {
  const { rows } = await sql<{ name: string | null }>`select ${currentSchema(dialect)} as name`.execute(db);
  return `the ${dialect === "mysql" ? "database" : "schema"} "${rows[0]?.name ?? ""}"`;
}

/** Which of `names` are tables in the current schema (PostgreSQL) or database (MySQL). */
export async function existingTables(db: Kysely<AnyDatabase>, dialect: SqlDialect, names: string[]): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = ${currentSchema(dialect)} and table_name in (${sql.join(names)})`.execute(db);
  const present = new Set(rows.map((row) => row.name));
  return names.filter((name) => present.has(name));
}

/** The prefixes other than the one of `t` that have a Portcullis schema-version table beside it, in order. */
async function otherPrefixes(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = ${currentSchema(dialect)} and table_name like ${`%${schemaTableSuffix}`}`.execute(db);
  return rows
    .map((row) => row.name)
    .filter((name) => name !== t.schema && name.endsWith(schemaTableSuffix))
    .map((name) => name.slice(0, -schemaTableSuffix.length))
    .filter((prefix) => prefix === "" || /^[a-z][a-z0-9_]{0,30}$/.test(prefix))
    .sort();
}

/**
 * The message for a database without the schema-version table of `t`: run migrate, with the
 * command; or, when Portcullis tables exist under another prefix, which one, since the likelier
 * mistake is then a storage given the wrong prefix.
 */
export async function noSchemaMessage(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<string> {
  const where = await whereTablesAre(db, dialect);
  const prefix = prefixOf(t);
  const others = await otherPrefixes(db, dialect, t);
  const missing = `no Portcullis tables ${underPrefix(prefix)} in ${where} (there is no table ${t.schema})`;
  if (others.length === 0) return `@portcullis/kysely: ${missing}; create them first: run ${migrateCommands(t)}`;
  const found = others.map(underPrefix).join(" and ");
  const [first] = others;
  const useThem =
    first === ""
      ? "make the storage without a prefix (leave prefix out of connectStorage, kyselyStorage or pgliteStorage)"
      : `give the storage ${others.length === 1 ? "that prefix" : "one of those prefixes"}: \`connectStorage({ url, prefix: "${first}" })\` (kyselyStorage and pgliteStorage take prefix too)`;
  return `@portcullis/kysely: ${missing}, but there are Portcullis tables ${found}: to use them, ${useThem}; to create tables ${underPrefix(prefix)} instead, run ${migrateCommands(t)}`;
}

/**
 * The message of a migration that would create tables which exist but are not Portcullis's
 * (there is no schema-version table beside them): another application's `users`, say. It names
 * the prefix option of the command and of the storage.
 */
export async function tablesTakenMessage(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  t: Tables,
  taken: string[],
): Promise<string> {
  const where = await whereTablesAre(db, dialect);
  const suggested = prefixOf(t) === "auth_" ? "portcullis_" : "auth_";
  const tables = taken.length === 1 ? `the table ${taken[0]} already exists` : `the tables ${taken.join(", ")} already exist`;
  return (
    `@portcullis/kysely: cannot create the Portcullis tables in ${where}: ${tables} there and ${taken.length === 1 ? "is" : "are"} not Portcullis's ` +
    `(there is no table ${t.schema} beside ${taken.length === 1 ? "it" : "them"}). ` +
    `Give Portcullis's tables a prefix of their own so they live beside ${taken.length === 1 ? "it" : "them"}: ` +
    `\`npx portcullis migrate --prefix ${suggested}\` (with your --url or --pglite), or \`migrate(storage)\` on a storage made with that prefix, ` +
    `and the same prefix wherever the service makes its storage: \`connectStorage({ url, prefix: "${suggested}" })\` (kyselyStorage and pgliteStorage take prefix too)`
  );
}

/**
 * Whether a driver's error says a table does not exist: PostgreSQL and PGlite SQLSTATE 42P01
 * (undefined_table), MySQL/MariaDB `ER_NO_SUCH_TABLE` (1146).
 */
export function isMissingTable(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  return code === "42P01" || code === "ER_NO_SUCH_TABLE" || errno === 1146;
}
