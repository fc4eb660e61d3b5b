import { describe, expect, it } from "vitest";
import { decodeBase32 } from "../flows/fixtures.test-support.js";
import { type HotpAlgorithm, hotp, matchTotpStep, totpEnrolment, totpStep } from "./totp.js";

const ascii = (text: string) => new TextEncoder().encode(text);

// RFC 6238 appendix B: the seed of each mode is "1234567890" repeated to the hash's length.
const seeds: Record<HotpAlgorithm, Uint8Array> = {
  SHA1: ascii("12345678901234567890"),
  SHA256: ascii("12345678901234567890123456789012"),
  SHA512: ascii("1234567890123456789012345678901234567890123456789012345678901234"),
};

const rfc6238: Array<[number, string, HotpAlgorithm]> = [
  [59, "94287082", "SHA1"],
  [59, "46119246", "SHA256"],
  [59, "90693936", "SHA512"],
  [1111111109, "07081804", "SHA1"],
  [1111111109, "68084774", "SHA256"],
  [1111111109, "25091201", "SHA512"],
  [1111111111, "14050471", "SHA1"],
  [1111111111, "67062674", "SHA256"],
  [1111111111, "99943326", "SHA512"],
  [1234567890, "89005924", "SHA1"],
  [1234567890, "91819424", "SHA256"],
  [1234567890, "93441116", "SHA512"],
  [2000000000, "69279037", "SHA1"],
  [2000000000, "90698825", "SHA256"],
  [2000000000, "38618901", "SHA512"],
  [20000000000, "65353130", "SHA1"],
  [20000000000, "77737706", "SHA256"],
  [20000000000, "47863826", "SHA512"],
];

const rfc4226 = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];

describe("TOTP", () => {
  it.each(rfc6238)("TOTP-1: RFC 6238 appendix B, T = %i gives %s with %s", async (seconds, expected, algorithm) => {
    expect(await hotp(seeds[algorithm], totpStep(seconds * 1000), 8, algorithm)).toBe(expected);
  });

  it("TOTP-1: RFC 4226 appendix D, HOTP counters 0 to 9", async () => {
    expect(await Promise.all(rfc4226.map((_, counter) => hotp(seeds.SHA1, counter)))).toEqual(rfc4226);
  });

  it("TOTP-1: the time step is floor(T / 30), with RFC 6238's T values", async () => {
    expect(totpStep(59_000)).toBe(1);
    expect(totpStep(1111111109_000)).toBe(0x23523ec);
    expect(totpStep(20000000000_000)).toBe(0x27bc86aa);
  });

  it("TOTP-2: an empty or short secret is refused", async () => {
    await expect(hotp(new Uint8Array(0), 0)).rejects.toThrow(RangeError);
    await expect(hotp(new Uint8Array(19), 0)).rejects.toThrow(RangeError);
    await expect(totpEnrolment(new Uint8Array(10), "example", "alice")).rejects.toThrow(RangeError);
    await expect(matchTotpStep(new Uint8Array(16), "123456", 0, 1)).rejects.toThrow(RangeError);
    expect(await hotp(new Uint8Array(20), 0)).toMatch(/^[0-9]{6}$/);
  });

  it("TOTP-2: the enrolment shows the secret in base32 and an otpauth URI with SHA1, 6 digits, 30 s", async () => {
    const secret = new Uint8Array(20).map((_, index) => index * 13);
    const enrolment = await totpEnrolment(secret, "api.example.com", "alice");
    expect(decodeBase32(enrolment.secret)).toEqual(secret);
    const uri = new URL(enrolment.otpauthUrl);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.searchParams.get("secret")).toBe(enrolment.secret);
    expect(uri.searchParams.get("algorithm")).toBe("SHA1");
    expect(uri.searchParams.get("digits")).toBe("6");
    expect(uri.searchParams.get("period")).toBe("30");
    expect(uri.searchParams.get("issuer")).toBe("api.example.com");
  });

  describe("TOTP-3: matching a code", () => {
    const secret = seeds.SHA1;
    const now = 1_700_000_015_000;
    const step = totpStep(now);
    const codeOf = (offset: number) => hotp(secret, step + offset);

    it("TOTP-3: the current step and one step either side are accepted by default", async () => {
      expect(await matchTotpStep(secret, await codeOf(0), now, 1)).toBe(step);
      expect(await matchTotpStep(secret, await codeOf(-1), now, 1)).toBe(step - 1);
      expect(await matchTotpStep(secret, await codeOf(1), now, 1)).toBe(step + 1);
    });

    it("TOTP-3: two steps away are refused", async () => {
      expect(await codeOf(2)).not.toBe(await codeOf(0));
      expect(await matchTotpStep(secret, await codeOf(-2), now, 1)).toBeNull();
      expect(await matchTotpStep(secret, await codeOf(2), now, 1)).toBeNull();
    });

    it("TOTP-3: with window 0 only the current step is accepted", async () => {
      expect(await matchTotpStep(secret, await codeOf(0), now, 0)).toBe(step);
      expect(await matchTotpStep(secret, await codeOf(-1), now, 0)).toBeNull();
      expect(await matchTotpStep(secret, await codeOf(1), now, 0)).toBeNull();
    });

    it("TOTP-3: only six ASCII digits are accepted", async () => {
      const code = await codeOf(0);
      const eight = await hotp(secret, step, 8);
      expect(await matchTotpStep(secret, eight.slice(1), now, 1)).toBeNull();
      expect(await matchTotpStep(secret, eight, now, 1)).toBeNull();
      expect(await matchTotpStep(secret, code.slice(1), now, 1)).toBeNull();
      expect(await matchTotpStep(secret, `${code} `, now, 1)).toBeNull();
      expect(await matchTotpStep(secret, ` ${code}`, now, 1)).toBeNull();
      expect(await matchTotpStep(secret, `${code}\n`, now, 1)).toBeNull();
      expect(await matchTotpStep(secret, `${code.slice(0, 3)}-${code.slice(3)}`, now, 1)).toBeNull();
      const fullWidth = [...code].map((digit) => String.fromCharCode(0xff10 + Number(digit))).join("");
      expect(await matchTotpStep(secret, fullWidth, now, 1)).toBeNull();
      expect(await matchTotpStep(secret, "12345a", now, 1)).toBeNull();
      expect(await matchTotpStep(secret, "", now, 1)).toBeNull();
    });

    it("TOTP-4: when two steps of the window share a code, the earliest is matched, so no later step is spent", async () => {
      // Found by search: the secret whose codes at steps 56,666,666 and 56,666,668 are the same.
      const colliding = Buffer.from("bc0fbe5b3b83e6ac35392e93533f154071addbe7", "hex");
      const middle = 56_666_667;
      expect(await hotp(colliding, middle - 1)).toBe("548629");
      expect(await hotp(colliding, middle + 1)).toBe("548629");
      expect(await matchTotpStep(colliding, "548629", middle * 30_000, 1)).toBe(middle - 1);
    });

    it("TOTP-2: the refusal of a short secret says how long it must be", async () => {
      await expect(hotp(new Uint8Array(19), 0)).rejects.toThrow("A TOTP secret must be at least 20 bytes");
    });

    it("TOTP-3: the period is 30 seconds", async () => {
      const start = step * 30_000;
      expect(await matchTotpStep(secret, await codeOf(0), start, 0)).toBe(step);
      expect(await matchTotpStep(secret, await codeOf(0), start + 29_999, 0)).toBe(step);
      expect(await matchTotpStep(secret, await codeOf(0), start + 30_000, 0)).toBeNull();
    });
  });
});
