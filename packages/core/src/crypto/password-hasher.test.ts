import { randomBytes as nodeRandomBytes } from "node:crypto";
import { hash as argon2Hash } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config.js";
import { memoryStorage } from "../storage/memory.js";
import { createPasswordHasher, phcParameters } from "./password-hasher.js";

const baseConfig = {
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "x".repeat(32), encryption: "00".repeat(32) },
};
const defaults = resolveConfig(baseConfig).password;
const randomBytes = (size: number) => new Uint8Array(nodeRandomBytes(size));
const hasher = createPasswordHasher(defaults, randomBytes);

/** The salt of a PHC string: the fourth `$` segment, unpadded base64. */
const saltOf = (phc: string) => Buffer.from(phc.split("$")[4] as string, "base64");

describe("password hasher", () => {
  it("PW-1: a password is stored as an argon2id PHC string with m=19456, t=2, p=1 and a 16-byte salt", async () => {
    const phc = await hasher.hash("correct horse battery staple");
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(saltOf(phc)).toHaveLength(16);
    expect(phcParameters(phc)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(await hasher.verify(phc, "correct horse battery staple")).toBe(true);
    expect(await hasher.verify(phc, "correct horse battery stapl")).toBe(false);
  });

  it("PW-1: the salt is random: the same password hashes differently each time", async () => {
    const [first, second] = await Promise.all([hasher.hash("same password"), hasher.hash("same password")]);
    expect(saltOf(first)).not.toEqual(saltOf(second));
    expect(first).not.toBe(second);
  });

  it("PW-1: a hash with other parameters needs re-hashing; one with the configured parameters does not", async () => {
    const argon2id = 2;
    const weaker = await argon2Hash("pw", { algorithm: argon2id, memoryCost: 8192, timeCost: 2, parallelism: 1 });
    const otherTime = await argon2Hash("pw", { algorithm: argon2id, memoryCost: 19456, timeCost: 3, parallelism: 1 });
    expect(hasher.needsRehash(weaker)).toBe(true);
    expect(hasher.needsRehash(otherTime)).toBe(true);
    expect(hasher.needsRehash(await hasher.hash("pw"))).toBe(false);
    expect(await hasher.verify(otherTime, "pw")).toBe(true);

    const stronger = createPasswordHasher(
      resolveConfig({ ...baseConfig, password: { hashing: { timeCost: 3 } } }).password,
      randomBytes,
    );
    expect(stronger.needsRehash(otherTime)).toBe(false);
    expect(stronger.needsRehash(await hasher.hash("pw"))).toBe(true);
  });

  it("PW-1: anything but an argon2id PHC string is refused, not verified", async () => {
    const argon2i = await argon2Hash("pw", { algorithm: 1, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(phcParameters(argon2i)).toBeNull();
    expect(await hasher.verify(argon2i, "pw")).toBe(false);
    expect(hasher.needsRehash(argon2i)).toBe(true);
    expect(await hasher.verify("", "pw")).toBe(false);
    expect(await hasher.verify("pw", "pw")).toBe(false);
    expect(await hasher.verify("$argon2id$v=19$m=19456,t=2,p=1$broken", "pw")).toBe(false);
  });

  it("EN-2: the dummy verification runs argon2id and never throws", async () => {
    await expect(hasher.verifyDummy("whatever")).resolves.toBeUndefined();
    await expect(hasher.verifyDummy("")).resolves.toBeUndefined();
  });
});
