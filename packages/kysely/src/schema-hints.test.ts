// Issue 23 items 1 and 4: a storage whose tables are missing, or under another prefix, and a
// migration that meets another application's tables, say what to run, on PGlite, PostgreSQL and
// MariaDB; the first request that fails for it hands that message to onInternalError.
import { handleRequest } from "@portcullis/core";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTestAuth, testPassword } from "../../../test/fixtures/auth.js";
import { jsonRequest } from "../../../test/fixtures/http-request.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { everyDatabase, scratchName, serverMissing } from "./databases.test-support.js";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { latestSchemaVersion, migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";
import type { AnyDatabase } from "./schema.js";
import { existingTables, isMissingTable } from "./schema-hints.js";

/** How the messages name where the tables were looked for: `the schema "…"` or `the database "…"`. */
async function whereOf(storage: KyselyStorage): Promise<string> {
  const mysql = storage.dialect === "mysql";
  const { rows } = await sql<{ name: string }>`select ${sql.raw(mysql ? "database()" : "current_schema()")} as name`.execute(
    storage.db as Kysely<AnyDatabase>,
  );
  return `the ${mysql ? "database" : "schema"} "${rows[0]?.name}"`;
}

/** A second storage over the same database (and pool) as `storage`, under `prefix`; closing `storage` ends both. */
const beside = (storage: KyselyStorage, prefix: string) => kyselyStorage({ db: storage.db, dialect: storage.dialect, prefix });

/** Drops the Portcullis tables of `storage`, those that refer to users first. */
async function dropTables(storage: KyselyStorage, only?: string): Promise<void> {
  const { users, ...rest } = storage.tables;
  for (const table of only === undefined ? [...Object.values(rest), users] : [only]) {
    await storage.db.schema.dropTable(table).ifExists().execute();
  }
}

/**
 * One PGlite database for the file, opened unmigrated (it takes seconds to start), and in it a
 * fresh schema per call, made the connection's search path: PGlite is one connection, and the
 * tests of a file run one after another.
 */
