import { type Kysely, sql } from "kysely";
import type { AnyDatabase, SqlDialect, Tables } from "./schema.js";
import { existingTables, migrateCommands, noSchemaMessage, tablesTakenMessage } from "./schema-hints.js";
import { type UsersTable, checkUsersTable, quoted, quotedTable } from "./users-table.js";

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
function columnTypes(dialect: SqlDialect, collations: MysqlCollations | null) {
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
interface UsersSchema {
  table: UsersTable;
  /** Your id column's SQL type, as the catalogue gives it (MySQL: with its character set and collation). */
  idSqlType: string;
}

/** One version of the schema: the statements that make it from the one before. */
interface Migration {
  version: number;
  statements(dialect: SqlDialect, t: Tables, collations: MysqlCollations | null, users: UsersSchema | null): string[];
}

const migrations: readonly Migration[] = [
  {
    version: 1,
    statements(dialect, t, collations, users) {
      const c = columnTypes(dialect, collations);
      const table = c.table;
      // A user's id: Portcullis's own text, or your table's id's type, pointing at your row.
      const userId = users === null ? c.ascii(255) : users.idSqlType;
      const yours =
        users === null
          ? ""
          : `,
          constraint ${t.users}_yours foreign key (id) references ${quotedTable(dialect, users.table)} (${quoted(dialect, users.table.idColumn)})`;
      return [
        `create table ${t.users} (
          id ${userId} primary key,${
            users?.table.username
              ? ""
              : `
          username ${c.text(512)} not null,`
          }
          username_key ${c.text(512)} not null,
          password_hash ${c.ascii(1024)},
          roles ${c.long} not null,
          disabled ${c.flag} not null,
          token_version bigint not null,
          source ${c.ascii(16)} not null,
          created_at ${c.time} not null,
          updated_at ${c.time} not null,
          constraint ${t.users}_username_key unique (username_key)${yours}
        )${table}`,
        `create index ${t.users}_source on ${t.users} (source)`,
        `create table ${t.totp} (
          user_id ${userId} primary key references ${t.users} (id),
          secret_key_id ${c.ascii(255)} not null,
          secret_sealed ${c.ascii(1024)} not null,
          enabled ${c.flag} not null,
          last_used_step bigint not null,
          created_at ${c.time} not null
        )${table}`,
        `create table ${t.recoveryCodes} (
          user_id ${userId} not null references ${t.users} (id),
          hash ${c.ascii(255)} not null,
          created_at ${c.time} not null,
          primary key (user_id, hash)
        )${table}`,
        `create table ${t.sessions} (
          id ${c.ascii(255)} primary key,
          user_id ${userId} not null references ${t.users} (id),
          token_version bigint not null,
          amr ${c.long} not null,
          created_at ${c.time} not null,
          expires_at ${c.time} not null,
          revoked_at ${c.time}
        )${table}`,
        `create index ${t.sessions}_user on ${t.sessions} (user_id)`,
        `create index ${t.sessions}_expires on ${t.sessions} (expires_at)`,
        `create table ${t.refreshTokens} (
          hash ${c.ascii(255)} primary key,
          session_id ${c.ascii(255)} not null,
          user_id ${userId} not null,
          created_at ${c.time} not null,
          expires_at ${c.time} not null,
          spent_at ${c.time}
        )${table}`,
        `create index ${t.refreshTokens}_session on ${t.refreshTokens} (session_id)`,
        `create index ${t.refreshTokens}_expires on ${t.refreshTokens} (expires_at)`,
        `create table ${t.challenges} (
          id ${c.ascii(255)} primary key,
          kind ${c.ascii(32)} not null,
          user_id ${userId},
          data ${c.long} not null,
          attempts integer not null,
          created_at ${c.time} not null,
          expires_at ${c.time} not null
        )${table}`,
        `create index ${t.challenges}_expires on ${t.challenges} (expires_at)`,
        `create table ${t.counters} (
          counter_key ${c.text(512)} primary key,
          count integer not null,
          reset_at ${c.time} not null
        )${table}`,
        `create index ${t.counters}_reset on ${t.counters} (reset_at)`,
        `create table ${t.passkeys} (
          id ${c.ascii(1400)} primary key,
          user_id ${userId} not null references ${t.users} (id),
          public_key ${c.long} not null,
          counter bigint not null,
          transports ${c.long} not null,
          label ${c.text(512)} not null,
          backup_eligible ${c.flag} not null,
          backup_state ${c.flag} not null,
          created_at ${c.time} not null,
          last_used_at ${c.time}
        )${table}`,
        `create index ${t.passkeys}_user on ${t.passkeys} (user_id)`,
        `create table ${t.identities} (
          provider ${c.text(64)} not null,
          subject ${c.text(512)} not null,
          user_id ${userId} not null,
          email ${c.text(512)},
          email_verified ${c.flag} not null,
          created_at ${c.time} not null,
          last_used_at ${c.time},
          primary key (provider, subject)
        )${table}`,
        `create index ${t.identities}_user on ${t.identities} (user_id)`,
        `create index ${t.identities}_email on ${t.identities} (email)`,
        `create table ${t.settings} (
          setting_key ${c.text(255)} primary key,
          value ${c.long} not null,
          updated_at ${c.time} not null
        )${table}`,
      ];
    },
  },
  {
    // Issue 21: where and when each session was last used, and the users listed in key order.
    version: 2,
    statements(dialect, t, collations) {
      const c = columnTypes(dialect, collations);
      if (dialect === "mysql") {
        return [
          `alter table ${t.sessions} add column last_used_at ${c.time}, add column user_agent ${c.text(512)}, add column address ${c.text(128)}`,
          `update ${t.sessions} set last_used_at = created_at`,
          `alter table ${t.sessions} modify last_used_at ${c.time} not null`,
        ];
      }
      return [
        `alter table ${t.sessions} add column last_used_at ${c.time}, add column user_agent ${c.text(512)}, add column address ${c.text(128)}`,
        `update ${t.sessions} set last_used_at = created_at`,
        `alter table ${t.sessions} alter column last_used_at set not null`,
        // Byte order, which is code point order: the unique index on the key then answers the
        // listing's range (key >= prefix and key < its upper bound) whatever the database's locale.
        `alter table ${t.users} alter column username_key type ${c.text(512)} collate "C"`,
      ];
    },
  },
  {
    // Issue 24: an address on each account, and the key of a verified one, unique (EV-1). Null
    // keys never collide, so unverified addresses repeat. Existing users: no address, not verified.
    version: 3,
    statements(dialect, t, collations, users) {
      const c = columnTypes(dialect, collations);
      const key = dialect === "mysql" ? c.text(512) : `${c.text(512)} collate "C"`;
      // With the users option's email column, the address is yours: Portcullis keeps whether it is verified.
      const email = users?.table.email ? "" : `add column email ${c.text(512)}, `;
      return [
        `alter table ${t.users} ${email}add column email_verified ${c.flag} not null default false, add column verified_email_key ${key}`,
        `alter table ${t.users} add constraint ${t.users}_verified_email_key unique (verified_email_key)`,
      ];
    },
  },
  {
    // Issue 37: when each session's methods were proven (STUP-1). A session of before it was
    // proven, as far as anyone knows, when it began.
    version: 4,
    statements(dialect, t, collations) {
      const c = columnTypes(dialect, collations);
      return [
        `alter table ${t.sessions} add column auth_time ${c.time}`,
        `update ${t.sessions} set auth_time = created_at`,
        dialect === "mysql"
          ? `alter table ${t.sessions} modify auth_time ${c.time} not null`
          : `alter table ${t.sessions} alter column auth_time set not null`,
      ];
    },
  },
  {
    // Issue 39 item 1: a refresh writes one row. Each session holds the hash of the one refresh
    // token it accepts now, its generation and its idle expiry; a refresh is one conditional UPDATE
    // of the session. Each session takes its newest unspent token of refresh_tokens as its current
    // one (generation 0), so a token handed out before the upgrade refreshes once more; a session
    // with none accepts none (its idle expiry is its start, already past). refresh_tokens stays,
    // read only (a token spent before the upgrade is still reuse: RT-2) until the sweep has
    // deleted its rows as they expire.
    version: 5,
    statements(dialect, t, collations) {
      const c = columnTypes(dialect, collations);
      const newest = `select r.hash from ${t.refreshTokens} r where r.session_id = ${t.sessions}.id and r.spent_at is null
          order by r.created_at desc, r.hash desc limit 1`;
      return [
        `alter table ${t.sessions} add column refresh_hash ${c.ascii(255)}, add column refresh_generation bigint not null default 0, add column refresh_expires_at ${c.time}`,
        `update ${t.sessions} set refresh_hash = (${newest})`,
        `update ${t.sessions} set refresh_expires_at = coalesce(
          (select r.expires_at from ${t.refreshTokens} r where r.hash = ${t.sessions}.refresh_hash), created_at)`,
        dialect === "mysql"
          ? `alter table ${t.sessions} modify refresh_expires_at ${c.time} not null`
          : `alter table ${t.sessions} alter column refresh_expires_at set not null`,
      ];
    },
  },
  {
    // Issue 40: organizations, their members (roles of the organization's own), invitations by
    // email and the domains they claim; each session's active organization (none for the sessions
    // of before). A domain's verified_domain is the domain while it is verified and null otherwise:
    // its unique key keeps a domain verified for one organization at most (OR-11), null keys never
    // colliding. A member's user id takes the type of the users' ids (your table's, with the users option).
    version: 6,
    statements(dialect, t, collations, users) {
      const c = columnTypes(dialect, collations);
      const table = c.table;
      const userId = users === null ? c.ascii(255) : users.idSqlType;
      const orgId = c.ascii(255);
      return [
        `create table ${t.organizations} (
          id ${orgId} primary key,
          slug ${c.ascii(64)} not null,
          name ${c.text(512)} not null,
          rules ${c.long} not null,
          created_at ${c.time} not null,
          updated_at ${c.time} not null,
          constraint ${t.organizations}_slug unique (slug)
        )${table}`,
        `create table ${t.organizationMembers} (
          org_id ${orgId} not null references ${t.organizations} (id),
          user_id ${userId} not null references ${t.users} (id),
          roles ${c.long} not null,
          created_at ${c.time} not null,
          last_active_at ${c.time},
          primary key (org_id, user_id)
        )${table}`,
        `create index ${t.organizationMembers}_user on ${t.organizationMembers} (user_id)`,
        `create table ${t.organizationInvitations} (
          id ${c.ascii(255)} primary key,
          org_id ${orgId} not null references ${t.organizations} (id),
          email ${c.text(512)} not null,
          roles ${c.long} not null,
          token_hash ${c.ascii(255)} not null,
          invited_by ${userId} not null,
          created_at ${c.time} not null,
          expires_at ${c.time} not null,
          accepted_at ${c.time},
          accepted_by ${userId},
          revoked_at ${c.time},
          constraint ${t.organizationInvitations}_token_hash unique (token_hash)
        )${table}`,
        `create index ${t.organizationInvitations}_org_email on ${t.organizationInvitations} (org_id, email)`,
        `create table ${t.organizationDomains} (
          org_id ${orgId} not null references ${t.organizations} (id),
          domain ${c.ascii(255)} not null,
          verification_value ${c.text(512)} not null,
          created_at ${c.time} not null,
          verified_at ${c.time},
          verified_domain ${c.ascii(255)},
          primary key (org_id, domain),
          constraint ${t.organizationDomains}_verified unique (verified_domain)
        )${table}`,
        `alter table ${t.sessions} add column active_org_id ${orgId}`,
        `create index ${t.sessions}_active_org on ${t.sessions} (active_org_id)`,
      ];
    },
  },
  {
    // Issue 41: API keys, found by the SHA-256 of the whole key (unique) and listed by their user.
    // A key's user id takes the type of the users' ids (your table's, with the users option), a
    // foreign key like a passkey's; its organization is not one, so deleting an organization never
    // fails on the keys that name it.
    version: 7,
    statements(dialect, t, collations, users) {
      const c = columnTypes(dialect, collations);
      const userId = users === null ? c.ascii(255) : users.idSqlType;
      return [
        `create table ${t.apiKeys} (
          id ${c.ascii(255)} primary key,
          user_id ${userId} not null references ${t.users} (id),
          hash ${c.ascii(255)} not null,
          start ${c.text(64)} not null,
          name ${c.text(512)} not null,
          scopes ${c.long} not null,
          token_version bigint not null,
          org_id ${c.ascii(255)},
          created_at ${c.time} not null,
          expires_at ${c.time} not null,
          last_used_at ${c.time},
          revoked_at ${c.time},
          constraint ${t.apiKeys}_hash unique (hash)
        )${c.table}`,
        `create index ${t.apiKeys}_user on ${t.apiKeys} (user_id)`,
      ];
    },
  },
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

/** The tables a migration after the first creates, by version, and what they hold: a service may keep a table of that name. */
const tablesCreatedBy: Readonly<Record<number, { what: string; tables: (t: Tables) => string[] }>> = {
  6: {
    what: "organizations",
    tables: (t) => [t.organizations, t.organizationMembers, t.organizationInvitations, t.organizationDomains],
  },
  7: { what: "API keys", tables: (t) => [t.apiKeys] },
};

/**
 * Checks, before a database of an earlier version takes migration 6 or 7, that none of the tables
 * they create is there already: a service may keep an `organizations` or `api_keys` table of its
 * own beside Portcullis's unprefixed ones.
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
  for (const [version, created] of Object.entries(tablesCreatedBy)) {
    if (Number(version) <= from || Number(version) > to) continue;
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
