import { randomUUID } from "node:crypto";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { AnyDatabase, SqlDialect } from "./schema.js";

/**
 * The `users` option of `kyselyStorage` and `connectStorage`: Portcullis's users are the rows of
 * a table of yours (docs/existing-users-table.md). Portcullis reads and writes only the columns
 * named here; everything else of yours it never selects, updates or deletes. Its own data about
 * each user (username key, roles, password hash, token version, …) lives in its own table,
 * `<prefix>accounts`, keyed by your id.
 *
 * @example
 * ```ts
 * kyselyStorage({
 *   db, dialect: "postgres", prefix: "auth_",
 *   users: { table: "users", id: { column: "id", type: "integer" }, columns: { email: "email", passwordHash: "password_digest" } },
 * });
 * ```
 */
export interface UsersTableOptions {
  /** Your table's name. */
  table: string;
  /** The PostgreSQL schema (MySQL/MariaDB: the database) your table is in, when it is not the connection's. */
  schema?: string;
  /** Your table's primary key. */
  id: {
    /** Default `"id"`. */
    column?: string;
    /** What it holds: a whole number, a UUID, or any text up to 255 characters. */
    type: "integer" | "uuid" | "text";
    /**
     * Who makes a new user's id: `"database"` (a sequence, an identity or AUTO_INCREMENT column,
     * PostgreSQL's `default gen_random_uuid()`), read back with `RETURNING` on PostgreSQL and
     * `LAST_INSERT_ID()` on MySQL; or `"portcullis"` (a random UUID, or Portcullis's random text
     * id). Default: `"database"` for integers, `"portcullis"` otherwise. Integers are always the
     * database's; on MySQL a UUID is always Portcullis's (MySQL cannot return one it made).
     */
    generated?: "database" | "portcullis";
  };
  /**
   * The columns of yours Portcullis reads, each optional. `email` and `username` it also writes,
   * when it creates a user and when the user changes them; without them both live in its own
   * table. `passwordHash` it only reads, once, when {@link adoptExistingUsers} adopts your rows:
   * the hash (bcrypt, scrypt, PBKDF2, argon2) is imported into Portcullis's own table and your
   * column is never written.
   */
  columns?: { email?: string; username?: string; passwordHash?: string };
}

/** {@link UsersTableOptions} checked, with every default filled in. */
export interface UsersTable {
  /** Your table as Kysely names it: `schema.table` or `table`. */
  readonly qualified: string;
  /** Your table's name (`users.table`). */
  readonly table: string;
  /** Its schema or database (`users.schema`), or null for the connection's. */
  readonly schema: string | null;
  /** Your primary key (`users.id.column`, default `id`). */
  readonly idColumn: string;
  /** What the id holds (`users.id.type`). */
  readonly idType: "integer" | "uuid" | "text";
  /** Who makes a new user's id (`users.id.generated`, with its default). */
  readonly generated: "database" | "portcullis";
  /** The columns of yours Portcullis reads; null where Portcullis keeps the value in its own table. */
  readonly email: string | null;
  readonly username: string | null;
  readonly passwordHash: string | null;
}

