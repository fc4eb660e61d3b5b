// portcullis keys reseal (issue 43 item 2; KR-1, KR-2): after a k1 → k2 rotation the command seals
// every TOTP secret and the directory bind password again under k2, on an embedded PGlite data
// directory and on PostgreSQL and MariaDB by URL; a dry run writes nothing; a value no listed key
// opens is named, kept, and makes it exit 1; the keys come from AUTH_ENCRYPTION_KEY, never echoed.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Auth,
  type EncryptionKeyring,
  type Storage,
  beginTotpSetup,
  createAuth,
  createUser,
  enableTotp,
  login,
  saveDirectoryPolicy,
  verifyTotp,
} from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
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
const k1 = randomBytes(32).toString("base64url");
const k2 = randomBytes(32).toString("base64url");
const rotation = JSON.stringify({ current: "k2", keys: { k1, k2 } });
const policy = {
  enabled: true,
  serverUrl: "ldaps://ldap.example.com",
  bindDn: "cn=reader,dc=example,dc=com",
  bindPassword: "directory reader password",
  userBaseDn: "ou=people,dc=example,dc=com",
};

/** An output for `main` that keeps what it prints. */
function captured() {
  const lines: string[] = [];
  const output: CommandOutput = { out: (line) => lines.push(line), err: (line) => lines.push(line) };
  return { lines, output };
}

/**
 * The instances' clock, frozen: the codes below are for this moment and the step before it, so a
 * busy machine crossing a 30-second step between making a code and checking it changes nothing.
 */
const now = Date.now();

const authOn = (storage: Storage, encryption: string | EncryptionKeyring): Auth =>
  createAuth({
    now: () => now,
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption },
    sweepInterval: false,
  });

/** Under k1 alone: `count` users with TOTP on, and the directory policy saved; answers each user's name and secret. */
async function sealedUnderK1(storage: Storage, count: number) {
  const auth = authOn(storage, { current: "k1", keys: { k1 } });
  const users: { username: string; secret: string }[] = [];
  for (let index = 0; index < count; index += 1) {
    const username = `user-${randomBytes(4).toString("hex")}`;
    const { id } = await createUser(auth, { username, password });
    const setup = await beginTotpSetup(auth, { userId: id, password });
    await enableTotp(auth, { userId: id, password, code: totpCode({ secret: setup.secret, at: now - 30_000 }) });
    users.push({ username, secret: setup.secret });
  }
  await saveDirectoryPolicy(auth, policy);
  return users;
}

/** Signs each user in with a code under k2 alone (k1 gone), and saves the policy keeping its bind password: both open only if resealed. */
async function worksWithK2Only(storage: Storage, users: { username: string; secret: string }[]) {
  const auth = authOn(storage, { current: "k2", keys: { k2 } });
  for (const user of users) {
    const result = await login(auth, { username: user.username, password });
    if (result.status !== "totp_required") throw new Error(result.status);
    await verifyTotp(auth, { tempToken: result.tempToken, code: totpCode({ secret: user.secret, at: now }) });
  }
  expect(await saveDirectoryPolicy(auth, { bindPassword: "" })).toMatchObject({ credentialConfigured: true });
}

