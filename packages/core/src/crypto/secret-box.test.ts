import { createCipheriv, createDecipheriv, randomBytes as nodeRandomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { createSecretBox } from "./secret-box.js";

const randomBytes = (size: number) => new Uint8Array(nodeRandomBytes(size));
const keyOne = nodeRandomBytes(32);
const keyTwo = nodeRandomBytes(32);
const secret = new Uint8Array(nodeRandomBytes(20));

function openError(run: () => unknown): AuthError {
  try {
    run();
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error("expected the secret not to open");
}

describe("secret box", () => {
  it("TOTP-6: seals with AES-256-GCM: nonce, ciphertext and tag, with the key id and the associated data", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const sealed = box.seal(secret, "portcullis:totp:user-1");
    expect(sealed.keyId).toBe("k1");
    const raw = Buffer.from(sealed.sealed, "base64url");
    expect(raw).toHaveLength(12 + 20 + 16);
    expect(raw.includes(Buffer.from(secret))).toBe(false);
    const decipher = createDecipheriv("aes-256-gcm", keyOne, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from("portcullis:totp:user-1"));
    decipher.setAuthTag(raw.subarray(32));
    expect(Buffer.concat([decipher.update(raw.subarray(12, 32)), decipher.final()])).toEqual(Buffer.from(secret));
    expect(box.open(sealed, "portcullis:totp:user-1")).toEqual(Buffer.from(secret));
  });

  it("TOTP-6: every seal uses a fresh random nonce", () => {
    const box = createSecretBox(keyOne.toString("hex"), randomBytes);
    const nonces = new Set(
      Array.from({ length: 20 }, () => Buffer.from(box.seal(secret, "a").sealed, "base64url").subarray(0, 12).toString("hex")),
    );
    expect(nonces.size).toBe(20);
  });

  it("TOTP-6: the associated data binds the secret to its user", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const sealed = box.seal(secret, "portcullis:totp:user-1");
    expect(openError(() => box.open(sealed, "portcullis:totp:user-2")).code).toBe(ErrorCode.Internal);
  });

  it("TOTP-6: an altered ciphertext, a truncated one or an unknown key id is refused", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const sealed = box.seal(secret, "aad");
    const raw = Buffer.from(sealed.sealed, "base64url");
    raw[15] = (raw[15] as number) ^ 1;
    expect(openError(() => box.open({ ...sealed, sealed: raw.toString("base64url") }, "aad")).code).toBe(ErrorCode.Internal);
    expect(openError(() => box.open({ ...sealed, sealed: sealed.sealed.slice(0, 30) }, "aad")).code).toBe(ErrorCode.Internal);
    expect(openError(() => box.open({ ...sealed, keyId: "k9" }, "aad")).code).toBe(ErrorCode.Internal);
  });

  it("TOTP-6: a key id the keyring does not hold is refused before any decryption: 50000 with no decryption error as cause", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const sealed = box.seal(secret, "aad");
    for (const keyId of ["k9", "", "__proto__", "constructor"]) {
      const error = openError(() => box.open({ ...sealed, keyId }, "aad"));
      expect(error.code, keyId).toBe(ErrorCode.Internal);
      expect(error.message).toBe("A stored secret could not be decrypted");
      expect(error.cause, keyId).toBeUndefined();
    }
  });

  it("TOTP-6: a keyring seals with the current key and opens what older keys sealed", () => {
    const before = createSecretBox({ current: "k1", keys: { k1: keyOne.toString("base64url") } }, randomBytes);
    const sealedByOne = before.seal(secret, "aad");
    const after = createSecretBox(
      { current: "k2", keys: { k1: keyOne.toString("base64url"), k2: keyTwo.toString("hex") } },
      randomBytes,
    );
    expect(after.open(sealedByOne, "aad")).toEqual(Buffer.from(secret));
    const sealedByTwo = after.seal(secret, "aad");
    expect(sealedByTwo.keyId).toBe("k2");
    expect(openError(() => before.open(sealedByTwo, "aad")).code).toBe(ErrorCode.Internal);
  });

  it("TOTP-6: keys come from configuration and must be 32 bytes", () => {
    expect(() => createSecretBox(nodeRandomBytes(31).toString("base64url"), randomBytes)).toThrow(/secrets\.encryption/);
    expect(() => createSecretBox(nodeRandomBytes(33).toString("hex"), randomBytes)).toThrow(/secrets\.encryption/);
    expect(() => createSecretBox("not a key at all", randomBytes)).toThrow(TypeError);
    expect(() => createSecretBox(undefined, randomBytes)).toThrow(/secrets\.encryption is required/);
    expect(() => createSecretBox({ current: "k2", keys: { k1: keyOne.toString("hex") } }, randomBytes)).toThrow(/current/);
    expect(() => createSecretBox({ current: "k1", keys: { k1: "short" } }, randomBytes)).toThrow(/"k1"/);
    expect(() => createSecretBox(keyOne.toString("base64"), randomBytes)).not.toThrow();
  });

  it("TOTP-6: a key written in hex, base64 or base64url is the same 32 bytes: each box opens what the others sealed", () => {
    const key = Buffer.alloc(32, 0xfb);
    const written = [key.toString("hex"), key.toString("base64"), key.toString("base64url")];
    expect(written[1]).toMatch(/^\+\/.*=$/);
    expect(written[2]).toMatch(/^-_/);
    const boxes = written.map((value) => createSecretBox(value, randomBytes));
    for (const sealer of boxes) {
      const sealed = sealer.seal(secret, "aad");
      for (const opener of boxes) expect(opener.open(sealed, "aad")).toEqual(Buffer.from(secret));
    }
  });

  it("TOTP-6: a secret that does not open gives 50000 'A stored secret could not be decrypted', the decryption error kept as cause", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const sealed = box.seal(secret, "portcullis:totp:user-1");
    const error = openError(() => box.open(sealed, "portcullis:totp:user-2"));
    expect(error.code).toBe(ErrorCode.Internal);
    expect(error.message).toBe("A stored secret could not be decrypted");
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as Error).message).toMatch(/unable to authenticate data/);
  });

  it("TOTP-6: a sealed secret shorter than nonce and tag is refused, even one whose bytes pass the GCM check; the shortest real one opens", () => {
    const box = createSecretBox(keyOne.toString("base64url"), randomBytes);
    const empty = box.seal(new Uint8Array(0), "aad");
    expect(Buffer.from(empty.sealed, "base64url")).toHaveLength(12 + 16);
    expect(box.open(empty, "aad")).toHaveLength(0);
    // 27 bytes, read as a 12-byte nonce and the tag in the last 16 bytes (overlapping the nonce by
    // one): when the tag of an empty message under that nonce begins with the nonce's last byte,
    // these bytes pass AES-GCM's own check. About one nonce in 256 does.
    let forged: Buffer | undefined;
    for (let attempt = 0; attempt < 10_000 && !forged; attempt += 1) {
      const nonce = nodeRandomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", keyOne, nonce);
      cipher.setAAD(Buffer.from("aad"));
      cipher.final();
      const tag = cipher.getAuthTag();
      if (tag[0] === nonce[11]) forged = Buffer.concat([nonce, tag.subarray(1)]);
    }
    expect(forged).toHaveLength(27);
    const error = openError(() => box.open({ keyId: "k1", sealed: (forged as Buffer).toString("base64url") }, "aad"));
    expect(error.code).toBe(ErrorCode.Internal);
  });

  it("deriveKey is HKDF-SHA256 of the current key, salt 'portcullis', the purpose as info: stable across releases, one key per purpose", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, index) => index));
    const box = createSecretBox(key.toString("hex"), randomBytes);
    // RFC 5869 over these inputs, computed once; the username pseudonyms stored in counters depend on it.
    expect(box.deriveKey("portcullis username pseudonym v1").toString("hex")).toBe(
      "34969a362212cd65988d378d82673ba0372b53adeaa48ce8674e80d9a912f77d",
    );
    expect(box.deriveKey("another purpose")).not.toEqual(box.deriveKey("portcullis username pseudonym v1"));
    const rotated = createSecretBox(
      { current: "k2", keys: { k1: keyOne.toString("hex"), k2: key.toString("base64url") } },
      randomBytes,
    );
    expect(rotated.deriveKey("portcullis username pseudonym v1")).toEqual(box.deriveKey("portcullis username pseudonym v1"));
  });

  it("deriveKeys derives from every key of the ring, the current one first, each as deriveKey would with it current", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, index) => index)).toString("hex");
    const other = keyOne.toString("hex");
    const rotated = createSecretBox({ current: "k2", keys: { k1: other, k2: key } }, randomBytes);
    const purpose = "some purpose";
    expect(rotated.deriveKeys(purpose)).toEqual([
      createSecretBox(key, randomBytes).deriveKey(purpose),
      createSecretBox(other, randomBytes).deriveKey(purpose),
    ]);
    expect(createSecretBox(key, randomBytes).deriveKeys(purpose)).toHaveLength(1);
  });
});
