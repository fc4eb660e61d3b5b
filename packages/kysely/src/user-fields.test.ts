import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Storage,
  createAuth,
  createUser,
  field,
  getPublicUser,
  login,
  refresh,
  setUserFields,
  verifyAccessToken,
} from "@portcullis/core";
import { afterAll, describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { main } from "./cli.js";
import { everyDatabase, serverMissing } from "./databases.test-support.js";
import { fields } from "./fields.test-support.js";
import { type KyselyStorage, kyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";
import { tablesWithPrefix } from "./schema.js";
import { fieldColumnsOf, fieldMigrationStatements, migrateUserFields } from "./user-fields.js";

const secrets = { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") };
const password = "correct horse battery staple";

const authOn = (storage: Storage, declared?: typeof fields) =>
  createAuth({ storage, issuer: "https://api.example.com", audience: "example-api", secrets, user: { fields: declared ?? {} } });

describe("field migration statements", () => {
  it("one nullable ADD COLUMN per missing field, its name in snake case, its type from its kind and limits", () => {
    const columns = fieldColumnsOf({ ...fields, companyName: field.string({ maxLength: 5000 }), score: field.number() });
    const tables = tablesWithPrefix("auth_");
    expect(fieldMigrationStatements("postgres", tables, columns, new Set(["company"]))).toEqual([
      'ALTER TABLE "auth_users" ADD COLUMN "plan" varchar(4)',
      'ALTER TABLE "auth_users" ADD COLUMN "seats" bigint',
      'ALTER TABLE "auth_users" ADD COLUMN "beta" boolean',
      'ALTER TABLE "auth_users" ADD COLUMN "tags" text',
      'ALTER TABLE "auth_users" ADD COLUMN "company_name" text',
      'ALTER TABLE "auth_users" ADD COLUMN "score" double precision',
    ]);
    expect(fieldMigrationStatements("mysql", tables, columns, new Set()).slice(0, 1)).toEqual([
      "ALTER TABLE `auth_users` ADD COLUMN `company` varchar(100)",
    ]);
    expect(fieldMigrationStatements("mysql", tables, columns, new Set()).at(-1)).toBe(
      "ALTER TABLE `auth_users` ADD COLUMN `score` double",
    );
  });
});

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/user-fields.test.ts (${database.name})`, missing)(
    `user fields on ${database.name}`,
    () => {
      const dropped: Array<() => Promise<void>> = [];
      afterAll(async () => {
        for (const drop of dropped) await drop();
      });
      const open = async (): Promise<KyselyStorage> => {
        const opened = await database.open("app_");
        dropped.push(opened.drop);
        await migrate(opened.storage);
        return opened.storage;
      };

      it("fields added to a database filled by the previous schema: a clear error before the columns exist, then no row lost, defaults read", async () => {
        const before = await open();
        const old = authOn(before);
        const ids: string[] = [];
        for (const name of ["alice", "bob", "carol"])
          ids.push((await createUser(old, { username: name, password, roles: ["member"] })).id);
        const signedIn = await login(old, { username: "alice", password });
        if (signedIn.status !== "authenticated") throw new Error("alice did not sign in");

        const after = kyselyStorage({ db: before.db, dialect: before.dialect, prefix: "app_", userFields: fields });
        await expect(after.users.findById(ids[0] as string)).rejects.toThrow(
          /the app_users table has no column for the user fields company, plan, seats, beta, tags: run `portcullis fields/,
        );
        expect(await migrateUserFields(after, fields)).toHaveLength(5);
        expect(await migrateUserFields(after, fields)).toEqual([]);

        const auth = authOn(after, fields);
        for (const [index, name] of ["alice", "bob", "carol"].entries()) {
          expect(await getPublicUser(auth, { userId: ids[index] as string })).toMatchObject({
            username: name,
            roles: ["member"],
            company: null,
            plan: "free",
            seats: null,
            beta: false,
            tags: null,
          });
        }
        // The session begun before the migration refreshes, with the defaults in its token.
        const renewed = await refresh(auth, { refreshToken: signedIn.tokens.refreshToken });
        expect((await verifyAccessToken(auth, { token: renewed.accessToken })).user).toMatchObject({ plan: "free" });
        const set = await setUserFields(auth, {
          userId: ids[1] as string,
          fields: { company: "Zoë's \u{1F600}", seats: 3, tags: ["a", "b"], beta: true },
        });
        expect(set.fields).toEqual({ company: "Zoë's \u{1F600}", plan: "free", seats: 3, beta: true, tags: ["a", "b"] });
        // Stored as written: plan was never set, so its column holds null and reads as the default.
        expect((await after.users.findById(ids[1] as string))?.fields).toEqual({ ...set.fields, plan: null });
      });

      it("a changed inToken field reaches the token at the refresh, read by the rotation's own statement", async () => {
        const storage = kyselyStorage({
          db: (await open()).db,
          dialect: database.name === "MariaDB" ? "mysql" : "postgres",
          prefix: "app_",
          userFields: fields,
        });
        await migrateUserFields(storage, fields);
        const auth = authOn(storage, fields);
        const { id } = await createUser(auth, { username: "dave", password, fields: { plan: "free" } });
        const signedIn = await login(auth, { username: "dave", password });
        if (signedIn.status !== "authenticated") throw new Error("dave did not sign in");
        await setUserFields(auth, { userId: id, fields: { plan: "pro" } });
        const renewed = await refresh(auth, { refreshToken: signedIn.tokens.refreshToken });
        expect(renewed.user).toMatchObject({ plan: "pro" });
        expect((await verifyAccessToken(auth, { token: renewed.accessToken })).user).toMatchObject({ plan: "pro" });
      });
    },
  );
}

