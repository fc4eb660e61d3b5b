import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { emailKeyOf, maxEmailLength, normalizeEmail } from "./email.js";

/** The code and message `normalizeEmail` refuses `raw` with, or null when it accepts it. */
function refusal(raw: string, field?: string): { code: number; message: string } | null {
  try {
    normalizeEmail(raw, field);
    return null;
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe("normalizeEmail", () => {
  it("accepts an address as given, NFKC-normalised, case kept", () => {
    expect(normalizeEmail("Alice@Example.com")).toBe("Alice@Example.com");
    expect(normalizeEmail("\uFF21lice@example.com")).toBe("Alice@example.com");
    expect(normalizeEmail("jürgen+tag@bücher.example")).toBe("jürgen+tag@bücher.example");
  });

  it("refuses with 40002 naming the field: no @, two, nothing on a side, spaces, control and invisible characters", () => {
    const oneAt = {
      code: ErrorCode.MalformedParameter,
      message: "email must be an address with one @ between a name and a domain",
    };
    for (const raw of ["alice", "@example.com", "alice@", "a@b@c", ""]) expect(refusal(raw), raw).toEqual(oneAt);
    const hidden = { code: ErrorCode.MalformedParameter, message: "email must not hold spaces, control or invisible characters" };
    for (const raw of [
      "al ice@example.com",
      " alice@example.com",
      "alice@example.com\n",
      "al\u0000ice@x",
      "al\u200bice@x",
      "a\u00a0b@x",
    ]) {
      expect(refusal(raw), JSON.stringify(raw)).toEqual(hidden);
    }
    expect(refusal("nope", "contact")?.message).toBe("contact must be an address with one @ between a name and a domain");
  });

  it("EV-1: refuses default-ignorable code points that NFKC keeps and no one sees (U+034F, U+FE0F, U+3164, U+180B), as usernames are refused them", () => {
    const hidden = { code: ErrorCode.MalformedParameter, message: "email must not hold spaces, control or invisible characters" };
    for (const codePoint of [0x034f, 0xfe0f, 0x3164, 0x180b]) {
      const invisible = String.fromCodePoint(codePoint);
      const name = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
      expect(refusal(`ali${invisible}ce@example.com`), name).toEqual(hidden);
      expect(refusal(`alice@exam${invisible}ple.com`), name).toEqual(hidden);
      expect(refusal(`alice@example.com${invisible}`), name).toEqual(hidden);
    }
  });

  it(`refuses more than ${maxEmailLength} characters, as given or after NFKC, and lone surrogates`, () => {
    const domain = "@example.com";
    const longest = `${"a".repeat(maxEmailLength - domain.length)}${domain}`;
    expect(normalizeEmail(longest)).toBe(longest);
    const tooLong = { code: ErrorCode.MalformedParameter, message: "email must be an address of at most 254 characters" };
    expect(refusal(`a${longest}`)).toEqual(tooLong);
    // U+FDFA is one character that NFKC makes eighteen.
    expect(refusal(`${"\uFDFA".repeat(14)}${domain}`)).toEqual(tooLong);
    expect(refusal(`\uD800${domain}`)).toEqual(tooLong);
  });
});

describe("emailKeyOf", () => {
  it("EV-1: one key for addresses that differ only in case or NFKC form", () => {
    expect(emailKeyOf("Alice@Example.COM")).toBe("alice@example.com");
    expect(emailKeyOf("\uFF21LICE@example.com")).toBe("alice@example.com");
    expect(emailKeyOf("alice@example.com")).not.toBe(emailKeyOf("alice2@example.com"));
  });
});
