// Issue 27 item 3: the SQL of docs/migrating.md "From Better Auth", run as the page writes it
// against tables that Better Auth's own migration created in PGlite, and its lines imported.
import { readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { login } from "@portcullis/core";
import { hashPassword } from "better-auth/crypto";
import { getMigrations } from "better-auth/db/migration";
import { twoFactor } from "better-auth/plugins/two-factor";
import { Kysely, PostgresDialect } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testPassword } from "../../../test/fixtures/auth.js";
import { importExportedLines } from "../../../test/fixtures/import-lines.js";

const page = readFileSync(new URL("../../../docs/migrating.md", import.meta.url), "utf8");

/** The first `sql` block under the page's "From Better Auth" heading. */
function documentedExport(): string {
  const section = page.slice(page.indexOf("\n## From Better Auth\n"));
  const block = /```sql\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("docs/migrating.md has no sql block under From Better Auth");
  return block[1];
}

/** Kysely's PostgreSQL dialect over the PGlite connection, for Better Auth's migration. */
function kyselyOver(database: PGlite) {
  const client = {
    async query(text: string, values: unknown[]) {
      const result = await database.query<Record<string, unknown>>(text, values);
      const command = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "";
      return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows };
    },
    release() {},
  };
  const pool = { connect: async () => client, end: async () => {} };
  return new Kysely<unknown>({ dialect: new PostgresDialect({ pool: pool as never }) });
}

let database: PGlite;

beforeAll(async () => {
  database = new PGlite();
  const { runMigrations, toBeCreated } = await getMigrations({
    database: { db: kyselyOver(database), type: "postgres" },
    emailAndPassword: { enabled: true },
    plugins: [twoFactor()],
  });
  expect(toBeCreated.map((table) => table.table)).toEqual(expect.arrayContaining(["user", "account", "twoFactor"]));
  await runMigrations();
});

afterAll(async () => {
  await database?.close();
});

async function insert(table: string, row: Record<string, unknown>) {
  const columns = Object.keys(row);
  await database.query(
    `INSERT INTO "${table}" (${columns.map((column) => `"${column}"`).join(", ")}) VALUES (${columns.map((_, index) => `$${index + 1}`).join(", ")})`,
    Object.values(row),
  );
}

it("IM-1: the documented Better Auth export imports a user who signs in with the password Better Auth hashed, with the provider link", async () => {
  const created = new Date("2025-03-01T10:00:00Z");
  const times = { createdAt: created, updatedAt: created };
  const adaId = "Xk3pQ9vL2mN8rT5wY7zA1bC4dE6fG0hJ";
  await insert("user", {
    id: adaId,
    name: "Ada",
    email: "ada@example.com",
    emailVerified: true,
    twoFactorEnabled: false,
    ...times,
  });
  await insert("account", {
    id: "acc-credential",
    accountId: adaId,
    providerId: "credential",
    userId: adaId,
    password: await hashPassword(testPassword),
    ...times,
  });
  await insert("account", { id: "acc-github", accountId: "583231", providerId: "github", userId: adaId, ...times });
  const later = new Date("2025-03-02T10:00:00Z");
  await insert("user", {
    id: "grace0000000000000000000000000001",
    name: "Grace",
    email: "grace@example.com",
    emailVerified: false,
    createdAt: later,
    updatedAt: later,
  });
  await insert("account", {
    id: "acc-google",
    accountId: "g-1",
    providerId: "google",
    userId: "grace0000000000000000000000000001",
    createdAt: later,
    updatedAt: later,
  });

  const result = await database.query<Record<string, string>>(documentedExport(), [], { parsers: { 114: (text) => text } });
  const lines = result.rows.map((row) => Object.values(row)[0] as string);
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).not.toContain("\n");

  const { auth, summary, refusals } = await importExportedLines(lines);
  expect(refusals).toEqual([]);
  expect(summary).toMatchObject({ read: 2, imported: 2, refused: 0 });

  const ada = await auth.storage.users.findByUsernameKey("ada@example.com");
  expect(ada).toMatchObject({ id: adaId, email: "ada@example.com", emailVerified: true });
  expect(ada?.passwordHash).toMatch(/^imported:[0-9a-f]{32}:[0-9a-f]{128}$/);
  await expect(login(auth, { username: "ada@example.com", password: "not the password at all" })).rejects.toThrow();
  const signedIn = await login(auth, { username: "ada@example.com", password: testPassword });
  expect(signedIn.status).toBe("authenticated");
  expect((await auth.storage.users.findById(adaId))?.passwordHash).toMatch(/^\$argon2id\$/);
  expect(await auth.storage.identities.find("github", "583231")).toMatchObject({ userId: adaId });

  const grace = await auth.storage.users.findByUsernameKey("grace@example.com");
  expect(grace).toMatchObject({ id: "grace0000000000000000000000000001", emailVerified: false, passwordHash: null });
  expect(await auth.storage.identities.find("google", "g-1")).toMatchObject({ userId: grace?.id });
});
