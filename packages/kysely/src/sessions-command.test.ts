// portcullis sessions revoke-all (STUP-6, ASVS 7.4.5): every session of every user ends, on an
// embedded PGlite data directory and on PostgreSQL and MariaDB by URL; confirmed by --yes, or by
// typing "yes" at a terminal; refused, or not confirmed, it ends nothing.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AuthEvent, type TokenSet, createAuth, createUser, isAuthError, login, refresh } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { createScratchDatabase, createScratchSchema } from "../../../test/storage/scratch-schema.js";
import { type CommandOutput, main } from "./cli.js";
import { connectStorage } from "./connect.js";
import { mariadbUrl, postgresUrl, serverMissing } from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";

const password = "correct horse battery staple";

/** An output for `main` that keeps what it prints, and answers `answer` when asked (a terminal), or cannot ask. */
function captured(answer?: string) {
  const lines: string[] = [];
  const questions: string[] = [];
  const output: CommandOutput = {
    out: (line) => lines.push(line),
    err: (line) => lines.push(line),
    ...(answer === undefined
      ? {}
      : {
          ask: async (question: string) => {
            questions.push(question);
            return answer;
          },
        }),
  };
  return { lines, questions, output };
}

/** Signs `count` sessions in on a storage the command will then open; returns their token sets. */
async function sessionsOn(storage: KyselyStorage, count: number): Promise<TokenSet[]> {
  const auth = createAuth({
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    sweepInterval: false,
  });
  const username = `user-${randomBytes(4).toString("hex")}`;
  await createUser(auth, { username, password });
  const signedIn: TokenSet[] = [];
  for (let index = 0; index < count; index += 1) {
    const result = await login(auth, { username, password });
    if (result.status !== "authenticated") throw new Error(result.status);
    signedIn.push(result.tokens);
  }
  return signedIn;
}

/** What refreshing each token on `storage` gives: "fulfilled", or the refusal's code. */
async function refreshes(storage: KyselyStorage, signedIn: TokenSet[]): Promise<(string | number)[]> {
  const events: AuthEvent[] = [];
  const auth = createAuth({
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    sweepInterval: false,
  });
  auth.events.on("*", (event) => {
    events.push(event);
  });
  return Promise.all(
    signedIn.map((tokens) =>
      refresh(auth, { refreshToken: tokens.refreshToken }).then(
        () => "fulfilled",
        (error: unknown) => (isAuthError(error) ? error.code : "thrown"),
      ),
    ),
  );
}