let pglite: Promise<KyselyStorage> | undefined;
const sharedPglite = () => {
  pglite ??= pgliteStorage({ dataDir: "memory://", migrate: false });
  return pglite;
};
beforeAll(async () => {
  await sharedPglite();
});
afterAll(async () => {
  await (await pglite)?.close();
});
async function pgliteScratch(prefix = ""): Promise<{ storage: KyselyStorage; drop(): Promise<void> }> {
  const shared = await sharedPglite();
  const schema = scratchName();
  await sql.raw(`create schema ${schema}`).execute(shared.db);
  await sql.raw(`set search_path to ${schema}`).execute(shared.db);
  return { storage: beside(shared, prefix), drop: async () => {} };
}

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/schema-hints.test.ts (${database.name})`, missing)(
    `what to run, on ${database.name}`,
    () => {
      const dropped: Array<() => Promise<void>> = [];
      afterAll(async () => {
        for (const drop of dropped) await drop();
      });
      const open = async (prefix = "") => {
        const opened = database.url === null ? await pgliteScratch(prefix) : await database.open(prefix);
        dropped.push(opened.drop);
        return opened.storage;
      };

      it("tables under another prefix: the storage says which prefix they have, and how to create its own instead", async () => {
        const storage = await open();
        const where = await whereOf(storage);
        await migrate(beside(storage, "auth_"));
        await expect(storage.users.findById("anyone")).rejects.toThrow(
          `@portcullis/kysely: no Portcullis tables without a prefix in ${where} (there is no table portcullis_schema), but there are Portcullis tables under the prefix "auth_": to use them, give the storage that prefix: \`connectStorage({ url, prefix: "auth_" })\` (kyselyStorage and pgliteStorage take prefix too); to create tables without a prefix instead, run \`await migrate(storage)\` or \`npx portcullis migrate --url <database URL>\``,
        );

        await migrate(storage);
        await expect(beside(storage, "other_").sessions.findSession("any")).rejects.toThrow(
          `@portcullis/kysely: no Portcullis tables under the prefix "other_" in ${where} (there is no table other_portcullis_schema), but there are Portcullis tables without a prefix and under the prefix "auth_": to use them, make the storage without a prefix (leave prefix out of connectStorage, kyselyStorage or pgliteStorage); to create tables under the prefix "other_" instead, run \`await migrate(storage)\` or \`npx portcullis migrate --url <database URL> --prefix other_\``,
        );
      });

      it("migrate meets another application's users and sessions tables: it creates nothing and names the prefix options", async () => {
        const storage = await open();
        const where = await whereOf(storage);
        await sql.raw("create table users (id integer primary key, email varchar(200))").execute(storage.db);
        await sql.raw("create table sessions (id integer primary key)").execute(storage.db);
        const refusal = `@portcullis/kysely: cannot create the Portcullis tables in ${where}: the tables users, sessions already exist there and are not Portcullis's (there is no table portcullis_schema beside them). Give Portcullis's tables a prefix of their own so they live beside them: \`npx portcullis migrate --prefix auth_\` (with your --url or --pglite), or \`migrate(storage)\` on a storage made with that prefix, and the same prefix wherever the service makes its storage: \`connectStorage({ url, prefix: "auth_" })\` (kyselyStorage and pgliteStorage take prefix too)`;
        await expect(migrate(storage)).rejects.toThrow(refusal);
        expect(await existingTables(storage.db, storage.dialect, [storage.tables.schema])).toEqual([]);
        await expect(migrate(storage)).rejects.toThrow(refusal);

        const prefixed = beside(storage, "auth_");
        expect(await migrate(prefixed)).toEqual({ from: 0, to: latestSchemaVersion });
        expect(await prefixed.users.findById("anyone")).toBeNull();
      });

      it("one table of the application's under the prefix asked for: the message says it in the singular and suggests another prefix", async () => {
        const storage = await open("auth_");
        await sql.raw("create table auth_users (id integer primary key)").execute(storage.db);
        await expect(migrate(storage)).rejects.toThrow(
          /the table auth_users already exists there and is not Portcullis's \(there is no table auth_portcullis_schema beside it\)\. Give Portcullis's tables a prefix of their own so they live beside it: `npx portcullis migrate --prefix portcullis_`/,
        );
      });

      it("the tables dropped after the check passed: the next operation says to run migrate, the driver's error its cause", async () => {
        const storage = await open("app_");
        await migrate(storage);
        expect(await storage.users.findById("anyone")).toBeNull();
        await dropTables(storage);
        const error = await storage.users.findById("anyone").catch((caught: unknown) => caught);
        expect((error as Error).message).toBe(
          `@portcullis/kysely: no Portcullis tables under the prefix "app_" in ${await whereOf(storage)} (there is no table app_portcullis_schema); create them first: run \`await migrate(storage)\` or \`npx portcullis migrate --url <database URL> --prefix app_\``,
        );
        expect(isMissingTable((error as Error).cause)).toBe(true);
        await migrate(storage);
        expect(await storage.users.findById("anyone")).toBeNull();
      });

      it("one table dropped while the schema table says current: the operation says so, not to migrate", async () => {
        const storage = await open();
        await migrate(storage);
        expect(await storage.settings.get("anything")).toBeUndefined();
        await dropTables(storage, storage.tables.settings);
        const error = await storage.settings.get("anything").catch((caught: unknown) => caught);
        expect((error as Error).message).toMatch(
          /^@portcullis\/kysely: a Portcullis table is missing though portcullis_schema says the schema is current \(.*settings.*\); restore the table, or the database, from a backup$/,
        );
        expect(isMissingTable((error as Error).cause)).toBe(true);
      });
    },
  );
}

it("issue 23 item 1: the first request on a storage never migrated answers 50000, and onInternalError gets the error that says to run migrate", async () => {
  const { storage } = await pgliteScratch("auth_");
  const reported: Array<{ error: unknown; requestId: string }> = [];
  const { auth } = makeTestAuth({ storage, onInternalError: (error, requestId) => reported.push({ error, requestId }) });
  const response = await handleRequest(
    auth,
    jsonRequest("POST", "/api/v1/auth/login", { username: "alice", password: testPassword }),
  );
  const envelope = JSON.parse(response?.body ?? "{}");
  expect(envelope).toEqual({ code: 50000, message: "Internal error", requestId: expect.any(String) });
  expect(response?.body).not.toMatch(/migrate|portcullis_schema/);
  expect(reported.map((report) => report.requestId)).toEqual([envelope.requestId]);
  expect(reported.map((report) => (report.error as Error).message)).toEqual([
    `@portcullis/kysely: no Portcullis tables under the prefix "auth_" in ${await whereOf(storage)} (there is no table auth_portcullis_schema); create them first: run \`await migrate(storage)\` or \`npx portcullis migrate --url <database URL> --prefix auth_\``,
  ]);
});
