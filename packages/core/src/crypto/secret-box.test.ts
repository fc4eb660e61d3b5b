import { createDecipheriv, randomBytes as nodeRandomBytes } from "node:crypto";
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
});