describe("portcullis sessions revoke-all on PGlite", () => {
  let directory: string;
  let dataDir: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "portcullis-revoke-all-"));
    dataDir = join(directory, "data");
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  /** Opens the data directory, signs `count` sessions in, closes it. */
  async function signedInOnDisk(count: number): Promise<TokenSet[]> {
    const storage = await pgliteStorage({ dataDir });
    try {
      return await sessionsOn(storage, count);
    } finally {
      await storage.close();
    }
  }

  async function refreshedOnDisk(signedIn: TokenSet[]) {
    const storage = await pgliteStorage({ dataDir });
    try {
      return await refreshes(storage, signedIn);
    } finally {
      await storage.close();
    }
  }

  it("STUP-6, ASVS 7.4.5: with --yes it ends every session of every user and prints how many; the refresh tokens are refused after it", async () => {
    const signedIn = [...(await signedInOnDisk(2)), ...(await signedInOnDisk(1))];
    const { lines, output } = captured();
    expect(await main(["sessions", "revoke-all", "--pglite", dataDir, "--yes"], {}, output)).toBe(0);
    expect(lines).toEqual([
      "3 sessions revoked: every refresh token is refused now, every access token at its next check (within tokenStateCacheSeconds on each instance: this command tells no revocation channel)",
    ]);
    expect(await refreshedOnDisk(signedIn)).toEqual([40101, 40101, 40101]);
    const again = captured();
    expect(await main(["sessions", "revoke-all", "--pglite", dataDir, "--yes"], {}, again.output)).toBe(0);
    expect(again.lines[0]).toMatch(/^0 sessions revoked: /);
  });

  it('STUP-6: without --yes, at a terminal it asks and goes on only on "yes"; with no terminal it exits 2; either refusal ends nothing', async () => {
    const signedIn = await signedInOnDisk(1);
    const noTerminal = captured();
    expect(await main(["sessions", "revoke-all", "--pglite", dataDir], {}, noTerminal.output)).toBe(2);
    expect(noTerminal.lines.join("\n")).toContain(
      "sessions revoke-all ends every session of every user: add --yes to confirm (there is no terminal to ask on)",
    );
    for (const answer of ["no", "", "y", "YES please"]) {
      const declined = captured(answer);
      expect(await main(["sessions", "revoke-all", "--pglite", dataDir], {}, declined.output)).toBe(1);
      expect(declined.questions).toEqual(['This ends every session of every user of this database. Type "yes" to go on: ']);
      expect(declined.lines).toEqual(["not confirmed: no session was revoked"]);
    }
    expect(await refreshedOnDisk(signedIn)).toEqual(["fulfilled"]);
    const confirmed = captured(" yes ");
    expect(await main(["sessions", "revoke-all", "--pglite", dataDir], {}, confirmed.output)).toBe(0);
    expect(confirmed.lines[0]).toMatch(/^1 session revoked: /);
  });

  it("a malformed sessions command exits 2 with the usage, and opens no database", async () => {
    for (const argv of [
      ["sessions", "--pglite", dataDir, "--yes"],
      ["sessions", "revoke", "--pglite", dataDir, "--yes"],
      ["sessions", "revoke-all", "extra", "--pglite", dataDir, "--yes"],
      ["sessions", "revoke-all", "--pglite", dataDir, "--yes", "--dry-run"],
      ["sessions", "revoke-all", "--yes"],
      ["migrate", "--pglite", dataDir, "--yes"],
      ["migrate", "extra", "--pglite", dataDir],
      ["import", join(directory, "users.jsonl"), "--pglite", dataDir, "--yes"],
      ["import", "--pglite", dataDir],
      ["frobnicate", "revoke-all", "--pglite", dataDir, "--yes"],
    ]) {
      const { lines, output } = captured("yes");
      expect(await main(argv, {}, output), argv.join(" ")).toBe(2);
      expect(lines.join("\n"), argv.join(" ")).toContain("portcullis sessions revoke-all");
    }
    const help = captured();
    expect(await main(["--help"], {}, help.output)).toBe(0);
    expect(help.lines.join("\n")).toContain("sessions revoke-all ends every session of every user");
  });

  it("a database that cannot be opened exits 1 saying the revocation failed", async () => {
    const { lines, output } = captured();
    expect(await main(["sessions", "revoke-all", "--url", "postgres://nobody@127.0.0.1:1/none", "--yes"], {}, output)).toBe(1);
    expect(lines.join("\n")).toMatch(/^revoke-all failed: /);
    // A data directory that is a file: PGlite cannot open it at all.
    const file = join(directory, "a-file");
    await writeFile(file, "not a database");
    const unopened = captured();
    expect(await main(["sessions", "revoke-all", "--pglite", file, "--yes"], {}, unopened.output)).toBe(1);
    expect(unopened.lines.join("\n")).toMatch(/^revoke-all failed: /);
  });
});

for (const [name, url, scratch] of [
  ["PostgreSQL", postgresUrl, createScratchSchema],
  ["MariaDB", mariadbUrl, createScratchDatabase],
] as const) {
  describeNeedingService(`packages/kysely/src/sessions-command.test.ts (${name})`, await serverMissing(url))(
    `portcullis sessions revoke-all on ${name}`,
    () => {
      let database: Awaited<ReturnType<typeof scratch>>;
      let storage: KyselyStorage;
      beforeAll(async () => {
        database = await scratch();
        storage = await connectStorage({ url: database.url });
        await migrate(storage);
      });
      afterAll(async () => {
        await storage?.close();
        await database?.drop();
      });

      it("STUP-6, ASVS 7.4.5: with --url and --yes it ends every session of every user; a refresh after it is refused", async () => {
        const signedIn = [...(await sessionsOn(storage, 2)), ...(await sessionsOn(storage, 2))];
        const { lines, output } = captured();
        expect(await main(["sessions", "revoke-all", "--url", database.url, "--yes"], {}, output)).toBe(0);
        expect(lines[0]).toMatch(/^4 sessions revoked: /);
        expect(await refreshes(storage, signedIn)).toEqual([40101, 40101, 40101, 40101]);
      });
    },
  );
}