/** Identifiers of yours: a letter or `_`, then up to 63 letters, digits or `_`, quoted where used. */
const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function checkedName(value: unknown, option: string): string {
  if (typeof value !== "string" || !identifier.test(value)) {
    throw new TypeError(
      `@portcullis/kysely: users.${option} must be a table or column name (a letter or "_", then letters, digits or "_"); got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function optionalName(value: unknown, option: string): string | null {
  return value === undefined ? null : checkedName(value, option);
}

/**
 * The `users` option checked: every name a plain identifier, the id's type and generation one
 * Portcullis can keep on `dialect`. Null without the option: Portcullis's own `users` table.
 *
 * @throws {TypeError} naming the option that is wrong.
 */
export function usersTableOf(options: UsersTableOptions | undefined, dialect: SqlDialect): UsersTable | null {
  if (options === undefined) return null;
  if (typeof options !== "object" || options === null) throw new TypeError("@portcullis/kysely: users must be an object");
  const table = checkedName(options.table, "table");
  const schema = optionalName(options.schema, "schema");
  const id = options.id ?? ({} as UsersTableOptions["id"]);
  const idType = id.type;
  if (idType !== "integer" && idType !== "uuid" && idType !== "text") {
    throw new TypeError(`@portcullis/kysely: users.id.type must be "integer", "uuid" or "text"; got ${JSON.stringify(idType)}`);
  }
  const generated = id.generated ?? (idType === "integer" ? "database" : "portcullis");
  if (generated !== "database" && generated !== "portcullis") {
    throw new TypeError(
      `@portcullis/kysely: users.id.generated must be "database" or "portcullis"; got ${JSON.stringify(generated)}`,
    );
  }
  if (idType === "integer" && generated !== "database") {
    throw new TypeError('@portcullis/kysely: users.id.generated must be "database" for integer ids: the database numbers them');
  }
  if (idType === "text" && generated !== "portcullis") {
    throw new TypeError('@portcullis/kysely: users.id.generated must be "portcullis" for text ids');
  }
  if (idType === "uuid" && generated === "database" && dialect === "mysql") {
    throw new TypeError(
      '@portcullis/kysely: users.id.generated "database" for UUIDs needs PostgreSQL (MySQL cannot return the UUID it made); use "portcullis"',
    );
  }
  const columns = options.columns ?? {};
  return {
    qualified: schema === null ? table : `${schema}.${table}`,
    table,
    schema,
    idColumn: checkedName(id.column ?? "id", "id.column"),
    idType,
    generated,
    email: optionalName(columns.email, "columns.email"),
    username: optionalName(columns.username, "columns.username"),
    passwordHash: optionalName(columns.passwordHash, "columns.passwordHash"),
  };
}

const canonicalUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const canonicalInteger = /^(0|-?[1-9][0-9]{0,18})$/;
const int64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };

/**
 * Whether `id` is a user id in the form `users` keeps ids: an integer's decimal digits (no sign
 * but `-`, no leading zero, within 64 bits), a UUID in lower case with its hyphens, any text of 1
 * to 255 characters. Without the option, any string: Portcullis's own ids. An id of another form
 * can be no one's, and a store answers it as unknown without asking the database.
 */
export function isUserIdOf(users: UsersTable | null, id: unknown): id is string {
  if (typeof id !== "string") return false;
  if (users === null) return true;
  if (users.idType === "uuid") return canonicalUuid.test(id);
  if (users.idType === "text") return id.length > 0 && id.length <= 255;
  if (!canonicalInteger.test(id)) return false;
  const value = BigInt(id);
  return value >= int64.min && value <= int64.max;
}

/** A user id as a driver returns it (a number, a bigint, a string) as the string core keeps. */
export const userIdFromRow = (value: unknown): string => String(value);

/** A new user's id when Portcullis makes it for a table of UUIDs; null when the database makes it or core's id serves. */
export function portcullisMadeId(users: UsersTable): string | null {
  return users.idType === "uuid" && users.generated === "portcullis" ? randomUUID() : null;
}

/** `name` quoted as an identifier of `dialect`; names are checked by {@link usersTableOf}, so none holds a quote. */
export function quoted(dialect: SqlDialect, name: string): string {
  return dialect === "mysql" ? `\`${name}\`` : `"${name}"`;
}

/** Your table, quoted, schema and all, for DDL. */
export function quotedTable(dialect: SqlDialect, users: UsersTable): string {
  return users.schema === null
    ? quoted(dialect, users.table)
    : `${quoted(dialect, users.schema)}.${quoted(dialect, users.table)}`;
}

/**
 * The users as Portcullis reads them, with its `users` table's columns: its own `accounts` row
 * joined to your row by id, `username` and `email` from your columns when mapped. Your other
 * columns are never named. Without the option, Portcullis's own `users` table.
 */
export function usersRelation(
  accounts: string,
  users: UsersTable | null,
  fieldColumns: readonly string[] = [],
): RawBuilder<unknown> {
  if (users === null) return sql.table(accounts);
  // The additional user fields (`userFields`) are columns of Portcullis's own table.
  const fields = fieldColumns.map((column) => sql`, ${sql.ref(`a.${column}`)}`);
  const fromHost = (column: string | null, name: string) =>
    column === null ? sql.ref(`a.${name}`) : sql`${sql.ref(`h.${column}`)} as ${sql.ref(name)}`;
  return sql`(select a.id, ${fromHost(users.username, "username")}, a.username_key, a.password_hash, a.roles, a.disabled,
    a.token_version, a.source, ${fromHost(users.email, "email")}, a.email_verified, a.verified_email_key, a.created_at, a.updated_at${sql.join(fields, sql``)}
    from ${sql.table(accounts)} a join ${sql.table(users.qualified)} h on ${sql.ref(`h.${users.idColumn}`)} = a.id)`;
}

/** What a check of your table found: the SQL type of its id column, for the columns of Portcullis's tables that point at it. */
export interface HostIdColumn {
  sqlType: string;
}

/**
 * Reads your table's id column from the catalogue: its SQL type (MySQL: with its character set
 * and collation, which a foreign key must match), and checks it holds what `users.id.type` says,
 * and that every other column Portcullis does not write may be left out of an INSERT (it is
 * nullable, has a default, or is generated).
 *
 * @throws {Error} naming your table when it or its id column is missing, when the id's type is
 * not the one configured, and naming each NOT NULL column without a default.
 */
export async function checkUsersTable(db: Kysely<AnyDatabase>, dialect: SqlDialect, users: UsersTable): Promise<HostIdColumn> {
  const columns = await hostColumns(db, dialect, users);
  const name = users.qualified;
  if (columns.length === 0) {
    throw new Error(`@portcullis/kysely: the users table ${name} (the users option) does not exist, or cannot be read`);
  }
  const id = columns.find((column) => column.name === users.idColumn);
  if (id === undefined)
    throw new Error(`@portcullis/kysely: the users table ${name} has no column ${users.idColumn} (users.id.column)`);
  const kind = /int|serial/i.test(id.type)
    ? "integer"
    : /uuid/i.test(id.type)
      ? "uuid"
      : /char|text/i.test(id.type)
        ? "text"
        : null;
  const fits = kind === users.idType || (users.idType === "uuid" && kind === "text");
  if (!fits) {
    throw new Error(
      `@portcullis/kysely: the users table ${name}'s ${users.idColumn} is ${id.type}, which does not hold users.id.type "${users.idType}"`,
    );
  }
  const written = new Set(
    [users.email, users.username, users.generated === "portcullis" ? users.idColumn : null].filter(
      (column): column is string => column !== null,
    ),
  );
  for (const column of written) {
    if (!columns.some((held) => held.name === column)) {
      throw new Error(`@portcullis/kysely: the users table ${name} has no column ${column} (named in the users option)`);
    }
  }
  for (const column of [users.passwordHash].filter((column): column is string => column !== null)) {
    if (!columns.some((held) => held.name === column)) {
      throw new Error(`@portcullis/kysely: the users table ${name} has no column ${column} (users.columns.passwordHash)`);
    }
  }
  const unwritable = columns.filter((column) => column.required && !written.has(column.name)).map((column) => column.name);
  if (unwritable.length > 0) {
    throw new Error(
      `@portcullis/kysely: the users table ${name} has NOT NULL columns without a default that Portcullis does not write: ${unwritable.join(", ")}; give each a default (or let it be null), or map it in the users option if it is the email or username (docs/existing-users-table.md)`,
    );
  }
  return { sqlType: id.sqlType };
}

/** A column of your table: its name, its type as shown, its type as DDL, and whether an INSERT must name it. */
interface HostColumn {
  name: string;
  type: string;
  sqlType: string;
  required: boolean;
}

async function hostColumns(db: Kysely<AnyDatabase>, dialect: SqlDialect, users: UsersTable): Promise<HostColumn[]> {
  if (dialect === "mysql") {
    const { rows } = await sql<Record<string, string | null>>`select column_name as name, column_type as type,
        character_set_name as charset, collation_name as collation, is_nullable as nullable, column_default as dflt, extra
      from information_schema.columns
      where table_schema = ${users.schema === null ? sql`database()` : users.schema} and table_name = ${users.table}`.execute(db);
    return rows.map((row) => ({
      name: String(row.name),
      type: String(row.type),
      sqlType: `${row.type}${row.charset ? ` character set ${row.charset} collate ${row.collation}` : ""}`,
      required: row.nullable === "NO" && row.dflt === null && !/auto_increment|generated/i.test(String(row.extra ?? "")),
    }));
  }
  const { rows } = await sql<Record<string, string | boolean | null>>`select a.attname as name,
      format_type(a.atttypid, a.atttypmod) as type,
      a.attnotnull and not a.atthasdef and a.attidentity = '' and a.attgenerated = '' as required
    from pg_attribute a
    where a.attrelid = to_regclass(${quotedTable("postgres", users)}) and a.attnum > 0 and not a.attisdropped`.execute(db);
  return rows.map((row) => ({
    name: String(row.name),
    type: String(row.type),
    sqlType: String(row.type),
    required: row.required === true,
  }));
}
