import type { KyselyStorage } from "./kysely-storage.js";
import { assertSchemaCurrent, latestSchemaVersion, migrateSchema } from "./migrations.js";

/**
 * Brings the database schema of a storage to the version this code needs, applying each missing
 * migration once, under a lock (two processes migrating at once are safe). Never migrates down:
 * a database newer than this code throws, saying to upgrade. Returns the versions before and after.
 * With the storage's `users` option, your table is checked and Portcullis's tables are built
 * against it (docs/existing-users-table.md); your table itself is never altered.
 *
 * @example
 * ```ts
 * const storage = kyselyStorage({ db, dialect: "postgres" });
 * await migrate(storage); // { from: 0, to: 1 } the first time, { from: 1, to: 1 } after
 * ```
 */
export async function migrate(storage: KyselyStorage): Promise<{ from: number; to: number }> {
  return migrateSchema(storage.db, storage.dialect, storage.tables, Date.now(), undefined, storage.usersTable);
}

/**
 * Checks at startup that the database schema is the version this code needs; every storage does
 * it before its first operation too, so this only brings the answer forward.
 *
 * @throws {Error} saying what to run: `migrate` (or `npx portcullis migrate`) for an older database, an upgrade for a newer one.
 */
export async function checkSchema(storage: KyselyStorage): Promise<void> {
  await assertSchemaCurrent(storage.db, storage.dialect, storage.tables);
}

export { latestSchemaVersion };
