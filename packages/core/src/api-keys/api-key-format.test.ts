import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isWellFormedApiKey, looksLikeApiKey, newApiKey, secretLength, startOfApiKey } from "./api-key-format.js";

describe("AK-1: API keys are recognisable, long and checksummed", () => {
  it("is pc_<environment>_, 32 base62 characters and a 6-character checksum", () => {
    const key = newApiKey("live", randomBytes);
    expect(key).toMatch(/^pc_live_[0-9A-Za-z]{38}$/);
    expect(isWellFormedApiKey(key, "live")).toBe(true);
    expect(looksLikeApiKey(key)).toBe(true);
    expect(startOfApiKey(key)).toBe(key.slice(0, 12));
  });

  it("draws every base62 character about equally: no modulo bias", () => {
    const counts = new Map<string, number>();
    for (let n = 0; n < 2000; n += 1) {
      for (const character of newApiKey("t", randomBytes).slice(5, 5 + secretLength))
        counts.set(character, (counts.get(character) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (2000 * secretLength) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.12);
  });

  it("AK-3: a changed character, another environment, a wrong length or another prefix fails the check", () => {
    const key = newApiKey("live", randomBytes);
    const flipped = `${key.slice(0, 20)}${key[20] === "a" ? "b" : "a"}${key.slice(21)}`;
    for (const bad of [
      flipped,
      key.replace("pc_live_", "pc_test_"),
      key.slice(0, -1),
      `${key}a`,
      key.replace("pc_", "pk_"),
      "",
      "pc_live_",
    ]) {
      expect(isWellFormedApiKey(bad, "live")).toBe(false);
    }
    expect(isWellFormedApiKey(newApiKey("test", randomBytes), "live")).toBe(false);
    expect(isWellFormedApiKey(newApiKey("test", randomBytes), "test")).toBe(true);
  });
});