describe("portcullis fields", () => {
  const captured = () => {
    const lines: string[] = [];
    return { lines, output: { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) } };
  };
  const module = join(import.meta.dirname, "fields.test-support.ts");

  it("prints the statements with --print, adds the columns without it, and then finds every column there", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "portcullis-fields-"));
    try {
      expect(await main(["migrate", "--pglite", dataDir], {}, captured().output)).toBe(0);
      const printed = captured();
      expect(await main(["fields", "--fields", module, "--pglite", dataDir, "--print"], {}, printed.output)).toBe(0);
      expect(printed.lines).toEqual([
        'ALTER TABLE "users" ADD COLUMN "company" varchar(100);',
        'ALTER TABLE "users" ADD COLUMN "plan" varchar(4);',
        'ALTER TABLE "users" ADD COLUMN "seats" bigint;',
        'ALTER TABLE "users" ADD COLUMN "beta" boolean;',
        'ALTER TABLE "users" ADD COLUMN "tags" text;',
      ]);
      const applied = captured();
      expect(await main(["fields", "--fields", module, "--pglite", dataDir], {}, applied.output)).toBe(0);
      expect(applied.lines[0]).toMatch(/^added 5 column\(s\): ALTER TABLE "users" ADD COLUMN "company" varchar\(100\)/);
      const again = captured();
      expect(await main(["fields", "--fields", module, "--pglite", dataDir], {}, again.output)).toBe(0);
      expect(again.lines).toEqual(["every field has its column"]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("portcullis import --fields: lines carry the declared fields into their columns; without --fields such a line is refused", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "portcullis-fields-import-"));
    try {
      expect(await main(["migrate", "--pglite", dataDir], {}, captured().output)).toBe(0);
      expect(await main(["fields", "--fields", module, "--pglite", dataDir], {}, captured().output)).toBe(0);
      const file = join(dataDir, "users.jsonl");
      await writeFile(
        file,
        `${JSON.stringify({ username: "ada", fields: { company: "Analytical", seats: 3, tags: ["a", "b"] } })}\n${JSON.stringify({ username: "bo" })}\n`,
      );
      const env = { AUTH_ENCRYPTION_KEY: secrets.encryption };
      const without = captured();
      expect(await main(["import", file, "--pglite", dataDir], env, without.output)).toBe(1);
      expect(without.lines).toContain("line 1: refused: fields fields.company is not a declared field");
      const imported = captured();
      expect(await main(["import", file, "--pglite", dataDir, "--fields", module], env, imported.output)).toBe(0);
      const storage = await pgliteStorage({ dataDir, userFields: fields });
      try {
        expect((await storage.users.findByUsernameKey("ada"))?.fields).toEqual({
          company: "Analytical",
          plan: "free",
          seats: 3,
          beta: false,
          tags: ["a", "b"],
        });
        // bo was imported by the first run, without --fields: its columns hold nothing, which core reads as the defaults.
        expect((await storage.users.findByUsernameKey("bo"))?.fields).toMatchObject({ company: null, plan: null });
        const auth = authOn(storage, fields);
        const bo = await storage.users.findByUsernameKey("bo");
        expect(await getPublicUser(auth, { userId: bo?.id ?? "none" })).toMatchObject({
          company: null,
          plan: "free",
          beta: false,
        });
      } finally {
        await storage.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("exits 2 without --fields, for a module it cannot load, and for an export that is no declaration", async () => {
    const usage = captured();
    expect(await main(["fields", "--pglite", "memory://"], {}, usage.output)).toBe(2);
    expect(usage.lines[0]).toMatch(/^Usage: portcullis migrate/);
    const unloadable = captured();
    expect(await main(["fields", "--fields", "./no-such-module.js", "--pglite", "memory://"], {}, unloadable.output)).toBe(2);
    expect(unloadable.lines[0]).toMatch(/^--fields: cannot load \.\/no-such-module\.js/);
    const wrong = captured();
    expect(await main(["fields", "--fields", module, "--export", "notFields", "--pglite", "memory://"], {}, wrong.output)).toBe(
      2,
    );
    expect(wrong.lines).toEqual([
      '--fields: fields.test-support.ts exports no "notFields": export the object given to createAuth\'s user.fields'.replace(
        "fields.test-support.ts",
        module,
      ),
    ]);
  });
});
