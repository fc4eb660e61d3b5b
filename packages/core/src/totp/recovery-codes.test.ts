import { randomBytes as nodeRandomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto/random.js";
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode, recoveryCodeCount } from "./recovery-codes.js";

const randomBytes = (size: number) => new Uint8Array(nodeRandomBytes(size));
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

describe("recovery codes", () => {
  it("STUP-7, ASVS 6.5.2: a set is ten codes of 24 Crockford base32 characters (120 bits, at least 112), in six groups of four", () => {
    const codes = generateRecoveryCodes(randomBytes);
    expect(recoveryCodeCount).toBe(10);
    expect(codes).toHaveLength(10);
    for (const code of codes) {
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);
      expect(code.replaceAll("-", "").length * Math.log2(crockford.length)).toBe(120);
    }
    expect(new Set(codes).size).toBe(10);
  });

  it("STUP-7, ASVS 6.5.2: every character carries 5 bits of the CSPRNG's output, 24 bytes asked per code", () => {
    const sizes: number[] = [];
    const bytes = Uint8Array.from({ length: 24 }, (_, index) => index * 17 + 3);
    const [code] = generateRecoveryCodes((size) => {
      sizes.push(size);
      return bytes;
    });
    const expected = Array.from(bytes, (byte) => crockford[byte & 31]).join("");
    expect(code?.replaceAll("-", "")).toBe(expected);
    expect(sizes).toEqual(Array.from({ length: 10 }, () => 24));
  });

  it("RC-1: characters are spread over the whole alphabet", () => {
    const counts = new Map<string, number>();
    for (let round = 0; round < 40; round += 1) {
      for (const character of generateRecoveryCodes(randomBytes).join("").replaceAll("-", "")) {
        counts.set(character, (counts.get(character) ?? 0) + 1);
      }
    }
    expect([...counts.keys()].sort().join("")).toBe(crockford);
  });

  it("RC-3: typed codes are normalised: spaces, dashes and case ignored, I and L read as 1, O as 0", () => {
    expect(normalizeRecoveryCode("ABCD-EFGH-JKMN-PQRS-TVWX-YZ01")).toBe("ABCDEFGHJKMNPQRSTVWXYZ01");
    expect(normalizeRecoveryCode(" abcd efgh jkmn pqrs tvwx yz01 ")).toBe("ABCDEFGHJKMNPQRSTVWXYZ01");
    expect(normalizeRecoveryCode("\tABCDEFGH-JKMNPQRS\nTVWXYZ01")).toBe("ABCDEFGHJKMNPQRSTVWXYZ01");
    expect(normalizeRecoveryCode("oOiI-lL01-2345-6789-ABCD-EFGH")).toBe("0011110123456789ABCDEFGH");
    expect(normalizeRecoveryCode("ABCD-EFGH-JKMN-PQRS-TVWX-YZ0")).toBeNull();
    expect(normalizeRecoveryCode("ABCD-EFGH-JKMN-PQRS-TVWX-YZ012")).toBeNull();
    expect(normalizeRecoveryCode("UUUU-UUUU-UUUU-UUUU-UUUU-UUUU")).toBeNull();
    expect(normalizeRecoveryCode("ABCD_EFGH_JKMN_PQRS_TVWX_YZ01")).toBeNull();
    expect(normalizeRecoveryCode("")).toBeNull();
  });

  it("STUP-7, ASVS 6.5.2: a code of the form issued before (16 characters, 80 bits) is still read; other lengths are not", () => {
    expect(normalizeRecoveryCode("ABCD-EFGH-JKMN-PQRS")).toBe("ABCDEFGHJKMNPQRS");
    expect(normalizeRecoveryCode(" abcd efgh jkmn pqrs ")).toBe("ABCDEFGHJKMNPQRS");
    expect(normalizeRecoveryCode("oOiI-lL01-2345-6789")).toBe("0011110123456789");
    for (const length of [15, 17, 20, 23, 25, 32]) {
      expect(normalizeRecoveryCode("A".repeat(length))).toBeNull();
    }
    expect(normalizeRecoveryCode("UUUU-UUUU-UUUU-UUUU")).toBeNull();
  });

  it("RC-2: the stored form is SHA-256 over the user id and the normalised code, of either form", () => {
    expect(hashRecoveryCode("user-1", "ABCDEFGHJKMNPQRSTVWXYZ01")).toBe(sha256("user-1:ABCDEFGHJKMNPQRSTVWXYZ01"));
    expect(hashRecoveryCode("user-1", "ABCDEFGHJKMNPQRS")).toBe(sha256("user-1:ABCDEFGHJKMNPQRS"));
    expect(hashRecoveryCode("user-2", "ABCDEFGHJKMNPQRS")).not.toBe(hashRecoveryCode("user-1", "ABCDEFGHJKMNPQRS"));
    expect(hashRecoveryCode("user-1", "ABCDEFGHJKMNPQRS")).not.toContain("ABCDEFGHJKMNPQRS");
  });
});
