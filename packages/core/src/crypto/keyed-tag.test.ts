import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { keyedDigest, keyedTag } from "./keyed-tag.js";
import { createSecretBox } from "./secret-box.js";

const boxOf = (key: Buffer) => createSecretBox(key.toString("hex"), (size) => new Uint8Array(randomBytes(size)));

describe("keyedDigest", () => {
  it("is the whole HMAC-SHA256 over the UTF-8 text under the key derived for the purpose", () => {
    const key = randomBytes(32);
    const derived = Buffer.from(hkdfSync("sha256", key, "portcullis", "a purpose", 32));
    const expected = createHmac("sha256", derived).update(Buffer.from("zoë\u0000al", "utf8")).digest();
    const digest = keyedDigest(boxOf(key), "a purpose", "zoë\u0000al");
    expect(digest).toHaveLength(32);
    expect(digest.equals(expected)).toBe(true);
  });

  it("shares the key cache of keyedTag: a tag is the first 16 bytes of the digest, derived once", () => {
    const box = boxOf(randomBytes(32));
    const derive = vi.spyOn(box, "deriveKey");
    const digest = keyedDigest(box, "shared", "text");
    expect(keyedTag(box, "shared", "text")).toBe(digest.subarray(0, 16).toString("base64url"));
    expect(derive.mock.calls).toEqual([["shared"]]);
  });
});

describe("keyedTag", () => {
  it("is the first 16 bytes, base64url, of HMAC-SHA256 over the UTF-8 text under the key derived for the purpose", () => {
    const key = randomBytes(32);
    const derived = Buffer.from(hkdfSync("sha256", key, "portcullis", "a purpose", 32));
    const expected = createHmac("sha256", derived).update(Buffer.from("zoë\u0000al", "utf8")).digest().subarray(0, 16);
    expect(keyedTag(boxOf(key), "a purpose", "zoë\u0000al")).toBe(expected.toString("base64url"));
  });

  it("derives each purpose's key once per secret box, not per tag", () => {
    const first = boxOf(randomBytes(32));
    const second = boxOf(randomBytes(32));
    const derive = [vi.spyOn(first, "deriveKey"), vi.spyOn(second, "deriveKey")];
    for (const text of ["a", "b", "c"]) {
      keyedTag(first, "one", text);
      keyedTag(first, "two", text);
      keyedTag(second, "one", text);
    }
    expect(derive.map((spy) => spy.mock.calls)).toEqual([[["one"], ["two"]], [["one"]]]);
    expect(keyedTag(first, "one", "a")).not.toBe(keyedTag(second, "one", "a"));
    expect(keyedTag(first, "one", "a")).not.toBe(keyedTag(first, "two", "a"));
  });
});
