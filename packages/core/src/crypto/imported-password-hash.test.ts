import { pbkdf2Sync, randomBytes, scryptSync } from "node:crypto";
import { hash as argon2Hash } from "@node-rs/argon2";
import bcryptjs from "bcryptjs";
import { hashPassword as betterAuthHashPassword } from "better-auth/crypto";
import { describe, expect, it } from "vitest";
import {
  IMPORTED_HASH_PREFIX,
  parseImportedPasswordHash,
  readStoredImportedHash,
  verifyImportedPasswordHash,
} from "./imported-password-hash.js";

/** Parses at import, reads back what an import stored, and verifies as sign-in does. */
async function verifies(text: string, password: string): Promise<boolean> {
  const parsed = parseImportedPasswordHash(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  const read = parsed.stored.startsWith(IMPORTED_HASH_PREFIX) ? readStoredImportedHash(parsed.stored) : parsed;
  if (!read?.ok) throw new Error("the stored form does not read back");
  return verifyImportedPasswordHash(read.hash, password.normalize("NFKC"));
}

const refusal = (text: string) => {
  const parsed = parseImportedPasswordHash(text);
  return parsed.ok ? null : parsed.reason;
};

/** passlib's base64 (unpadded, `.` for `+`). */
const ab64 = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "").replaceAll("+", ".");
const b64 = (bytes: Buffer) => bytes.toString("base64").replace(/=+$/, "");

