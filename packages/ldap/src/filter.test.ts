import { describe, expect, it } from "vitest";
import { encodeFilter, parseFilter } from "./filter.js";

describe("parseFilter (RFC 4515)", () => {
  it("turns escapes into the bytes they stand for", () => {
    expect(parseFilter("(uid=eve\\2a\\28ops\\29)")).toEqual({ type: "equal", attribute: "uid", value: Buffer.from("eve*(ops)") });
    expect(parseFilter("(objectGUID=\\ae\\37\\00)")).toEqual({
      type: "equal",
      attribute: "objectGUID",
      value: Buffer.from("ae3700", "hex"),
    });
    expect(parseFilter("(cn=Zo\u00eb)")).toEqual({ type: "equal", attribute: "cn", value: Buffer.from("Zo\u00eb") });
  });

  it("parses every filter kind", () => {
    expect(parseFilter("(&(objectClass=*)(|(cn~=a)(!(uid>=b)))(uid<=c))")).toEqual({
      type: "and",
      filters: [
        { type: "present", attribute: "objectClass" },
        {
          type: "or",
          filters: [
            { type: "approx", attribute: "cn", value: Buffer.from("a") },
            { type: "not", filter: { type: "greaterOrEqual", attribute: "uid", value: Buffer.from("b") } },
          ],
        },
        { type: "lessOrEqual", attribute: "uid", value: Buffer.from("c") },
      ],
    });
    expect(parseFilter("(cn=a*b\\2a*c)")).toEqual({
      type: "substrings",
      attribute: "cn",
      initial: Buffer.from("a"),
      any: [Buffer.from("b*")],
      final: Buffer.from("c"),
    });
    expect(parseFilter("(cn=*x*)")).toMatchObject({ initial: null, any: [Buffer.from("x")], final: null });
    expect(parseFilter("(member:dn:1.2.3:=x)")).toEqual({
      type: "extensible",
      attribute: "member",
      rule: "1.2.3",
      dnAttributes: true,
      value: Buffer.from("x"),
    });
  });

  it("refuses what is not one well-formed filter", () => {
    for (const text of [
      "uid=a",
      "(uid=a)(uid=b)",
      "(uid=a",
      "(uid=a(b)",
      "(uid=\\2)",
      "(uid=\\zz)",
      "(=a)",
      "(uid>=a*)",
      "(cn=a**b)",
      "(&(uid=a)",
    ]) {
      expect(() => parseFilter(text), text).toThrow(/malformed LDAP filter/);
    }
  });
});

describe("encodeFilter (RFC 4511 §4.5.1)", () => {
  it("encodes each filter kind as BER", () => {
    const vectors = [
      ["(uid=alice)", "a30c04037569640405616c696365"],
      [
        "(&(objectClass=person)(|(uid=a)(!(cn=b))))",
        "a02ea315040b6f626a656374436c6173730406706572736f6ea115a3080403756964040161a209a3070402636e040162",
      ],
      ["(cn=*)", "8702636e"],
      ["(cn=a*b*c)", "a40f0402636e3009800161810162820163"],
      ["(cn>=x)", "a5070402636e040178"],
      ["(cn~=y)", "a8070402636e040179"],
      ["(cn:dn:2.5.13.5:=z)", "a9148108322e352e31332e358202636e83017a8401ff"],
      ["(uid=eve\\2a\\28ops\\29)", "a310040375696404096576652a286f707329"],
    ] as const;
    for (const [text, hex] of vectors) expect(encodeFilter(parseFilter(text)).toString("hex"), text).toBe(hex);
  });

  it("uses long lengths past 127 bytes", () => {
    const encoded = encodeFilter({ type: "equal", attribute: "cn", value: Buffer.alloc(200, 0x61) });
    expect(encoded.subarray(0, 3)).toEqual(Buffer.from([0xa3, 0x81, 207]));
    expect(encoded.length).toBe(3 + 207);
  });
});
