// portcullis import over PGlite: the command spawned on a file with broken lines imports the good
// ones, names the bad by line number without repeating a secret, and a second run changes nothing.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAuth, login, verifyTotp } from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "./cli.js";
import { jsonLines } from "./import-command.js";
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
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", cli, ...args], {
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
}, 120_000);

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
