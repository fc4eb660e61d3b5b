import { describe, expect, it } from "vitest";
import { compareCodePoints, prefixUpperBound } from "./code-point-order.js";

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
const sign = (value: number) => Math.sign(value);

describe("compareCodePoints", () => {
  it("AD-1: orders as UTF-8 bytes do, where UTF-16 code units disagree (U+FF21 before U+1F600)", () => {
    const samples = [
      "",
      "a",
      "ab",
      "B",
      "é",
      "\uFF21",
      "\u{1F600}",
      "\u{10000}",
      "\uE000",
      "\uD7FF",
      "a\u{1F600}",
      "a\uFFFF",
      "\u{10FFFF}",
    ];
    for (const a of samples) {
      for (const b of samples) expect(sign(compareCodePoints(a, b)), `${a} vs ${b}`).toBe(sign(utf8Order(a, b)));
    }
    expect(["\u{1F600}", "\uFF21"].sort(compareCodePoints)).toEqual(["\uFF21", "\u{1F600}"]);
  });
});

describe("prefixUpperBound", () => {
  it("AD-1: bounds exactly the strings that start with the prefix", () => {
    expect(prefixUpperBound("ab%")).toBe("ab&");
    expect(prefixUpperBound("a\u{10FFFF}")).toBe("b");
    expect(prefixUpperBound("a\u{10FFFF}\u{10FFFF}")).toBe("b");
    expect(prefixUpperBound("\uD7FF")).toBe("\uE000");
    expect(prefixUpperBound("x\uFFFF")).toBe("x\u{10000}");
    expect(prefixUpperBound("\u{1F600}")).toBe("\u{1F601}");
    expect(prefixUpperBound("")).toBeNull();
    expect(prefixUpperBound("\u{10FFFF}")).toBeNull();
    const inside = ["ab", "ab\u{10FFFF}", "ab\u{10FFFF}z", "abz", "ab\uFFFF\u{1F600}"];
    const outside = ["a", "aa\u{10FFFF}", "ac", "b", "ab".slice(0, 1)];
    const upper = prefixUpperBound("ab") as string;
    for (const key of inside) expect(compareCodePoints("ab", key) <= 0 && compareCodePoints(key, upper) < 0, key).toBe(true);
    for (const key of outside) expect(compareCodePoints("ab", key) <= 0 && compareCodePoints(key, upper) < 0, key).toBe(false);
  });
});
