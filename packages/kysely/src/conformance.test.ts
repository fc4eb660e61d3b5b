// The public storage conformance kit, whole, on every database the SQL storage speaks to:
// embedded PGlite, and this machine's PostgreSQL and MariaDB (each in a scratch schema or database).
import { conformanceUserFields, runStorageConformance } from "@portcullis/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import {
  insertLegacyRefreshToken,
  mariadbScratch,
  mariadbUrl,
  postgresScratch,
  postgresUrl,
  serverMissing,
} from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";
import { migrateUserFields } from "./user-fields.js";

const test = { describe, it, expect };

describe("PGlite", () => {
  let storage: KyselyStorage;
  beforeAll(async () => {
    storage = await pgliteStorage({ dataDir: "memory://", prefix: "auth_", userFields: conformanceUserFields });
  });
  afterAll(async () => {
    await storage.close();
  });
  runStorageConformance({ name: "PGlite", makeStorage: () => storage, test, insertLegacyRefreshToken });
});

for (const [name, url, scratch] of [
  ["PostgreSQL", postgresUrl, postgresScratch],
  ["MariaDB", mariadbUrl, mariadbScratch],
] as const) {
  describeNeedingService(`packages/kysely/src/conformance.test.ts (${name})`, await serverMissing(url))(name, () => {
    let database: Awaited<ReturnType<typeof scratch>>;
    beforeAll(async () => {
      database = await scratch("auth_", conformanceUserFields);
      await migrate(database.storage);
      await migrateUserFields(database.storage, conformanceUserFields);
    });
    afterAll(async () => {
      await database?.drop();
    });
    runStorageConformance({ name, makeStorage: () => database.storage, test, insertLegacyRefreshToken });
  });
}
