// portcullis migrate and connectStorage on URLs that hold a password: whatever goes wrong, the
// password (and the URL that holds it) is never printed, thrown or kept in an error.
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { main } from "./cli.js";
import { connectStorage } from "./connect.js";
import { mariadbUrl, postgresUrl, serverMissing } from "./databases.test-support.js";

const password = "Sw0rdfish-9Qx";

/** An output for `main` that keeps everything written to it. */
function captured() {
  const lines: string[] = [];
  return { lines, output: { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) } };
}

/** Runs `portcullis migrate --url <url>`: its exit code, and all it printed. */
async function migrateCommand(url: string) {
  const { lines, output } = captured();
  const code = await main(["migrate", "--url", url], {}, output);
  return { code, printed: lines.join("\n") };
}

const malformed = {
  "a port out of range": `postgres://app:${password}@db.internal:99999/app`,
  "a space in the host": `mysql://app:${password}@db internal:3306/app`,
  "a broken escape in the password (MySQL)": `mysql://app:${password}%zz@db.internal:3306/app`,
  "a broken escape in the database name (MySQL)": `mysql://app:${password}@db.internal:3306/app%zz`,
  "a broken escape in the password (PostgreSQL)": `postgres://app:${password}%zz@db.internal:5432/app`,
};

describe("issue 20 item 12 (HTTP-6): a malformed database URL", () => {
  for (const [what, url] of Object.entries(malformed)) {
    it(`HTTP-6: with ${what}, portcullis migrate exits 2 and prints neither the password nor the URL`, async () => {
      const { code, printed } = await migrateCommand(url);
      expect(printed).not.toContain(password);
      expect(printed).not.toContain("db.internal:");
      expect(printed).toMatch(/^@portcullis\/kysely: url /);
      expect(code).toBe(2);
    });

    it(`HTTP-6: with ${what}, connectStorage throws a TypeError that holds neither the password nor the URL, in any field`, async () => {
      const error = await connectStorage({ url }).then(
        (storage) => storage.close().then(() => "opened"),
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(inspect(error, { depth: 5, showHidden: true })).not.toContain(password);
      expect(inspect(error, { depth: 5, showHidden: true })).not.toContain("db.internal:");
    });
  }
});

describe("issue 23 item 3: an empty database URL", () => {
  it('portcullis migrate with --url "", or DATABASE_URL set empty, exits 2 saying the url is empty', async () => {
    for (const [argv, env] of [
      [["migrate", "--url", ""], {}],
      [["migrate"], { DATABASE_URL: "" }],
    ] as const) {
      const { lines, output } = captured();
      expect(await main([...argv], env, output)).toBe(2);
      expect(lines.join("\n")).toMatch(
        /^@portcullis\/kysely: url is empty; give connectStorage the database's URL, postgres:\/\//,
      );
    }
  });
});

for (const [name, url] of [
  ["PostgreSQL", postgresUrl],
  ["MariaDB", mariadbUrl],
] as const) {
  describeNeedingService(`packages/kysely/src/cli.test.ts (${name})`, await serverMissing(url))(name, () => {
    it("HTTP-6: a refused connection and a refused sign-in exit 1 and print no password", async () => {
      const refused = new URL(url);
      refused.port = "1";
      refused.username = "app";
      refused.password = password;
      const wrongUser = new URL(url);
      wrongUser.username = "portcullis_nobody";
      wrongUser.password = password;
      for (const attempt of [refused, wrongUser]) {
        const { code, printed } = await migrateCommand(attempt.href);
        expect(printed).toMatch(/^migration failed: /);
        expect(printed).not.toContain(password);
        expect(code).toBe(1);
      }
    });
  });
}
