// Issue 27 item 3: the export script of docs/migrating.md "From the original service", taken from
// the page as it is written, opens TOTP secrets sealed with AES-256-GCM in the layout the page
// assumes; its output imports, and the imported user signs in with the password and the code.
import { execFile } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { login, verifyTotp } from "@portcullis/core";
import bcryptjs from "bcryptjs";
import { afterAll, expect, it } from "vitest";
import { base32Decode, testPassword, totpCodeAt } from "../fixtures/auth.js";
import { importExportedLines } from "../fixtures/import-lines.js";

const page = readFileSync(new URL("../../docs/migrating.md", import.meta.url), "utf8");
const directory = mkdtempSync(join(tmpdir(), "portcullis-migrating-"));
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The first `js` block under the page's "From the original service" heading, as a file. */
function documentedScript(): string {
  const section = page.slice(page.indexOf("\n## From the original service\n"));
  const block = /```js\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("docs/migrating.md has no js block under From the original service");
  const path = join(directory, "export-original.mjs");
  writeFileSync(path, block[1]);
  return path;
}

/** Seals as the page assumes: base64 of iv (12 bytes) ‖ ciphertext ‖ tag (16 bytes). */
function seal(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ciphertext = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString("base64");
}

function runScript(script: string, key: Buffer, input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [script],
      { env: { PATH: process.env.PATH ?? "", OLD_TOTP_KEY: key.toString("base64") } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

it("IM-1, TOTP-6: the documented export opens the old service's sealed TOTP secret; the imported user signs in with the bcrypt password and a code", async () => {
  const script = documentedScript();
  const key = randomBytes(32);
  const rows = [
    {
      id: "1001",
      username: "alice",
      email: "alice@example.com",
      passwordHash: await bcryptjs.hash(testPassword, 4),
      totpSecret: seal(key, totpSecret),
    },
    { id: "1002", username: "bob", email: null, passwordHash: await bcryptjs.hash(testPassword, 4), totpSecret: null },
  ];
  const exported = await runScript(script, key, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
  expect(exported).toMatchObject({ code: 0, stderr: "" });
  const lines = exported.stdout.trimEnd().split("\n");
  expect(JSON.parse(lines[0] as string)).toMatchObject({ username: "alice", totpSecret });
  expect(JSON.parse(lines[1] as string)).toEqual({ id: "1002", username: "bob", passwordHash: rows[1]?.passwordHash });

  const { auth, summary, refusals } = await importExportedLines(lines);
  expect(refusals).toEqual([]);
  expect(summary).toMatchObject({ read: 2, imported: 2, refused: 0 });
  const stored = await auth.storage.totp.get("1001");
  expect(stored?.enabled).toBe(true);
  expect(JSON.stringify(stored)).not.toContain(totpSecret);

  const first = await login(auth, { username: "alice", password: testPassword });
  if (first.status !== "totp_required") throw new Error("expected the imported TOTP to be asked for");
  const tokens = await verifyTotp(auth, { tempToken: first.tempToken, code: await totpCodeAt(auth, base32Decode(totpSecret)) });
  expect(tokens.accessToken).toEqual(expect.any(String));
  expect((await login(auth, { username: "bob", password: testPassword })).status).toBe("authenticated");
});

it("the documented export stops at a secret sealed under another key rather than write a secret that gives no right code", async () => {
  const exported = await runScript(
    documentedScript(),
    randomBytes(32),
    `${JSON.stringify({ username: "alice", totpSecret: seal(randomBytes(32), totpSecret) })}\n`,
  );
  expect(exported.code).not.toBe(0);
  expect(exported.stdout).toBe("");
  expect(exported.stderr).not.toContain(totpSecret);
});
