// totpCode against RFC 6238's own test vectors (appendix B), and against an enrolment in core.
import { beginTotpSetup, createAuth, createUser, enableTotp, memoryStorage } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import { totpCode } from "./totp.js";

const base32 = (ascii: string): string => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const byte of Buffer.from(ascii)) bits += byte.toString(2).padStart(8, "0");
  let text = "";
  for (let index = 0; index < bits.length; index += 5)
    text += alphabet[Number.parseInt(bits.slice(index, index + 5).padEnd(5, "0"), 2)];
  return text;
};

// RFC 6238 appendix B: the seeds are these ASCII strings, the codes 8 digits.
const seeds = {
  SHA1: base32("12345678901234567890"),
  SHA256: base32("12345678901234567890123456789012"),
  SHA512: base32("1234567890123456789012345678901234567890123456789012345678901234"),
} as const;
const vectors: [number, string, string, string][] = [
  [59, "94287082", "46119246", "90693936"],
  [1111111109, "07081804", "68084774", "25091201"],
  [1111111111, "14050471", "67062674", "99943326"],
  [1234567890, "89005924", "91819424", "93441116"],
  [2000000000, "69279037", "90698825", "38618901"],
  [20000000000, "65353130", "77737706", "47863826"],
];

describe("totpCode", () => {
  it.each(vectors)("RFC 6238 appendix B at %i s: SHA1 %s, SHA256 %s, SHA512 %s", (seconds, sha1, sha256, sha512) => {
    const at = seconds * 1000;
    expect(totpCode({ secret: seeds.SHA1, at, digits: 8 })).toBe(sha1);
    expect(totpCode({ secret: seeds.SHA256, at, digits: 8, algorithm: "SHA256" })).toBe(sha256);
    expect(totpCode({ secret: seeds.SHA512, at, digits: 8, algorithm: "SHA512" })).toBe(sha512);
  });

  it("reads digits, period and algorithm from an otpauth URI, and a Date as well as milliseconds", () => {
    const uri = `otpauth://totp/Example:alice?secret=${seeds.SHA1}&issuer=Example&algorithm=SHA1&digits=8&period=30`;
    expect(totpCode({ secret: uri, at: new Date(59_000) })).toBe("94287082");
    expect(totpCode({ secret: uri, at: 59_000 })).toBe("94287082");
  });

  it("defaults to 6 digits, 30 s and SHA1, and to now", () => {
    expect(totpCode({ secret: seeds.SHA1, at: 59_000 })).toBe("287082");
    expect(totpCode({ secret: seeds.SHA1, at: 30_000 })).toBe("287082");
    expect(totpCode({ secret: seeds.SHA1, at: 60_000 })).not.toBe("287082");
    expect(totpCode({ secret: seeds.SHA1 })).toBe(totpCode({ secret: seeds.SHA1, at: Date.now() }));
  });

  it("refuses a URI with settings of its own given twice, and an HOTP URI", () => {
    const uri = `otpauth://totp/Example:alice?secret=${seeds.SHA1}`;
    expect(() => totpCode({ secret: uri, digits: 8 })).toThrow(TypeError);
    expect(() => totpCode({ secret: `otpauth://hotp/Example:alice?secret=${seeds.SHA1}&counter=0` })).toThrow(TypeError);
  });

  it("gives the code Portcullis accepts when enabling TOTP, from the base32 secret or the URI", async () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    const auth = createAuth({
      storage: memoryStorage(),
      issuer: "https://api.example.com",
      audience: "example-api",
      secrets: { signing: "a".repeat(32), encryption: "b".repeat(64) },
      now: () => now,
    });
    const password = "correct horse battery staple";
    for (const [username, form] of [
      ["ada", "secret"],
      ["bob", "otpauthUrl"],
    ] as const) {
      const user = await createUser(auth, { username, password });
      const setup = await beginTotpSetup(auth, { userId: user.id, password });
      const code = totpCode({ secret: setup[form], at: now });
      await expect(enableTotp(auth, { userId: user.id, password, code })).resolves.toMatchObject({
        recoveryCodes: expect.any(Array),
      });
    }
  });
});
