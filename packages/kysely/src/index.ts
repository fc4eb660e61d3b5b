/**
 * SQL storage over Kysely: {@link connectStorage} from a URL (embedded PGlite, PostgreSQL,
 * MySQL or MariaDB), {@link kyselyStorage} over a Kysely instance of your own, and the
 * migrations that make its tables ({@link migrate}, or the `portcullis migrate` command); with the
 * `users` option, your own users table holds the users ({@link adoptExistingUsers} adopts its rows).
 *
 * @packageDocumentation
 * @module @portcullis/kysely
 */
export { type AdoptOptions, type AdoptionSummary, adoptExistingUsers } from "./adopt.js";
export { type ConnectStorageOptions, connectStorage } from "./connect.js";
export { type KyselyStorage, type KyselyStorageOptions, kyselyStorage } from "./kysely-storage.js";
export { checkSchema, latestSchemaVersion, migrate } from "./migrate.js";
export { type PgliteStorageOptions, pgliteStorage } from "./pglite.js";
export type { SqlDialect, Tables } from "./schema.js";
export { isConnectionFailure } from "./unavailable.js";
export { type FieldColumn, fieldColumnsOf, fieldMigrationStatements, migrateUserFields } from "./user-fields.js";
export type { UsersTable, UsersTableOptions } from "./users-table.js";