describe("portcullis keys reseal on PGlite", () => {
  let directory: string;
  let dataDir: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "portcullis-reseal-"));
    dataDir = join(directory, "data");
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function onDisk<T>(use: (storage: KyselyStorage) => Promise<T>): Promise<T> {
    const storage = await pgliteStorage({ dataDir });
    try {
      return await use(storage);
    } finally {
      await storage.close();
    }
  }

  it("KR-1: a dry run counts and writes nothing; the run reseals everything under k2, which alone then opens it; a second run reseals nothing", async () => {
    const users = await onDisk((storage) => sealedUnderK1(storage, 2));
    const env = { AUTH_ENCRYPTION_KEY: rotation };
    const dry = captured();
    expect(await main(["keys", "reseal", "--pglite", dataDir, "--dry-run"], env, dry.output)).toBe(0);
    expect(dry.lines).toEqual([
      "dry run, nothing written: sealed values by key: k1 3 (current key: k2)",
      "  TOTP secrets: k1 2",
      "  directory bind password: k1 1",
      "3 to seal again under k2",
      "still sealed with an old key: k1 3",
      "key k1: 3 left: keep it in secrets.encryption.keys; remove key k1 from secrets.encryption.keys once it shows 0",
    ]);
    const run = captured();
    expect(await main(["keys", "reseal", "--pglite", dataDir], env, run.output)).toBe(0);
    expect(run.lines).toEqual([
      "sealed values by key: k1 3 (current key: k2)",
      "  TOTP secrets: k1 2",
      "  directory bind password: k1 1",
      "3 sealed again under k2",
      "still sealed with an old key: none",
      "key k1: 0 left: remove it from secrets.encryption.keys once every instance seals with k2 and 10 minutes have passed (OAuth sign-ins under way hold a verifier sealed with the key before)",
    ]);
    const text = [...dry.lines, ...run.lines].join("\n");
    for (const secret of [k1, k2, ...users.map((user) => user.secret), policy.bindPassword]) expect(text).not.toContain(secret);
    await onDisk((storage) => worksWithK2Only(storage, users));
    const again = captured();
    expect(await main(["keys", "reseal", "--pglite", dataDir], env, again.output)).toBe(0);
    expect(again.lines.slice(0, 5)).toEqual([
      "sealed values by key: k2 3 (current key: k2)",
      "  TOTP secrets: k2 2",
      "  directory bind password: k2 1",
      "0 sealed again under k2",
      "still sealed with an old key: none",
    ]);
  });

  it("KR-2: a value no listed key opens is named, kept as it is, and the command exits 1", async () => {
    const [user] = await onDisk((storage) => sealedUnderK1(storage, 1));
    const k0 = JSON.stringify({ current: "k0", keys: { k0: randomBytes(32).toString("hex") } });
    const { lines, output } = captured();
    // Under a keyring that lacks k1, what k1 sealed opens with no listed key.
    expect(await main(["keys", "reseal", "--pglite", dataDir], { AUTH_ENCRYPTION_KEY: k0 }, output)).toBe(1);
    const userId = await onDisk(async (storage) => (await storage.users.findByUsernameKey(user?.username as string))?.id);
    expect(lines).toContain(`user ${userId}: TOTP secret sealed with key "k1" opens with no listed key: left as it is`);
    expect(lines).toContain(
      `the directory policy: directory bind password sealed with key "k1" opens with no listed key: left as it is`,
    );
    expect(lines.find((line) => line.includes("could not be opened"))).toMatch(/^(\d+) could not be opened with any listed key/);
    const run = captured();
    expect(await main(["keys", "reseal", "--pglite", dataDir], { AUTH_ENCRYPTION_KEY: rotation }, run.output)).toBe(0);
    expect(run.lines).toContain("still sealed with an old key: none");
  });

  it("without AUTH_ENCRYPTION_KEY, with one that is not JSON or not a key, or malformed, it exits 2 and never repeats the key", async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, "AUTH_ENCRYPTION_KEY is not set"],
      [{ AUTH_ENCRYPTION_KEY: `{"current":"k2",${k1}` }, "AUTH_ENCRYPTION_KEY starts with { but is not JSON"],
      [{ AUTH_ENCRYPTION_KEY: JSON.stringify({ current: "k3", keys: { k1 } }) }, "secrets.encryption is required"],
      [
        { AUTH_ENCRYPTION_KEY: JSON.stringify({ current: "k1", keys: { k1: `${k1}!` } }) },
        'secrets.encryption.keys["k1"] must be 32 random bytes',
      ],
    ];
    for (const [env, message] of cases) {
      const { lines, output } = captured();
      const code = await main(["keys", "reseal", "--pglite", dataDir], env, output);
      expect(code, lines.join("\n")).toBe(2);
      expect(lines.join("\n")).toContain(message);
      expect(lines.join("\n")).not.toContain(k1);
    }
    for (const argv of [
      ["keys", "--pglite", dataDir],
      ["keys", "rotate", "--pglite", dataDir],
      ["keys", "reseal", "extra", "--pglite", dataDir],
      ["keys", "reseal", "--pglite", dataDir, "--yes"],
      ["keys", "reseal"],
    ]) {
      const { lines, output } = captured();
      expect(await main(argv, { AUTH_ENCRYPTION_KEY: rotation }, output), argv.join(" ")).toBe(2);
      expect(lines.join("\n"), argv.join(" ")).toContain("portcullis keys reseal");
    }
    const help = captured();
    expect(await main(["--help"], {}, help.output)).toBe(0);
    expect(help.lines.join("\n")).toContain("keys reseal finishes an encryption-key rotation");
  });
});

for (const [name, url, scratch] of [
  ["PostgreSQL", postgresUrl, createScratchSchema],
  ["MariaDB", mariadbUrl, createScratchDatabase],
] as const) {
  describeNeedingService(`packages/kysely/src/keys-command.test.ts (${name})`, await serverMissing(url))(
    `portcullis keys reseal on ${name}`,
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

      it("KR-1: with --url it reseals every TOTP secret and the bind password under k2, which alone then opens them", async () => {
        const users = await sealedUnderK1(storage, 3);
        const { lines, output } = captured();
        expect(await main(["keys", "reseal", "--url", database.url], { AUTH_ENCRYPTION_KEY: rotation }, output)).toBe(0);
        expect(lines.slice(0, 5)).toEqual([
          "sealed values by key: k1 4 (current key: k2)",
          "  TOTP secrets: k1 3",
          "  directory bind password: k1 1",
          "4 sealed again under k2",
          "still sealed with an old key: none",
        ]);
        await worksWithK2Only(storage, users);
      });
    },
  );
}
