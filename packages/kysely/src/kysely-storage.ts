import type { Storage, UserFieldDefinitions } from "@portcullis/core";
import type { Kysely } from "kysely";
import { assertSchemaCurrent, schemaProblem } from "./migrations.js";
import type { AnyDatabase, SqlDialect, Tables } from "./schema.js";
import { tablesWithPrefix } from "./schema.js";
import { apiKeyStore } from "./stores/api-keys.js";
import { challengeStore } from "./stores/challenges.js";
import { type StoreContext, storeContext } from "./stores/context.js";
import { counterStore } from "./stores/counters.js";
import { identityStore } from "./stores/identities.js";
import { organizationStore } from "./stores/organizations.js";
import { passkeyStore } from "./stores/passkeys.js";
import { recoveryCodeStore } from "./stores/recovery-codes.js";
import { serviceAccountStore } from "./stores/service-accounts.js";
import { sessionStore } from "./stores/sessions.js";
import { settingsStore } from "./stores/settings.js";
import { totpStore } from "./stores/totp.js";
import { userStore } from "./stores/users.js";
import { type SchemaGuard, withUnavailableAsAuthError } from "./unavailable.js";
import { type FieldColumn, fieldColumnsOf, fieldColumnsProblem } from "./user-fields.js";
import { type UsersTable, type UsersTableOptions, checkUsersTable, usersTableOf } from "./users-table.js";

/** Options of {@link kyselyStorage}. */
export interface KyselyStorageOptions {
  /** Your Kysely instance. Its pool is yours: see docs/storage.md for the error handlers `pg` needs. */
  // biome-ignore lint/suspicious/noExplicitAny: any database type; the tables are named at run time.
  db: Kysely<any>;
  /** `"postgres"` (also PGlite) or `"mysql"` (MariaDB, MySQL). */
  dialect: SqlDialect;
  /** Put before every table name, so the tables live beside yours: `auth_` gives `auth_users`. */
  prefix?: string;
  /**
   * The additional user fields, the same declaration as `createAuth`'s `user.fields`: each is a
   * column of the users table (its name in snake case), added by `portcullis fields` or
   * {@link migrateUserFields}. A column missing is an error before the storage's first use that
   * says how to add it.
   */
  userFields?: UserFieldDefinitions;
  /**
   * Your own users table, whose rows are Portcullis's users (docs/existing-users-table.md):
   * Portcullis reads and writes only the columns it names, and keeps its own data about each
   * user in `<prefix>accounts`, keyed by your id. Absent: Portcullis's own `<prefix>users` table.
   */
  users?: UsersTableOptions;
}

/** A {@link Storage} over SQL, with what `migrate` and `close` need. */
export interface KyselyStorage extends Storage {
  // biome-ignore lint/suspicious/noExplicitAny: see KyselyStorageOptions.db.
  readonly db: Kysely<any>;
  readonly dialect: SqlDialect;
  readonly tables: Tables;
  /** Your users table (the `users` option), checked; null when Portcullis keeps its own. */
  readonly usersTable: UsersTable | null;
  /** Ends the Kysely instance (and its pool). */
  close(): Promise<void>;
}

/**
 * Storage over your Kysely instance: PostgreSQL (`pg`), PGlite, or MySQL/MariaDB (`mysql2`).
 * Run {@link migrate} first (or `npx portcullis migrate`); the first operation checks the schema
 * version and says what to run when it is older or newer than this code. Every single-use and
 * counting operation is one conditional statement (ST-1); only parameterised SQL is sent. A
 * connection that fails (the database down, a connection cut) is thrown as `storageUnavailable`,
 * which a request answers with 50300.
 *
 * @example
 * ```ts
 * const storage = kyselyStorage({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), dialect: "postgres" });
 * await migrate(storage);
 * const auth = createAuth({ storage, ... });
 * ```
 */
export function kyselyStorage(options: KyselyStorageOptions): KyselyStorage {
  const { dialect } = options;
  if (dialect !== "postgres" && dialect !== "mysql") {
    throw new TypeError(`@portcullis/kysely: dialect must be "postgres" or "mysql"; got ${JSON.stringify(dialect)}`);
  }
  const db = options.db as Kysely<AnyDatabase>;
  const usersTable = usersTableOf(options.users, dialect);
  const t = tablesWithPrefix(options.prefix, usersTable !== null);
  const fieldColumns = fieldColumnsOf(options.userFields);
  const schema = schemaGuard(db, dialect, t, fieldColumns, usersTable);
  const stores = storesOver(storeContext(db, dialect, t, fieldColumns, usersTable));
  const storage = Object.fromEntries(
    Object.entries(stores).map(([name, store]) => [name, withUnavailableAsAuthError(store, schema)]),
  ) as unknown as Storage;
  return { ...storage, db, dialect, tables: t, usersTable, close: () => db.destroy() };
}

/**
 * The schema check of one storage: made before its first operation and kept once it passed; made
 * again when a statement finds a table missing (the tables dropped, or the database replaced,
 * since), so that request's error says to run migrate rather than "relation does not exist".
 * With your users table, it is checked too: a NOT NULL column without a default that Portcullis
 * does not write fails here, naming the column, before any sign-up meets it.
 */
function schemaGuard(
  db: Kysely<AnyDatabase>,
  dialect: SqlDialect,
  t: Tables,
  fieldColumns: readonly FieldColumn[],
  usersTable: UsersTable | null,
): SchemaGuard {
  let schemaChecked: Promise<void> | null = null;
  const check = async () => {
    await assertSchemaCurrent(db, dialect, t);
    const problem = await fieldColumnsProblem(db, dialect, t, fieldColumns);
    if (problem !== null) throw new Error(problem);
    if (usersTable !== null) await checkUsersTable(db, dialect, usersTable);
  };
  const ready = () => {
    schemaChecked ??= check().catch((error: unknown) => {
      schemaChecked = null;
      throw error;
    });
    return schemaChecked;
  };
  return {
    ready,
    async missingTable(cause) {
      schemaChecked = null;
      const problem = await schemaProblem(db, dialect, t);
      return new Error(
        problem ??
          `@portcullis/kysely: a Portcullis table is missing though ${t.schema} says the schema is current (${(cause as Error).message}); restore the table, or the database, from a backup`,
        { cause },
      );
    },
  };
}

function storesOver(context: StoreContext): Storage {
  return {
    users: userStore(context),
    totp: totpStore(context),
    recoveryCodes: recoveryCodeStore(context),
    sessions: sessionStore(context),
    challenges: challengeStore(context),
    counters: counterStore(context),
    passkeys: passkeyStore(context),
    identities: identityStore(context),
    settings: settingsStore(context),
    organizations: organizationStore(context),
    apiKeys: apiKeyStore(context),
    serviceAccounts: serviceAccountStore(context),
  };
}
