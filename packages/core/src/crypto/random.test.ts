import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base64url, constantTimeEqual, pooledRandomBytes, sha256 } from "./random.js";

describe("random and hashing helpers", () => {
  it("TOTP-3: constantTimeEqual is true only for equal strings", () => {
    expect(constantTimeEqual("123456", "123456")).toBe(true);
    expect(constantTimeEqual("123456", "123457")).toBe(false);
    expect(constantTimeEqual("123456", "023456")).toBe(false);
    expect(constantTimeEqual("123456", "12345")).toBe(false);
    expect(constantTimeEqual("12345", "123456")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("", "0")).toBe(false);
  });

  it("TOTP-3: constantTimeEqual compares UTF-8 bytes, not UTF-16 units", () => {
    expect(constantTimeEqual("é", "é")).toBe(true);
    expect(constantTimeEqual("é", "e\u0301")).toBe(false);
    expect(constantTimeEqual("\u00e9", "\u00c3\u00a9")).toBe(false);
  });

  it("RT-1: sha256 is SHA-256 of the UTF-8 text, base64url without padding", () => {
    const expected = createHash("sha256").update(Buffer.from("tökén", "utf8")).digest("base64url");
    expect(sha256("tökén")).toBe(expected);
    expect(sha256("abc")).toBe("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    expect(sha256("abc")).toHaveLength(43);
  });

  it("RT-1: base64url encodes exactly the bytes of a view", () => {
    const backing = new Uint8Array([0xff, 0xfb, 0xef, 0x01, 0x02]);
    expect(base64url(backing)).toBe("__vvAQI");
    expect(base64url(backing.subarray(1, 3))).toBe(Buffer.from([0xfb, 0xef]).toString("base64url"));
  });

  it("pooledRandomBytes hands out each pool byte once, as a copy of the asked size, and refills when the pool runs out", () => {
    const random = pooledRandomBytes(64);
    const taken = Array.from({ length: 40 }, () => random(8));
    expect(taken.every((bytes) => bytes instanceof Uint8Array && bytes.length === 8)).toBe(true);
    expect(new Set(taken.map((bytes) => base64url(bytes))).size).toBe(40);
    expect(Array.from({ length: 8 }, () => random(16)).filter((bytes) => bytes.every((byte) => byte === 0))).toHaveLength(0);
  });

  it("pooledRandomBytes serves requests larger than a quarter of the pool directly, at their full size", () => {
    const random = pooledRandomBytes(64);
    const large = random(17);
    expect(large.length).toBe(17);
    expect(random(1000).length).toBe(1000);
    expect(base64url(random(17))).not.toBe(base64url(large));
  });
});
