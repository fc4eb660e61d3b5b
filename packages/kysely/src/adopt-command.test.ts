// `portcullis adopt` and `--users` (issue 38 item 3): the commands a deploy runs against a
// service's own users table, on a PGlite data directory.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterEach, beforeEach, expect, it } from "vitest";
import { main } from "./cli.js";
import { pgliteStorage } from "./pglite.js";

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), "portcullis-adopt-"));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Runs the command and answers its exit code and what it wrote. */
async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {}, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

it("migrate --users builds Portcullis's tables against the service's table; adopt adopts its rows once, naming the ones it skips", async () => {
  const data = join(directory, "data");
  const host = await pgliteStorage({ dataDir: data, migrate: false });
  await sql`create table users (id serial primary key, email text not null, password_digest text, plan text not null default 'free')`.execute(
    host.db,
  );
  await sql`insert into users (email, password_digest) values ('ann@example.com', '$2b$04$vQ92EE3l4Q.mwEzfOLzTuuTh0CkV5nD807V7MBf7L0FxxqOaSpEoG'), (' bad@example.com', null)`.execute(
    host.db,
  );
  await host.close();
  const users = join(directory, "users.json");
  await writeFile(
    users,
    JSON.stringify({ table: "users", id: { type: "integer" }, columns: { email: "email", passwordHash: "password_digest" } }),
  );

  expect(await run(["adopt", "--pglite", data])).toMatchObject({ code: 2 });
  expect((await run(["migrate", "--pglite", data, "--prefix", "auth_", "--users", users])).out).toEqual([
    expect.stringMatching(/^schema migrated from version 0 to \d+$/),
  ]);
  const first = await run(["adopt", "--pglite", data, "--prefix", "auth_", "--users", users]);
  expect(first.code).toBe(1);
  expect(first.out).toEqual(["2 without an account, 1 adopted (0 without a password), 1 skipped"]);
  expect(first.err).toEqual([expect.stringMatching(/^id 2: skipped: its email is not a username Portcullis accepts: /)]);
  const second = await run(["adopt", "--pglite", data, "--prefix", "auth_", "--users", users]);
  expect(second.out).toEqual(["1 without an account, 0 adopted (0 without a password), 1 skipped"]);
  expect(await run(["migrate", "--pglite", data, "--users", join(directory, "missing.json")])).toMatchObject({
    code: 2,
    err: [expect.stringContaining("cannot read the --users file")],
  });
});
