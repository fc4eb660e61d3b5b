import { type Kysely, sql } from "kysely";
import { initialTables } from "./migrations/001-initial-tables.js";
import { sessionUse } from "./migrations/002-session-use.js";
import { userEmails } from "./migrations/003-user-emails.js";
import { authTime } from "./migrations/004-auth-time.js";
import { refreshInSession } from "./migrations/005-refresh-in-session.js";
import { organizationSchema } from "./migrations/006-organizations.js";
import { apiKeySchema } from "./migrations/007-api-keys.js";
import { serviceAccountSchema } from "./migrations/008-service-accounts.js";
import { passkeyUserHandle } from "./migrations/009-passkey-user-handle.js";
import { type Migration, mysqlCollationsFor } from "./migrations/column-types.js";
import type { AnyDatabase, SqlDialect, Tables } from "./schema.js";
import { existingTables, migrateCommands, noSchemaMessage, tablesTakenMessage } from "./schema-hints.js";
import { type UsersTable, checkUsersTable } from "./users-table.js";

export { type MysqlCollations, mysqlCollationsFor } from "./migrations/column-types.js";

/** Every migration, in order: each in its own file under `migrations/`, named by its version. */
const migrations: readonly Migration[] = [
  initialTables,
  sessionUse,
  userEmails,
  authTime,
  refreshInSession,
  organizationSchema,
  apiKeySchema,
  serviceAccountSchema,
  passkeyUserHandle,
];

/** The schema version this code reads and writes. */
export const latestSchemaVersion = migrations.at(-1)?.version ?? 0;

