import { pbkdf2Sync, randomBytes, scryptSync } from "node:crypto";
import { type Auth, createUser, parseImportedPasswordHash } from "@portcullis/core";
import bcryptjs from "bcryptjs";
import { hashPassword as betterAuthHashPassword } from "better-auth/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth } from "../fixtures/auth.js";
import { post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { type RunningServer, startExpress5 } from "./servers.js";

const base = "/api/v1/auth";
const password = "pässwörd of the old system";

/** An account as an import makes it: no password of its own, then the imported hash written to storage. */
async function importUser(auth: Auth, username: string, text: string): Promise<string> {
  const parsed = parseImportedPasswordHash(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  expect(parsed.stored.startsWith("imported:")).toBe(true);
  const user = await createUser(auth, { username });
  await auth.storage.users.update(user.id, { passwordHash: parsed.stored }, auth.now());
  return user.id;
}

const storedHash = async (auth: Auth, userId: string) => (await auth.storage.users.findById(userId))?.passwordHash ?? null;
const isOwnArgon2id = (hash: string | null) => hash !== null && /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/.test(hash);
const unpadded = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");

/** Each format, with the password it was made from, by its own library or documentation. */
const formats: [name: string, make: () => Promise<[text: string, password: string]>][] = [
  ["bcrypt $2b$ (bcryptjs, cost 10)", async () => [await bcryptjs.hash(password, 10), password]],
  [
    "bcrypt $2y$ (PHP manual's password_verify example)",
    async () => ["$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a", "rasmuslerdorf"],
  ],
  [
    "bcrypt $2a$ (bcryptjs's hash under the $2a$ prefix)",
    async () => [(await bcryptjs.hash(password, 8)).replace("$2b$", "$2a$"), password],
  ],
  ["scrypt, Better Auth's salt:key (its own hashPassword)", async () => [await betterAuthHashPassword(password), password]],
  [
    "scrypt PHC (Node's crypto.scrypt)",
    async () => {
      const salt = randomBytes(16);
      const key = scryptSync(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
      return [`$scrypt$ln=15,r=8,p=1$${unpadded(salt)}$${unpadded(key)}`, password];
    },
  ],
  [
    "PBKDF2, Django's pbkdf2_sha256 (Django's test vector)",
    async () => ["pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=", "lètmein"],
  ],
  [
    "PBKDF2 PHC $pbkdf2-sha256$ (Node's crypto.pbkdf2)",
    async () => {
      const salt = randomBytes(16);
      const key = pbkdf2Sync(password, salt, 100_000, 32, "sha256");
      return [`$pbkdf2-sha256$i=100000,l=32$${unpadded(salt)}$${unpadded(key)}`, password];
    },
  ],
  // Made with @node-rs/argon2's hash (algorithm 1 and 0), which core uses; the root of the workspace does not resolve it.
  [
    "argon2i (@node-rs/argon2)",
    async () => ["$argon2i$v=19$m=65536,t=3,p=4$1O37zrx6S7rix3NlXVdpPQ$+leA57mSpPCvLPdmolknnQQ0nc8Gpc09nQvMSa/GCdc", password],
  ],
  [
    "argon2d (@node-rs/argon2)",
    async () => ["$argon2d$v=19$m=19456,t=2,p=1$XePg2QxL7vThBdWMMMeUuQ$6ffxXhO7ry2TH4sB/S35pSSb5AeWHUaoJ1YZMxgmhUw", password],
  ],
];

describe("imported password hashes over HTTP (Express 5, memory storage)", () => {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth({ throttle: generousThrottle });
    context.server = await startExpress5(context.testAuth.auth);
  });
  afterAll(async () => {
    await context.server?.close();
  });

  it.each(formats.map(([name, make], index) => [name, make, index] as const))(
    "IM-1: %s: import, sign in, the stored hash is now argon2id, sign in again",
    async (_name, make, index) => {
      const { auth } = context.testAuth;
      const [text, typed] = await make();
      const username = `imported-${index}`;
      const userId = await importUser(auth, username, text);
      const imported = await storedHash(auth, userId);

      expectEnvelope(await post(context.server, `${base}/login`, { username, password: `${typed}!` }), 40100);
      expect(await storedHash(auth, userId)).toBe(imported);

      const first = await post(context.server, `${base}/login`, { username, password: typed });
      expectEnvelope(first, 0);
      expect(first.body.data.user.id).toBe(userId);
      const rehashed = await storedHash(auth, userId);
      expect(isOwnArgon2id(rehashed), String(rehashed?.slice(0, 30))).toBe(true);
      expect(await auth.passwords.verify(rehashed, typed)).toBe(true);

      expectEnvelope(await post(context.server, `${base}/login`, { username, password: typed }), 0);
      expect(await storedHash(auth, userId)).toBe(rehashed);
      expectEnvelope(await post(context.server, `${base}/login`, { username, password: `${typed}!` }), 40100);
    },
  );
});

describe("imported password hashes and throttling over HTTP", () => {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth({ throttle: { ...generousThrottle, account: [{ limit: 5, window: "15m" }] } });
    context.server = await startExpress5(context.testAuth.auth);
  });
  afterAll(async () => {
    await context.server?.close();
  });

  it("IM-1, RL-1: wrong passwords against an imported bcrypt hash count toward the account's limit; the 6th try, right or wrong, is 42900 and leaves the hash imported", async () => {
    const { auth, clock } = context.testAuth;
    const userId = await importUser(auth, "throttled", await bcryptjs.hash(password, 10));
    const imported = await storedHash(auth, userId);
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      expectEnvelope(await post(context.server, `${base}/login`, { username: "throttled", password: "a wrong guess" }), 40100);
    }
    const sixth = await post(context.server, `${base}/login`, { username: "throttled", password });
    expectEnvelope(sixth, 42900);
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await storedHash(auth, userId)).toBe(imported);
    clock.advance(15 * 60 * 1000);
    expectEnvelope(await post(context.server, `${base}/login`, { username: "throttled", password }), 0);
    expect(isOwnArgon2id(await storedHash(auth, userId))).toBe(true);
  });

  it("IM-1, PW-4: a password over the byte cap against an imported hash is 40100, as for any account", async () => {
    const { auth } = context.testAuth;
    const userId = await importUser(auth, "capped", await bcryptjs.hash(password, 4));
    expectEnvelope(await post(context.server, `${base}/login`, { username: "capped", password: "a".repeat(1025) }), 40100);
    expect((await storedHash(auth, userId))?.startsWith("imported:")).toBe(true);
  });
});
