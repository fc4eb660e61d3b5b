// The encoder the software authenticator writes its CBOR with: RFC 8949's own examples (appendix A).
import { describe, expect, it } from "vitest";
import { type CborValue, encodeCbor } from "./cbor.js";

const hex = (data: Uint8Array) => Buffer.from(data).toString("hex");

describe("encodeCbor", () => {
  const vectors: [string, CborValue, string][] = [
    ["0", 0, "00"],
    ["23", 23, "17"],
    ["24", 24, "1818"],
    ["255", 255, "18ff"],
    ["256", 256, "190100"],
    ["1000", 1000, "1903e8"],
    ["65536", 65536, "1a00010000"],
    ["1000000", 1000000, "1a000f4240"],
    ["1000000000000", 1000000000000, "1b000000e8d4a51000"],
    ["2^64 - 1", 18446744073709551615n, "1bffffffffffffffff"],
    ["-1", -1, "20"],
    ["-10", -10, "29"],
    ["-100", -100, "3863"],
    ["-1000", -1000, "3903e7"],
    ["-2^64", -18446744073709551616n, "3bffffffffffffffff"],
    ["false", false, "f4"],
    ["true", true, "f5"],
    ["h''", new Uint8Array(), "40"],
    ["h'01020304'", Uint8Array.of(1, 2, 3, 4), "4401020304"],
    ['""', "", "60"],
    ['"a"', "a", "6161"],
    ['"IETF"', "IETF", "6449455446"],
    ['"ü"', "\u00fc", "62c3bc"],
    ["[]", [], "80"],
    ["[1, [2, 3], [4, 5]]", [1, [2, 3], [4, 5]], "8301820203820405"],
    ["{}", new Map(), "a0"],
    [
      "{1: 2, 3: 4}",
      new Map([
        [1, 2],
        [3, 4],
      ]),
      "a201020304",
    ],
    [
      '{"a": 1, "b": [2, 3]}',
      new Map<string, CborValue>([
        ["a", 1],
        ["b", [2, 3]],
      ]),
      "a26161016162820203",
    ],
  ];

  it.each(vectors)("encodes %s as in RFC 8949 appendix A", (_name, value, expected) => {
    expect(hex(encodeCbor(value))).toBe(expected);
  });

  it("keeps map entries in insertion order", () => {
    const reversed = new Map([
      [3, 4],
      [1, 2],
    ]);
    expect(hex(encodeCbor(reversed))).toBe("a203040102");
  });

  it("refuses what it cannot write exactly", () => {
    expect(() => encodeCbor(1.5)).toThrow(RangeError);
    expect(() => encodeCbor(2 ** 53)).toThrow(RangeError);
    expect(() => encodeCbor(2n ** 64n)).toThrow(RangeError);
    expect(() => encodeCbor(-(2n ** 64n) - 1n)).toThrow(RangeError);
    expect(() => encodeCbor(new Map([[0.5, 1]]))).toThrow(RangeError);
    expect(() => encodeCbor(null as unknown as CborValue)).toThrow(TypeError);
    expect(() => encodeCbor([undefined] as unknown as CborValue)).toThrow(TypeError);
    expect(() => encodeCbor(new Map([[true, 1]]) as unknown as CborValue)).toThrow(TypeError);
  });
});
