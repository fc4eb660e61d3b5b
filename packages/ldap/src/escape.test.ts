import { describe, expect, it } from "vitest";
import { escapeFilterValue, fillFilter } from "./escape.js";

describe("LDAP-1: escapeFilterValue (RFC 4515)", () => {
  it("escapes the filter characters, NUL and backslash", () => {
    expect(escapeFilterValue("*")).toBe("\\2a");
    expect(escapeFilterValue("admin*")).toBe("admin\\2a");
    expect(escapeFilterValue("*)(uid=*))(|(uid=*")).toBe("\\2a\\29\\28uid=\\2a\\29\\29\\28|\\28uid=\\2a");
    expect(escapeFilterValue("a\u0000b")).toBe("a\\00b");
    expect(escapeFilterValue("a\\b")).toBe("a\\5cb");
  });

  it("keeps printable ASCII and escapes each UTF-8 byte of other characters", () => {
    expect(escapeFilterValue("john.smith-1 @x")).toBe("john.smith-1 @x");
    expect(escapeFilterValue("Zo\u00eb")).toBe("Zo\\c3\\ab");
    expect(escapeFilterValue("\ufb01")).toBe("\\ef\\ac\\81");
  });

  it("escapes every byte of a binary value", () => {
    expect(escapeFilterValue(Buffer.from("ae37002a", "hex"))).toBe("\\ae7\\00\\2a");
  });
});

describe("LDAP-1: fillFilter", () => {
  it("fills the placeholder with the escaped value, whatever replacement patterns it holds", () => {
    expect(fillFilter("(uid={{username}})", { username: "eve*(ops)" })).toBe("(uid=eve\\2a\\28ops\\29)");
    expect(fillFilter("(uid={{username}})", { username: "$&$'" })).toBe("(uid=$&$')");
    expect(fillFilter("(member={{dn}})", { dn: "cn=Smith\\2C John,dc=x" })).toBe("(member=cn=Smith\\5c2C John,dc=x)");
    expect(fillFilter("(|(member={{dn}})(memberUid={{username}}))", { dn: "cn={{username}},dc=x", username: "a*" })).toBe(
      "(|(member=cn={{username}},dc=x)(memberUid=a\\2a))",
    );
    expect(fillFilter("(x={{constructor}})(y={{dn}})", { username: "u" })).toBe("(x={{constructor}})(y={{dn}})");
  });
});
