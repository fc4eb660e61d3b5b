/**
 * SQL storage over Kysely: {@link connectStorage} from a URL (embedded PGlite, PostgreSQL,
 * MySQL or MariaDB), {@link kyselyStorage} over a Kysely instance of your own, and the
 * migrations that make its tables ({@link migrate}, or the `portcullis migrate` command).
 *
 * @packageDocumentation
 * @module @portcullis/kysely
 */
export { type ConnectStorageOptions, connectStorage } from "./connect.js";
export { type KyselyStorage, type KyselyStorageOptions, kyselyStorage } from "./kysely-storage.js";
export { checkSchema, latestSchemaVersion, migrate } from "./migrate.js";
export { type PgliteStorageOptions, pgliteStorage } from "./pglite.js";
export type { SqlDialect, Tables } from "./schema.js";
export { isConnectionFailure } from "./unavailable.js";
export { type FieldColumn, fieldColumnsOf, fieldMigrationStatements, migrateUserFields } from "./user-fields.js";
