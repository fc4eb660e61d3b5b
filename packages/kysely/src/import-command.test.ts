// portcullis import over PGlite: the command spawned on a file with broken lines imports the good
// ones, names the bad by line number without repeating a secret, and a second run changes nothing.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UnreadableRecord, createAuth, login, verifyTotp } from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "./cli.js";
import { jsonLines, maxImportLineBytes } from "./import-command.js";
import { pgliteStorage } from "./pglite.js";

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));
const cli = fileURLToPath(new URL("./cli.ts", import.meta.url));
const encryptionKey = randomBytes(32).toString("base64url");
const password = "correct horse battery staple";
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const unknownHash = "md5$5f4dcc3b5aa765d61d8327deb882cf99";
/** bcrypt (cost 4) of `password`, made by @node-rs/bcrypt. */
const bcrypt = "$2b$04$SG9dRh9XJ4a.WqZKVoAhruPOEUF/N981sTz4TS.j4KqJeYi.SH5rW";

/** Runs the real command in a process of its own, as `npx portcullis` does. */
function portcullis(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runTs(cli, args, env);
}

/** Runs a TypeScript program of this package in a process of its own, with `nodeOptions` before it. */
function runTs(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  nodeOptions: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeOptions, "--import", "tsx", program, ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${repositoryRoot}tsconfig.json`, AUTH_ENCRYPTION_KEY: encryptionKey, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function captured() {
  const lines: string[] = [];
  return { lines, output: { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) } };
}

const lines = [
  JSON.stringify({ username: "alice", email: "alice@example.com", roles: ["admin"], passwordHash: bcrypt, totpSecret }),
  JSON.stringify({ username: "bob", passwordHash: bcrypt }),
  `{"username": "broken", "passwordHash": "${unknownHash}"`,
  "",
  JSON.stringify({ username: "carol", passwordHash: unknownHash }),
  JSON.stringify({ username: "dave", disabled: true }),
  "",
  "",
];

let directory: string;
let dataDir: string;
let file: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "portcullis-import-"));
  dataDir = join(directory, "data");
  file = join(directory, "users.jsonl");
  await writeFile(file, lines.join("\n"));
  expect(await main(["migrate", "--pglite", dataDir], {}, captured().output)).toBe(0);
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe("portcullis import (PGlite)", () => {
  it("IM-1: a dry run checks every line and writes nothing", { timeout: 180_000 }, async () => {
    const run = await portcullis(["import", file, "--pglite", dataDir, "--dry-run"]);
    expect(run.stdout).toContain("dry run, nothing written: 6 read, 3 to import, 0 unchanged, 0 skipped, 3 refused");
    expect(run.code).toBe(1);
    const storage = await pgliteStorage({ dataDir });
    try {
      expect(await storage.users.findByUsernameKey("alice")).toBeNull();
    } finally {
      await storage.close();
    }
  });

  it("IM-1: imports the good lines, names each bad one by number with no secret, exits 1; a second run changes nothing", {
    timeout: 60_000,
  }, async () => {
    const first = await portcullis(["import", file, "--pglite", dataDir]);
    expect(first.stderr).toContain("line 3: refused: record the line is not JSON");
    expect(first.stderr).toContain("line 4: refused: record the line is empty");
    expect(first.stderr).toMatch(/line 5: refused: passwordHash unknown password hash format/);
    expect(first.stderr).not.toMatch(/line [1268]:/);
    expect(first.stdout).toContain("6 read, 3 imported, 0 unchanged, 0 skipped, 3 refused");
    expect(first.stdout).toContain("refused 1: record: the line is not JSON");
    expect(first.stdout).toContain("refused 1: record: the line is empty");
    for (const secret of [unknownHash, bcrypt, totpSecret, encryptionKey]) {
      expect(first.stdout + first.stderr).not.toContain(secret);
    }
    expect(first.code).toBe(1);

    const again = await portcullis(["import", file, "--pglite", dataDir]);
    expect(again.stdout).toContain("6 read, 0 imported, 3 unchanged, 0 skipped, 3 refused");
    expect(again.code).toBe(1);

    const storage = await pgliteStorage({ dataDir });
    try {
      let now = Date.now();
      const auth = createAuth({
        storage,
        issuer: "https://api.example.com",
        audience: "example-api",
        secrets: { signing: randomBytes(32).toString("base64url"), encryption: encryptionKey },
        sweepInterval: false,
        now: () => now,
      });
      expect((await storage.users.list({ limit: 10 })).map((user) => user.username)).toEqual(["alice", "bob", "dave"]);
      const pending = await login(auth, { username: "alice", password });
      if (pending.status !== "totp_required") throw new Error("TOTP was not asked for");
      now += 1;
      const tokens = await verifyTotp(auth, { tempToken: pending.tempToken, code: totpCode({ secret: totpSecret, at: now }) });
      expect(tokens.accessToken).toEqual(expect.any(String));
      expect((await storage.users.findByUsernameKey("alice"))?.passwordHash).toMatch(/^\$argon2id\$/);
    } finally {
      await storage.close();
    }
  });

  it("IM-1: without AUTH_ENCRYPTION_KEY the command refuses to start (exit 2), before it opens the database", async () => {
    const { lines: printed, output } = captured();
    expect(await main(["import", file, "--pglite", join(directory, "other")], {}, output)).toBe(2);
    expect(printed.join("\n")).toContain("AUTH_ENCRYPTION_KEY is not set");
    await expect(access(join(directory, "other"))).rejects.toThrow();
  });

  it("a missing file, or import without one, is refused", async () => {
    const missing = captured();
    expect(
      await main(
        ["import", join(directory, "none.jsonl"), "--pglite", join(directory, "other")],
        { AUTH_ENCRYPTION_KEY: encryptionKey },
        missing.output,
      ),
    ).toBe(1);
    expect(missing.lines.join("\n")).toContain("import failed: cannot read");
    expect(await main(["import", "--pglite", dataDir], {}, captured().output)).toBe(2);
    expect(await main(["migrate", "--pglite", dataDir, "--dry-run"], {}, captured().output)).toBe(2);
  });

  it("jsonLines: reads one line at a time; empty lines at the end are not records", async () => {
    const read: unknown[] = [];
    for await (const record of jsonLines(file)) read.push(record);
    expect(read).toHaveLength(6);
  });

  it("jsonLines: a byte order mark and CRLF line ends are not part of the JSON", async () => {
    const bom = join(directory, "bom.jsonl");
    await writeFile(bom, '\uFEFF{"username":"a"}\r\n{"username":"b"}\r\n');
    const read: unknown[] = [];
    for await (const record of jsonLines(bom)) read.push(record);
    expect(read).toEqual([{ username: "a" }, { username: "b" }]);
  });
});

describe("portcullis import: accounts without their factors (IM-1)", () => {
  it("IM-1: an account that exists without a factor its line carries is named with its line and username, counted, and makes the command exit 1", async () => {
    const partial = join(directory, "partial.jsonl");
    const whole = join(directory, "whole.jsonl");
    // What a release before issue 36 could leave when cut after the user row: the user alone.
    await writeFile(partial, `${JSON.stringify({ username: "erin", passwordHash: bcrypt })}\n`);
    await writeFile(
      whole,
      [
        JSON.stringify({ username: "frank", passwordHash: bcrypt }),
        JSON.stringify({ username: "erin", passwordHash: bcrypt, totpSecret, recoveryCodes: ["ABCD-EFGH-JKMN-PQRS"] }),
      ].join("\n"),
    );
    const env = { AUTH_ENCRYPTION_KEY: encryptionKey };
    expect(await main(["import", partial, "--pglite", dataDir], env, captured().output)).toBe(0);
    const { lines: printed, output } = captured();
    expect(await main(["import", whole, "--pglite", dataDir], env, output)).toBe(1);
    expect(printed).toContain('line 2: incomplete: "erin" exists without factors its record carries: totpSecret, recoveryCodes');
    expect(printed).toContain("2 read, 1 imported, 0 unchanged, 0 skipped, 0 refused, 1 incomplete");
    expect(printed.join("\n")).toMatch(/1 account exists without factors its record carries and signs in without them/);
    expect(printed.join("\n")).not.toContain("exists with different data");
    for (const secret of [bcrypt, totpSecret, "ABCD-EFGH-JKMN-PQRS", encryptionKey])
      expect(printed.join("\n")).not.toContain(secret);
  });
});

describe("portcullis import: a line's length is capped", () => {
  it("jsonLines: a line of the cap's length is read, one byte more is refused with its line number, and reading goes on", async () => {
    const cap = 64;
    const fits = JSON.stringify({ username: "a".repeat(cap - 15) });
    expect(Buffer.byteLength(fits)).toBe(cap);
    const over = JSON.stringify({ username: "b".repeat(cap - 14) });
    const file = join(directory, "capped.jsonl");
    await writeFile(file, [fits, over, `${fits}\r`, "\uFEFF{}", "{}", "  ", `${over.slice(0, -1)}é}`].join("\n"));
    const read: unknown[] = [];
    for await (const record of jsonLines(file, cap)) read.push(record);
    const tooLong = new UnreadableRecord(`the line is longer than ${cap} bytes`);
    expect(read).toEqual([
      { username: "a".repeat(cap - 15) },
      tooLong,
      { username: "a".repeat(cap - 15) },
      // A byte order mark only starts the file; anywhere else it is a character, and no JSON.
      new UnreadableRecord("the line is not JSON"),
      {},
      new UnreadableRecord("the line is empty"),
      tooLong,
    ]);
    expect(maxImportLineBytes).toBe(1024 * 1024);
  });

  it("jsonLines: a line longer than a read, a character split between two reads, is read whole", async () => {
    const file = join(directory, "long-line.jsonl");
    // The first read ends inside an é (two bytes): a line of about 105 KiB.
    const padding = `${"x".repeat(65_535 - '{"username":"y","padding":"'.length)}${"é".repeat(20_000)}`;
    await writeFile(file, `{"username":"y","padding":"${padding}"}\n{"username":"z"}`);
    const read: unknown[] = [];
    for await (const record of jsonLines(file)) read.push(record);
    expect(read).toEqual([{ username: "y", padding }, { username: "z" }]);
  });

  it("a 200 MiB line is refused as too long while the reader holds about the cap: heap and peak memory measured in a process of its own, its heap limited", {
    timeout: 120_000,
  }, async () => {
    const reader = fileURLToPath(new URL("./json-lines-reader.test-support.ts", import.meta.url));
    const small = join(directory, "small.jsonl");
    const huge = join(directory, "huge.jsonl");
    await writeFile(small, `${JSON.stringify({ username: "first" })}\n${JSON.stringify({ username: "last" })}\n`);
    const out = createWriteStream(huge);
    out.write(`${JSON.stringify({ username: "first" })}\n{"username":"`);
    const mebibyte = Buffer.alloc(1024 * 1024, "x");
    for (let written = 0; written < 200; written += 1) if (!out.write(mebibyte)) await once(out, "drain");
    out.end(`"}\n${JSON.stringify({ username: "last" })}\n`);
    await once(out, "close");
    // A 64 MiB heap: a reader that holds the line whole runs out of it.
    const options = ["--expose-gc", "--max-old-space-size=64"];
    const measure = async (file: string) => {
      const run = await runTs(reader, [file], {}, options);
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      return JSON.parse(run.stdout) as { items: unknown[]; mostHeldMiB: number; peakResidentMiB: number };
    };
    const baseline = await measure(small);
    const measured = await measure(huge);
    await rm(huge);
    console.info(
      `a 200 MiB line: most heap and buffers held ${measured.mostHeldMiB} MiB (two short lines: ${baseline.mostHeldMiB}), peak resident ${measured.peakResidentMiB} MiB (two short lines: ${baseline.peakResidentMiB})`,
    );
    expect(measured.items).toEqual(["first", { unreadable: `the line is longer than ${maxImportLineBytes} bytes` }, "last"]);
    expect(measured.mostHeldMiB - baseline.mostHeldMiB).toBeLessThan(4);
    expect(measured.peakResidentMiB - baseline.peakResidentMiB).toBeLessThan(32);
  });
});