describe("imported password hashes", () => {
  it("IM-1: bcrypt $2b$ made by bcryptjs at cost 12 verifies the password and nothing else", async () => {
    const text = await bcryptjs.hash("correct horse battery staple", 12);
    expect(text.startsWith("$2b$12$")).toBe(true);
    expect(parseImportedPasswordHash(text)).toMatchObject({ ok: true, hash: { format: "bcrypt", cost: 12 } });
    expect(await verifies(text, "correct horse battery staple")).toBe(true);
    expect(await verifies(text, "correct horse battery stapl")).toBe(false);
  });

  it("IM-1: bcrypt $2a$ and $2y$ reference vectors (OpenWall's crypt_blowfish, PHP's manual), as bcryptjs reads them", async () => {
    const openwall = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    const php = "$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a";
    expect(bcryptjs.compareSync("U*U", openwall)).toBe(true);
    expect(bcryptjs.compareSync("rasmuslerdorf", php)).toBe(true);
    expect(await verifies(openwall, "U*U")).toBe(true);
    expect(await verifies(openwall, "U*V")).toBe(false);
    expect(await verifies(php, "rasmuslerdorf")).toBe(true);
    expect(await verifies(php, "rasmuslerdorF")).toBe(false);
  });

  it("IM-1, PW-2: a bcrypt hash never proves a password over 72 bytes, though bcrypt itself would accept its first 72", async () => {
    const long = `${"a".repeat(72)}tail`;
    const text = await bcryptjs.hash(long, 4);
    expect(bcryptjs.compareSync(`${"a".repeat(72)}other`, text)).toBe(true);
    expect(await verifies(text, long)).toBe(false);
    expect(await verifies(text, `${"a".repeat(72)}other`)).toBe(false);
    const exactly72 = await bcryptjs.hash("b".repeat(72), 4);
    expect(await verifies(exactly72, "b".repeat(72))).toBe(true);
  });

  it("IM-1: scrypt as a PHC string, made by Node's crypto.scrypt (standard and passlib base64)", async () => {
    const salt = randomBytes(16);
    const key = scryptSync("pässwörd", salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    for (const encode of [b64, ab64]) {
      const text = `$scrypt$ln=14,r=8,p=1$${encode(salt)}$${encode(key)}`;
      expect(parseImportedPasswordHash(text)).toMatchObject({ ok: true, hash: { format: "scrypt", N: 16384, r: 8, p: 1 } });
      expect(await verifies(text, "pässwörd")).toBe(true);
      expect(await verifies(text, "passwörd")).toBe(false);
    }
  });

  it("IM-1: scrypt in Better Auth's salt:key form, made by Better Auth's own hashPassword", async () => {
    const text = await betterAuthHashPassword("pässwörd \ufb01sh");
    expect(text).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(parseImportedPasswordHash(text)).toMatchObject({
      ok: true,
      hash: { format: "scrypt", encoding: "better-auth", N: 16384, r: 16, p: 1 },
    });
    expect(await verifies(text, "pässwörd \ufb01sh")).toBe(true);
    expect(await verifies(text, "pässwörd fish")).toBe(true); // both NFKC, as Better Auth hashes
    expect(await verifies(text, "pässwörd fist")).toBe(false);
  });

  it("IM-1: PBKDF2 in Django's form, Django's own test vectors (pbkdf2_sha256 and pbkdf2_sha1)", async () => {
    // tests/auth_tests/test_hashers.py: test_pbkdf2 and test_low_level_pbkdf2_sha1.
    const sha256 = "pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=";
    const sha1 = "pbkdf2_sha1$600000$seasalt2$2CLsaL1MZhq6JOG6QOHtVbiopHE=";
    expect(parseImportedPasswordHash(sha256)).toMatchObject({
      ok: true,
      hash: { format: "pbkdf2", encoding: "django", digest: "sha256", iterations: 390000 },
    });
    expect(await verifies(sha256, "lètmein")).toBe(true);
    expect(await verifies(sha256, "lètmeinz")).toBe(false);
    expect(await verifies(sha1, "lètmein")).toBe(true);
    expect(await verifies(sha1, "letmein")).toBe(false);
  });

  it("IM-1: PBKDF2 as a PHC string, made by Node's crypto.pbkdf2 (passlib's $rounds$ and the PHC spec's $i=…,l=…$)", async () => {
    const salt = randomBytes(16);
    const sha256 = pbkdf2Sync("pässwörd", salt, 29000, 32, "sha256");
    const sha512 = pbkdf2Sync("pässwörd", salt, 25000, 64, "sha512");
    for (const text of [
      `$pbkdf2-sha256$29000$${ab64(salt)}$${ab64(sha256)}`,
      `$pbkdf2-sha256$i=29000,l=32$${b64(salt)}$${b64(sha256)}`,
      `$pbkdf2-sha512$25000$${ab64(salt)}$${ab64(sha512)}`,
    ]) {
      expect(await verifies(text, "pässwörd"), text).toBe(true);
      expect(await verifies(text, "pässwörd!"), text).toBe(false);
    }
  });

  it("IM-1: argon2i, argon2d and argon2id PHC strings made by @node-rs/argon2", async () => {
    for (const [algorithm, variant] of [
      [0, "argon2d"],
      [1, "argon2i"],
      [2, "argon2id"],
    ] as const) {
      const text = await argon2Hash("pässwörd", { algorithm, memoryCost: 4096, timeCost: 3, parallelism: 1 });
      expect(text.startsWith(`$${variant}$v=19$`)).toBe(true);
      expect(parseImportedPasswordHash(text)).toMatchObject({ ok: true, hash: { format: "argon2", variant } });
      expect(await verifies(text, "pässwörd")).toBe(true);
      expect(await verifies(text, "passwörd")).toBe(false);
    }
  });

  it("IM-1: an argon2id hash this library reads as its own is stored as it is; every other format is stored marked as imported", async () => {
    const argon2id = await argon2Hash("pw", { algorithm: 2, memoryCost: 4096, timeCost: 3, parallelism: 1 });
    const argon2i = await argon2Hash("pw", { algorithm: 1, memoryCost: 4096, timeCost: 3, parallelism: 1 });
    expect(parseImportedPasswordHash(argon2id)).toMatchObject({ ok: true, stored: argon2id });
    expect(parseImportedPasswordHash(argon2i)).toMatchObject({ ok: true, stored: `imported:${argon2i}` });
    const bcrypt = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    expect(parseImportedPasswordHash(bcrypt)).toMatchObject({ ok: true, stored: `imported:${bcrypt}` });
    expect(readStoredImportedHash(bcrypt)).toBeNull();
    expect(readStoredImportedHash(argon2i)).toBeNull();
    expect(readStoredImportedHash(`imported:${bcrypt}`)).toMatchObject({ ok: true, hash: { format: "bcrypt", cost: 5 } });
    expect(readStoredImportedHash("imported:$2b$05$short")).toMatchObject({ ok: false, reason: /^bcrypt: expected/ });
    // A hash an earlier release stored under wider caps reads as refused, with the reason.
    expect(readStoredImportedHash(`imported:${bcrypt.replace("$05$", "$13$")}`)).toEqual({
      ok: false,
      reason: "bcrypt: the cost must be 4 to 12, not 13",
    });
  });

  it("IM-1: unknown and malformed hashes of each format are refused at import, each with its reason", () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    const cases: [string, RegExp][] = [
      ["", /empty/],
      ["x".repeat(513), /longer than 512/],
      ["hunter2", /unknown password hash format/],
      ["md5$seasalt$3f86d0d3d465b7b458c231bf3555c0e3", /unknown password hash format/],
      ["imported:$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", /unknown password hash format/],
      // bcrypt
      ["$2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", /\$2x\$/],
      ["$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOe", /53 characters/],
      ["$2b$5$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", /two-digit cost/],
      ["$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOe!", /53 characters/],
      ["$2b$03$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", /cost must be 4 to 12, not 3/],
      ["$2b$13$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW", /cost must be 4 to 12, not 13/],
      // scrypt, PHC
      [`$scrypt$ln=14,r=8$${salt}$${key}`, /expected \$scrypt\$ln=/],
      [`$scrypt$ln=0,r=8,p=1$${salt}$${key}`, /power of two above 1/],
      [`$scrypt$ln=22,r=8,p=1$${salt}$${key}`, /N·r·p is 2\^22·8·1, over the limit of 2\^19/],
      [`$scrypt$ln=14,r=8,p=17$${salt}$${key}`, /p 1 to 16/],
      [`$scrypt$ln=14,r=8,p=1$${salt}!$${key}`, /salt is not valid base64/],
      [`$scrypt$ln=14,r=8,p=1$${salt}$${key}AB`, /hash is not valid base64/],
      [`$scrypt$ln=14,r=8,p=1$${salt}$${b64(randomBytes(8))}`, /16 to 128 bytes, not 8/],
      // scrypt, Better Auth
      [`${"a".repeat(32)}:${"b".repeat(126)}`, /must be 64 bytes/],
      [`${"a".repeat(30)}:${"b".repeat(128)}`, /32 lower-case hex characters of salt/],
      [`${"A".repeat(32)}:${"b".repeat(128)}`, /32 lower-case hex characters of salt/],
      // PBKDF2, Django
      ["pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c", /not valid base64/],
      ["pbkdf2_sha256$0$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=", /iterations must be at least 1/],
      ["pbkdf2_sha256$9000000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=", /over the limit of 1500000/],
      ["pbkdf2_sha256$390000$seasalt$2CLsaL1MZhq6JOG6QOHtVbiopHE=", /must be 32 bytes, not 20/],
      ["pbkdf2_sha256$390000$$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=", /expected pbkdf2_sha256\$iterations/],
      ["pbkdf2_md5$10000$seasalt$3G81rAm/4ng0tCCPTrx2aWohq7ztDBfFYczGNoUtiKQ=", /expected pbkdf2_sha256\$iterations/],
      // PBKDF2, PHC
      [`$pbkdf2-sha1$29000$${salt}$${key}`, /expected \$pbkdf2-sha256\$/],
      [`$pbkdf2-sha256$i=29000,l=64$${salt}$${key}`, /must be 64 bytes, not 32/],
      [`$pbkdf2-sha256$29000$${salt}`, /expected \$pbkdf2-sha256\$/],
      // argon2
      [`$argon2id$v=19$m=19456,t=2$${salt}$${key}`, /expected \$argon2i\$/],
      [`$argon2x$v=19$m=19456,t=2,p=1$${salt}$${key}`, /expected \$argon2i\$/],
      [`$argon2i$v=19$m=524288,t=2,p=1$${salt}$${key}`, /128 MiB/],
      [`$argon2i$v=19$m=19456,t=21,p=1$${salt}$${key}`, /t must be 1 to 20/],
      [`$argon2d$v=19$m=64,t=2,p=16$${salt}$${key}`, /m at least 8·p/],
      [`$argon2i$v=19$m=19456,t=2,p=1$${b64(randomBytes(4))}$${key}`, /salt must be base64 of at least 8 bytes/],
      [`$argon2i$v=19$m=19456,t=2,p=1$${salt}$${key}=`, /hash is not valid base64/],
    ];
    const unrefused = cases.filter(([text]) => refusal(text) === null).map(([text]) => text);
    expect(unrefused).toEqual([]);
    for (const [text, reason] of cases) expect(refusal(text), text).toMatch(reason);
  });

  it("IM-1, PW-4: each cost limit is accepted at its value and refused one step beyond", () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    const keyOf = (bytes: number) => b64(randomBytes(bytes));
    const bcryptTail = "CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    const django = "8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=";
    const djangoSha1 = "2CLsaL1MZhq6JOG6QOHtVbiopHE=";
    const accepted = [
      `$2b$04$${bcryptTail}`,
      `$2b$12$${bcryptTail}`,
      // scrypt: N = 2, r = 1, p = 1; N·r·p exactly 2^19 with p = 1 and with p = 16; r = 1 up to N = 2^15
      `$scrypt$ln=1,r=1,p=1$${salt}$${key}`,
      `$scrypt$ln=16,r=8,p=1$${salt}$${key}`,
      `$scrypt$ln=12,r=8,p=16$${salt}$${key}`,
      `$scrypt$ln=15,r=1,p=16$${salt}$${key}`,
      `$scrypt$ln=16,r=2,p=4$${salt}$${key}`,
      `$scrypt$ln=14,r=16,p=2$${salt}$${key}`,
      // PBKDF2: the iterations times the blocks of the key exactly at each digest's limit
      `pbkdf2_sha256$1$seasalt$${django}`,
      `pbkdf2_sha256$1500000$seasalt$${django}`,
      `pbkdf2_sha1$1000000$seasalt$${djangoSha1}`,
      `$pbkdf2-sha256$1$${salt}$${key}`,
      `$pbkdf2-sha256$1500000$${salt}$${key}`,
      `$pbkdf2-sha256$i=29000$${salt}$${key}`,
      `$pbkdf2-sha256$i=375000,l=128$${salt}$${keyOf(128)}`,
      `$pbkdf2-sha256$i=750000,l=33$${salt}$${keyOf(33)}`,
      `$pbkdf2-sha512$250000$${salt}$${keyOf(64)}`,
      `$pbkdf2-sha512$i=125000,l=65$${salt}$${keyOf(65)}`,
      // argon2: m exactly 128 MiB with m·t at its limit, t = 1 and t = 20, p = 16 with m = 8·p
      `$argon2id$v=19$m=131072,t=2,p=1$${salt}$${key}`,
      `$argon2id$v=19$m=131072,t=1,p=1$${salt}$${key}`,
      `$argon2i$v=19$m=13107,t=20,p=1$${salt}$${key}`,
      `$argon2d$v=19$m=128,t=2,p=16$${salt}$${key}`,
      `$argon2i$m=8,t=2,p=1$${salt}$${key}`,
    ];
    const refused: [string, RegExp][] = [
      [`$scrypt$ln=14,r=0,p=1$${salt}$${key}`, /r must be at least 1/],
      [`$scrypt$ln=14,r=8,p=0$${salt}$${key}`, /p 1 to 16/],
      [`$scrypt$ln=17,r=8,p=1$${salt}$${key}`, /N·r·p is 2\^17·8·1, over the limit of 2\^19/],
      [`$scrypt$ln=13,r=8,p=16$${salt}$${key}`, /N·r·p is 2\^13·8·16, over the limit of 2\^19/],
      [`$scrypt$ln=16,r=8,p=2$${salt}$${key}`, /N·r·p is 2\^16·8·2, over the limit of 2\^19/],
      [`$scrypt$ln=16,r=1,p=1$${salt}$${key}`, /not 2\^16 with r = 1: this hash never verifies/],
      [`$scrypt$ln=19,r=1,p=1$${salt}$${key}`, /not 2\^19 with r = 1: this hash never verifies/],
      [`$pbkdf2-sha256$0$${salt}$${key}`, /iterations must be at least 1/],
      [
        `$pbkdf2-sha256$1500001$${salt}$${key}`,
        /1500001 iterations × 1 block of the key is over the limit of 1500000 for sha256/,
      ],
      [`pbkdf2_sha256$1500001$seasalt$${django}`, /over the limit of 1500000 for sha256/],
      [`pbkdf2_sha1$1000001$seasalt$${djangoSha1}`, /over the limit of 1000000 for sha1/],
      [`$pbkdf2-sha256$i=375001,l=128$${salt}$${keyOf(128)}`, /375001 iterations × 4 blocks/],
      [`$pbkdf2-sha256$i=750001,l=33$${salt}$${keyOf(33)}`, /750001 iterations × 2 blocks/],
      [`$pbkdf2-sha512$250001$${salt}$${keyOf(64)}`, /over the limit of 250000 for sha512/],
      [`$pbkdf2-sha512$i=125001,l=65$${salt}$${keyOf(65)}`, /125001 iterations × 2 blocks .* 250000 for sha512/],
      [`$argon2id$v=19$m=131073,t=1,p=1$${salt}$${key}`, /m is over the 128 MiB limit/],
      [`$argon2id$v=19$m=87382,t=3,p=1$${salt}$${key}`, /m·t is 262146 KiB, over the limit of 262144/],
      [`$argon2i$v=19$m=13108,t=20,p=1$${salt}$${key}`, /m·t is 262160 KiB, over the limit of 262144/],
      [`$argon2i$v=19$m=19456,t=0,p=1$${salt}$${key}`, /t must be 1 to 20/],
      [`$argon2i$v=19$m=8192,t=21,p=1$${salt}$${key}`, /t must be 1 to 20/],
      [`$argon2i$v=19$m=19456,t=2,p=0$${salt}$${key}`, /p must be 1 to 16/],
      [`$argon2i$v=19$m=19456,t=2,p=17$${salt}$${key}`, /p must be 1 to 16/],
      [`$argon2d$v=19$m=127,t=2,p=16$${salt}$${key}`, /m at least 8·p/],
    ];
    expect(accepted.filter((text) => refusal(text) !== null).map((text) => [text, refusal(text)])).toEqual([]);
    for (const [text, reason] of refused) expect(refusal(text), text).toMatch(reason);
  });

  it("PW-4, IM-1: the caps bound the work a verification does: scrypt's p and PBKDF2's key length count, and argon2's m·t", () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    const key128 = b64(randomBytes(128));
    // The three hashes that held the only hashing slot for seconds (issue 36): each is refused with the work it asks for.
    expect(refusal(`$scrypt$ln=18,r=8,p=16$${salt}$${key}`)).toBe("scrypt: N·r·p is 2^18·8·16, over the limit of 2^19");
    expect(refusal(`$pbkdf2-sha256$i=5000000,l=128$${salt}$${key128}`)).toBe(
      "pbkdf2: 5000000 iterations × 4 blocks of the key is over the limit of 1500000 for sha256",
    );
    expect(refusal(`$argon2id$v=19$m=262144,t=20,p=1$${salt}$${key}`)).toBe("argon2: m is over the 128 MiB limit");
    // Node's default scrypt (ln=14, r=8) is accepted at p = 4 (2^19) and refused at p = 16, 2^21.
    expect(refusal(`$scrypt$ln=14,r=8,p=4$${salt}$${key}`)).toBeNull();
    expect(refusal(`$scrypt$ln=14,r=8,p=16$${salt}$${key}`)).toBe("scrypt: N·r·p is 2^14·8·16, over the limit of 2^19");
    // PBKDF2 computes every block of the key with all the iterations: 1,000,000 is accepted for a 32-byte key, not a 128-byte one.
    expect(refusal(`$pbkdf2-sha256$i=1000000,l=32$${salt}$${key}`)).toBeNull();
    expect(refusal(`$pbkdf2-sha256$i=1000000,l=128$${salt}$${key128}`)).toBe(
      "pbkdf2: 1000000 iterations × 4 blocks of the key is over the limit of 1500000 for sha256",
    );
    // argon2 passes over m KiB t times: 64 MiB is accepted at t = 4, not at t = 5.
    expect(refusal(`$argon2id$v=19$m=65536,t=4,p=1$${salt}$${key}`)).toBeNull();
    expect(refusal(`$argon2id$v=19$m=65536,t=5,p=1$${salt}$${key}`)).toBe("argon2: m·t is 327680 KiB, over the limit of 262144");
  });

  it("IM-1: parameters the library can never verify are refused at import, and hashes made at each format's accepted edges sign in", async () => {
    const salt = randomBytes(16);
    // OpenSSL's scrypt needs N < 2^(16·r) (RFC 7914): with r = 1, N = 2^16 never computes, whatever the memory.
    expect(() => scryptSync("pw", salt, 32, { N: 2 ** 16, r: 1, p: 1, maxmem: 2 ** 30 })).toThrow();
    const r1 = scryptSync("pw", salt, 32, { N: 2 ** 15, r: 1, p: 1 });
    expect(await verifies(`$scrypt$ln=15,r=1,p=1$${b64(salt)}$${b64(r1)}`, "pw")).toBe(true);
    expect(refusal(`$scrypt$ln=16,r=1,p=1$${b64(salt)}$${b64(r1)}`)).toBe(
      "scrypt: N must be below 2^(16·r) (RFC 7914), not 2^16 with r = 1: this hash never verifies",
    );
    expect(refusal(`$scrypt$ln=17,r=2,p=1$${b64(salt)}$${b64(r1)}`)).toBeNull();
    // bcrypt writes its 23 checksum bytes in 31 characters, the last with two zero bits: another last character never matches.
    const bcrypt = await bcryptjs.hash("pw", 4);
    const alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const bumped = `${bcrypt.slice(0, -1)}${alphabet[alphabet.indexOf(bcrypt.at(-1) as string) + 1]}`;
    expect(bcryptjs.compareSync("pw", bumped)).toBe(false);
    expect(refusal(bumped)).toBe("bcrypt: the hash ends in a character bcrypt never writes there: it never verifies");
    expect(await verifies(bcrypt, "pw")).toBe(true);
    // scrypt at the work limit with p = 16, PBKDF2 at the limit with a 128-byte key (four blocks), argon2 at the memory limit.
    const scryptKey = scryptSync("pw", salt, 64, { N: 2 ** 12, r: 8, p: 16 });
    expect(await verifies(`$scrypt$ln=12,r=8,p=16$${b64(salt)}$${b64(scryptKey)}`, "pw")).toBe(true);
    const pbkdf2Key = pbkdf2Sync("pw", salt, 375_000, 128, "sha256");
    expect(await verifies(`$pbkdf2-sha256$i=375000,l=128$${b64(salt)}$${b64(pbkdf2Key)}`, "pw")).toBe(true);
    const argon2AtMemory = await argon2Hash("pw", { algorithm: 1, memoryCost: 131072, timeCost: 2, parallelism: 1 });
    expect(await verifies(argon2AtMemory, "pw")).toBe(true);
    // argon2 with p = 16 at m = 8·p, an 8-byte salt and a 128-byte hash; and a string without v=, which is version 1.0 (v=16).
    const lanes = await argon2Hash("pw", { algorithm: 0, memoryCost: 128, timeCost: 1, parallelism: 16, outputLen: 128 });
    expect(await verifies(lanes, "pw")).toBe(true);
    const shortSalt = await argon2Hash("pw", {
      algorithm: 2,
      memoryCost: 1024,
      timeCost: 1,
      parallelism: 1,
      salt: randomBytes(8),
    });
    expect(await verifies(shortSalt, "pw")).toBe(true);
    const version10 = await argon2Hash("pw", { algorithm: 1, memoryCost: 1024, timeCost: 1, parallelism: 1, version: 0 });
    expect(version10).toContain("$v=16$");
    expect(await verifies(version10.replace("$v=16$", "$"), "pw")).toBe(true);
  });

  it("IM-1: a hash of 16 to 128 bytes, an argon2 salt of 8 bytes or more, and a text of up to 512 characters are read; one step beyond is refused", () => {
    const salt = b64(randomBytes(16));
    const scrypt = (bytes: number) => `$scrypt$ln=14,r=8,p=1$${salt}$${b64(randomBytes(bytes))}`;
    const argon2 = (saltBytes: number) => `$argon2i$v=19$m=19456,t=2,p=1$${b64(randomBytes(saltBytes))}$${b64(randomBytes(32))}`;
    for (const text of [scrypt(16), scrypt(128), argon2(8)]) expect(refusal(text), text).toBeNull();
    expect(refusal(scrypt(15))).toBe("scrypt: the hash must be 16 to 128 bytes, not 15");
    expect(refusal(scrypt(129))).toBe("scrypt: the hash must be 16 to 128 bytes, not 129");
    expect(refusal(argon2(7))).toMatch(/salt must be base64 of at least 8 bytes/);
    expect(refusal("x".repeat(512))).toMatch(/unknown password hash format/);
    expect(refusal("x".repeat(513))).toMatch(/longer than 512/);
  });

  it("IM-1: each refusal names the format that read the hash", () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    const django = "8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=";
    const reasons: [string, string][] = [
      [`$scrypt$ln=0,r=8,p=1$${salt}$${key}`, "scrypt: N must be a power of two above 1"],
      [`$pbkdf2-sha256$0$${salt}$${key}`, "pbkdf2: the iterations must be at least 1"],
      [`$pbkdf2-sha256$29000$${salt}!$${key}`, "pbkdf2: the salt is not valid base64"],
      [`$pbkdf2-sha256$29000$${salt}$${b64(randomBytes(8))}`, "pbkdf2: the hash must be 16 to 128 bytes, not 8"],
      [`pbkdf2_sha256$0$seasalt$${django}`, "pbkdf2 (Django): the iterations must be at least 1"],
      [
        `pbkdf2_sha256$1500001$seasalt$${django}`,
        "pbkdf2 (Django): 1500001 iterations × 1 block of the key is over the limit of 1500000 for sha256",
      ],
      [
        "pbkdf2_sha1$600000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=",
        "pbkdf2 (Django): the hash must be 20 bytes, not 32",
      ],
      [`$argon2i$v=19$m=19456,t=2,p=1$${salt}$${b64(randomBytes(8))}`, "argon2: the hash must be 16 to 128 bytes, not 8"],
    ];
    for (const [text, reason] of reasons) expect(refusal(text), text).toBe(reason);
  });

  it("IM-1: a hash of a known format with anything before or after it is malformed and refused", () => {
    const salt = b64(randomBytes(16));
    const key = b64(randomBytes(32));
    const bcrypt = "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    const betterAuth = `${"a".repeat(32)}:${"b".repeat(128)}`;
    const wellFormed = [
      bcrypt,
      `$scrypt$ln=14,r=8,p=1$${salt}$${key}`,
      `$pbkdf2-sha256$29000$${salt}$${key}`,
      `pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=`,
      `$argon2i$v=19$m=19456,t=2,p=1$${salt}$${key}`,
      betterAuth,
    ];
    for (const text of wellFormed) expect(refusal(text), text).toBeNull();
    const malformed = [
      `$2b$05$x${bcrypt}`,
      `${bcrypt}$x`,
      `${bcrypt}u`,
      `$scrypt$x$scrypt$ln=14,r=8,p=1$${salt}$${key}`,
      `$scrypt$ln=14,r=8,p=1$${salt}$${key}$x`,
      `$pbkdf2-sha256$x$pbkdf2-sha256$29000$${salt}$${key}`,
      `$pbkdf2-sha256$29000$${salt}$${key}$x`,
      `pbkdf2_sha256$x$pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=`,
      `pbkdf2_sha256$390000$seasalt$8xBlGd3jVgvJ+92hWPxi5ww0uuAuAnKgC45eudxro7c=$x`,
      `$argon2i$x$argon2i$v=19$m=19456,t=2,p=1$${salt}$${key}`,
      `$argon2i$v=19$m=19456,t=2,p=1$${salt}$${key}$x`,
      `aa${betterAuth}`,
      `${betterAuth}g`,
    ];
    expect(malformed.filter((text) => refusal(text) === null)).toEqual([]);
    expect(refusal(`g${betterAuth}`)).toMatch(/^unknown password hash format/);
  });

  it("IM-1: bcrypt's other prefixes ($2$, $2x$) are refused as bcrypt variants, not as an unknown format", () => {
    for (const prefix of ["$2$", "$2x$", "$2xy$"]) {
      expect(refusal(`${prefix}05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW`)).toMatch(
        /only \$2a\$, \$2b\$ and \$2y\$/,
      );
    }
  });

  it("PW-1: a stored hash is read as imported only behind the imported: marker, not behind any other nine characters", () => {
    const bcrypt = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    expect("unmarked:").toHaveLength(IMPORTED_HASH_PREFIX.length);
    expect(readStoredImportedHash(`${IMPORTED_HASH_PREFIX}${bcrypt}`)).toMatchObject({ ok: true, hash: { format: "bcrypt" } });
    expect(readStoredImportedHash(`unmarked:${bcrypt}`)).toBeNull();
  });

  it("IM-1: a value that is not a string is refused as no hash, not thrown on", () => {
    for (const value of [undefined, null, 42, { $ne: "" }, ["$2b$"]]) {
      expect(parseImportedPasswordHash(value as unknown as string)).toEqual({ ok: false, reason: "the password hash is empty" });
    }
  });

  it("IM-1: a refusal's reason never repeats the hash", () => {
    const secretish = "$2b$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOe";
    expect(refusal(secretish)).not.toContain("CCCC");
    expect(refusal("pbkdf2_sha256$390000$seasalt$8xBlGd3j")).not.toContain("seasalt");
  });
});
