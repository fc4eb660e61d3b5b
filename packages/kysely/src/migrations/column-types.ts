import type { SqlDialect, Tables } from "../schema.js";
import type { UsersTable } from "../users-table.js";

/**
 * How text compares in MySQL columns: byte for byte, with no padding (a trailing space is a
 * different value), so lookups match exactly (ST-2). MariaDB and MySQL name these differently.
 */
export interface MysqlCollations {
  text: string;
  ascii: string;
}

/** The exact-match collations of the server `version()` names. */
export function mysqlCollationsFor(serverVersion: string): MysqlCollations {
  return /mariadb/i.test(serverVersion)
    ? { text: "utf8mb4_nopad_bin", ascii: "ascii_nopad_bin" }
    : { text: "utf8mb4_0900_bin", ascii: "ascii_bin" };
}

/** Column types by what they hold, per dialect. */
export function columnTypes(dialect: SqlDialect, collations: MysqlCollations | null) {
  const mysql = dialect === "mysql" && collations !== null;
  return {
    /** Ids, hashes and base64url: ASCII. */
    ascii: (length: number) =>
      mysql ? `varchar(${length}) character set ascii collate ${collations.ascii}` : `varchar(${length})`,
    /** Names, emails, subjects: any Unicode. */
    text: (length: number) =>
      mysql ? `varchar(${length}) character set utf8mb4 collate ${collations.text}` : `varchar(${length})`,
    /** JSON and other long text: the directory policy may hold a 256 KiB CA bundle. */
    long: mysql ? `mediumtext character set utf8mb4 collate ${collations.text}` : "text",
    time: "bigint",
    flag: "boolean",
    table: mysql ? ` engine=InnoDB default charset=utf8mb4 collate=${collations.text}` : "",
  };
}

/**
 * Your users table, as the migrations build Portcullis's tables against it (the `users` option):
 * the `accounts` table's id is your id's SQL type and a foreign key to it, every `user_id` column
 * takes that type, and the columns of yours Portcullis reads are left out of its own table.
 */
export interface UsersSchema {
  table: UsersTable;
  /** Your id column's SQL type, as the catalogue gives it (MySQL: with its character set and collation). */
  idSqlType: string;
}

/** One version of the schema: the statements that make it from the one before. */
export interface Migration {
  version: number;
  /**
   * The tables it creates beside existing ones, and what they hold: a service may keep a table of
   * that name, which the runner looks for before the migration runs. Absent for the first
   * migration (checked as a whole) and for those that only change tables.
   */
  creates?: { what: string; tables: (t: Tables) => string[] };
  statements(dialect: SqlDialect, t: Tables, collations: MysqlCollations | null, users: UsersSchema | null): string[];
}

/** A user's id column: Portcullis's own text, or your table's id's type (the users option). */
export function userIdType(c: ReturnType<typeof columnTypes>, users: UsersSchema | null): string {
  return users === null ? c.ascii(255) : users.idSqlType;
}
