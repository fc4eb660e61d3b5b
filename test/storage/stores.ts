/**
 * The stores the storage tests run on: memory storage, embedded PGlite, and this machine's
 * PostgreSQL and MariaDB (each in a scratch schema or database of its own, migrated), so a test
 * file loops over one list.
 */
import { type Storage, memoryStorage } from "@portcullis/core";
import { migrate } from "@portcullis/kysely";
import { everyDatabase, serverMissing } from "../../packages/kysely/src/databases.test-support.js";

/** A store under test: opened once per file, closed at the end. */
export interface Store {
  name: string;
  /** Why the store cannot be reached on this machine, or null. */
  missing: () => Promise<string | null>;
  open(): Promise<{ storage: Storage; close(): Promise<void> }>;
}

/** Memory storage, then each database of `everyDatabase`, migrated to the current schema. */
export const stores: readonly Store[] = [
  { name: "memory storage", missing: async () => null, open: async () => ({ storage: memoryStorage(), close: async () => {} }) },
  ...everyDatabase.map((database) => ({
    name: database.name,
    missing: async () => (database.url === null ? null : serverMissing(database.url)),
    async open() {
      const { storage, drop } = await database.open();
      await migrate(storage);
      return { storage, close: drop };
    },
  })),
];