/** The version a database's schema is at: 0 when it has none of ours. */
export async function schemaVersionOf(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<number> {
  // Asked of the catalogue, not by a failing select: inside a PostgreSQL transaction an error would end it.
  const { rows } = await sql<{ present: number | string | bigint }>`select count(*) as present from information_schema.tables
    where table_name = ${t.schema} and table_schema = ${sql.raw(dialect === "mysql" ? "database()" : "current_schema()")}`.execute(
    db,
  );
  if (Number(rows[0]?.present ?? 0) === 0) return 0;
  const row = await db.selectFrom(t.schema).select("version").where("id", "=", 1).executeTakeFirst();
  return row ? Number(row.version) : 0;
}

/**
 * Brings the schema to {@link latestSchemaVersion}, applying each missing migration in order,
 * under a lock so that two processes migrating at once apply each step once. PostgreSQL runs each
 * step in a transaction; MySQL commits DDL as it goes, so a step cut off half-way leaves what it
 * added and fails when run again: docs/storage.md ("Migrations") says, step by step, what to drop
 * before running it again. Returns the versions before and after. `to` stops at an older version: the
 * migration tests build a database as an older release made it.
 *
 * With `users` (the storage's `users` option), your table is checked first (see `checkUsersTable`)
 * and Portcullis's tables are built against it: `<prefix>accounts` keyed by your id.
 *
 * @throws {Error} when the database is newer than this code: it never migrates down; and when a
 * table the first migration would create exists without the schema-version table beside it
 * (another application's `users`): the message names the prefix option of the CLI and of the
 * storage; and when your users table is missing or cannot take Portcullis's inserts.
 */
export async function migrateSchema(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  t: Tables,
  now: number,
  to = latestSchemaVersion,
  users: UsersTable | null = null,
): Promise<{ from: number; to: number }> {
  return withMigrationLock(db, dialect, t, async (locked) => {
    const from = await schemaVersionOf(locked, dialect, t);
    if (from > latestSchemaVersion) throw newerThanCode(from);
    const usersSchema =
      users === null ? null : { table: users, idSqlType: (await checkUsersTable(locked, dialect, users)).sqlType };
    if (from === 0) await startSchema(locked, dialect, t);
    else await assertNewTablesFree(locked, dialect, t, from, to);
    const collations = dialect === "mysql" ? mysqlCollationsFor(await serverVersion(locked)) : null;
    for (const migration of migrations.filter((step) => step.version > from && step.version <= to)) {
      for (const statement of migration.statements(dialect, t, collations, usersSchema)) await sql.raw(statement).execute(locked);
      await locked.updateTable(t.schema).set({ version: migration.version, updated_at: now }).where("id", "=", 1).execute();
    }
    return { from, to: Math.max(from, to) };
  });
}

async function serverVersion(db: Kysely<AnyDatabase>): Promise<string> {
  const { rows } = await sql<{ version: string }>`select version() as version`.execute(db);
  return String(rows[0]?.version ?? "");
}

/**
 * Creates the schema-version table of a database at version 0, after checking that none of the
 * tables to come is there already. When the schema-version table itself is there (at version 0:
 * a first migration on MySQL cut off half-way, whose DDL committed as it went) the run goes on as
 * docs/storage.md says.
 */
async function startSchema(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<void> {
  const present = await existingTables(db, dialect, Object.values(t));
  if (present.includes(t.schema)) return;
  if (present.length > 0) throw new Error(await tablesTakenMessage(db, dialect, t, present));
  await createSchemaTable(db, dialect, t);
}

/**
 * Checks, before a database of an earlier version takes the migrations that create tables beside
 * existing ones (their `creates`: organizations at 6, API keys at 7, service accounts at 8), that none of those
 * tables is there already: a service may keep an `organizations`, `api_keys` or `service_accounts`
 * table of its own beside Portcullis's unprefixed ones.
 *
 * @throws {Error} naming the migration, the tables, and the ways out, with nothing changed.
 */
async function assertNewTablesFree(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  t: Tables,
  from: number,
  to: number,
): Promise<void> {
  for (const { version, creates: created } of migrations) {
    if (created === undefined || version <= from || version > to) continue;
    const taken = await existingTables(db, dialect, created.tables(t));
    if (taken.length === 0) continue;
    const tables = taken.length === 1 ? `the table ${taken[0]} already exists` : `the tables ${taken.join(", ")} already exist`;
    throw new Error(
      `@portcullis/kysely: migration ${version} (${created.what}) cannot create its tables: ${tables} and ${taken.length === 1 ? "is" : "are"} not Portcullis's. ` +
        `Rename ${taken.length === 1 ? "it" : "them"}, or move Portcullis's tables under a prefix of their own (docs/storage.md, "Migrations"), then run migrate again; nothing was changed, the schema is still at version ${from}`,
    );
  }
}

async function createSchemaTable(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<void> {
  const table = dialect === "mysql" ? " engine=InnoDB" : "";
  await sql
    .raw(`create table ${t.schema} (id integer primary key, version integer not null, updated_at bigint not null)${table}`)
    .execute(db);
  await db.insertInto(t.schema).values({ id: 1, version: 0, updated_at: 0 }).execute();
}

/** Runs `migrate` holding a database-wide lock named after the schema table. */
async function withMigrationLock<T>(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  t: Tables,
  migrate: (db: Kysely<AnyDatabase>) => Promise<T>,
): Promise<T> {
  if (dialect === "postgres") {
    return db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${t.schema}))`.execute(trx);
      return migrate(trx);
    });
  }
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ locked: number | null }>`select get_lock(${t.schema}, 60) as locked`.execute(connection);
    if (Number(rows[0]?.locked) !== 1)
      throw new Error(`@portcullis/kysely: another migration of ${t.schema} held the lock for 60 s`);
    try {
      return await migrate(connection);
    } finally {
      await sql`select release_lock(${t.schema})`.execute(connection);
    }
  });
}

function newerThanCode(version: number): Error {
  return new Error(
    `@portcullis/kysely: the database schema is at version ${version}, newer than this code (${latestSchemaVersion}); upgrade @portcullis/kysely, it never migrates down`,
  );
}

/**
 * What is wrong with the database schema for this code, as a message that says what to run; null
 * when it is the version this code was written for.
 */
export async function schemaProblem(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<string | null> {
  const version = await schemaVersionOf(db, dialect, t);
  if (version > latestSchemaVersion) return newerThanCode(version).message;
  if (version === 0 && (await existingTables(db, dialect, [t.schema])).length === 0) return noSchemaMessage(db, dialect, t);
  if (version < latestSchemaVersion) {
    return `@portcullis/kysely: the database schema is at version ${version}, older than this code (${latestSchemaVersion}); run ${migrateCommands(t)}`;
  }
  return null;
}

/**
 * Checks that the database schema is the one this code was written for.
 *
 * @throws {Error} saying what to run: `migrate` (with the command and its `--prefix`) for a
 * database without the tables or older, naming the prefix the tables have when they are under
 * another one; an upgrade for a newer database.
 */
export async function assertSchemaCurrent(db: Kysely<AnyDatabase>, dialect: SqlDialect, t: Tables): Promise<void> {
  const problem = await schemaProblem(db, dialect, t);
  if (problem !== null) throw new Error(problem);
}
