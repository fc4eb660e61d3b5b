import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox } from "../crypto/secret-box.js";
import { pendingRecoveryCodes } from "./pending-recovery-codes.js";
import { normalizeRecoveryCode } from "./recovery-codes.js";

const box = createSecretBox(randomBytes(32).toString("base64url"), (size) => new Uint8Array(randomBytes(size)));
const codeFormat = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/;

/** A pending factor's secret and its sealed form, as `2fa/setup` stores them. */
function pendingFactor(userId: string) {
  const secret = new Uint8Array(randomBytes(20));
  return { secret, sealed: box.seal(secret, `portcullis:totp:${userId}`) };
}

describe("pendingRecoveryCodes", () => {
  it("RC-4, RC-1: ten distinct codes of the RC-1 form (24 Crockford base32 characters), the same each time for one pending factor", () => {
    const { secret, sealed } = pendingFactor("u1");
    const codes = pendingRecoveryCodes("u1", secret, sealed);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) {
      expect(code).toMatch(codeFormat);
      expect(normalizeRecoveryCode(code)).toHaveLength(24);
    }
    expect(pendingRecoveryCodes("u1", secret, sealed)).toEqual(codes);
  });

  it("RC-4: another secret, another sealing of the same secret, or another user gives another set", () => {
    const { secret, sealed } = pendingFactor("u1");
    const codes = new Set(pendingRecoveryCodes("u1", secret, sealed));
    const others = [
      pendingRecoveryCodes("u1", pendingFactor("u1").secret, sealed),
      pendingRecoveryCodes("u1", secret, box.seal(secret, "portcullis:totp:u1")),
      pendingRecoveryCodes("u2", secret, sealed),
    ];
    for (const other of others) expect(other.filter((code) => codes.has(code))).toEqual([]);
  });
});
