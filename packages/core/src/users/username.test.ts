import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { normalizeUsername, typedUsernameKey, usernameProblem } from "./username.js";

const refusal = (raw: string) => {
  try {
    normalizeUsername(raw);
  } catch (error) {
    if (error instanceof AuthError) return { code: error.code, message: error.message };
    throw error;
  }
  return null;
};

describe("usernames", () => {
  it("a new username may be 128 characters, counted as code points, as typed and after NFKC", () => {
    expect(normalizeUsername("a".repeat(128)).username).toHaveLength(128);
    expect([...normalizeUsername("😀".repeat(128)).username]).toHaveLength(128);
    expect(refusal("a".repeat(129))).toMatchObject({ code: 42200 });
    expect(refusal("😀".repeat(129))).toMatchObject({ code: 42200 });
    // U+FDFA is one character that NFKC turns into eighteen.
    expect(refusal("\ufdfa".repeat(8))).toMatchObject({ code: 42200, message: "The username must be 1 to 128 characters long" });
    expect(refusal("e\u0301".repeat(65))).toMatchObject({ code: 42200 });
    expect(refusal("")).toMatchObject({ code: 42200 });
  });

  it("a new username must be well-formed Unicode: a lone surrogate is refused", () => {
    for (const raw of ["ab\ud800", "\udc00ab", "a\ud83db"]) {
      expect(refusal(raw), JSON.stringify(raw)).toEqual({
        code: 42200,
        message: "The username must be well-formed Unicode text",
      });
    }
    expect(normalizeUsername("a\ud83d\ude00b").username).toBe("a😀b");
  });

  it("RL-1: a typed username that can be nobody's has no lookup key: over 128 characters, or a lone surrogate", () => {
    expect(typedUsernameKey("Alice")).toBe("alice");
    expect(typedUsernameKey("A".repeat(128))).toBe("a".repeat(128));
    expect(typedUsernameKey("😀".repeat(128))).toBe("😀".repeat(128));
    expect(typedUsernameKey("a".repeat(129))).toBeNull();
    expect(typedUsernameKey("\ufdfa".repeat(21_000))).toBeNull();
    expect(typedUsernameKey("alice\ud800")).toBeNull();
  });
});

describe("RL-1: usernames are stable identifiers (RFC 8265 UsernameCaseMapped, parts separated by single spaces)", () => {
  const spellingsOfAlice = [
    " alice",
    "alice ",
    "alice  ",
    "    alice    ",
    "\u00a0alice",
    "alice\u3000",
    "\talice",
    "al\u00adice",
    "ali\u200bce",
    "alice\u200d",
    "\u200ealice",
    "\u202ealice",
    "ali\u2060ce",
    "alice\ufeff",
    "ali\u2028ce",
    "ali\u2029ce",
    "alice\u0000",
    "ali\u0000ce",
    "alice\u180e",
    "alice\u1680x",
    "alice\u3164",
    "alice\u2800",
    "ali\ue000ce",
    "alice\ufffe",
  ];

  it("RL-1: a typed name with spaces around it, doubled spaces, or an invisible, format, control or private-use code point has no lookup key", () => {
    for (const typed of spellingsOfAlice) expect(typedUsernameKey(typed), JSON.stringify(typed)).toBeNull();
  });

  it("RL-1: such a name is refused as a new username with 42200 saying why", () => {
    expect(refusal(" alice")).toEqual({ code: 42200, message: "The username must not start or end with a space" });
    expect(refusal("\u00a0alice")).toEqual({ code: 42200, message: "The username must not start or end with a space" });
    expect(refusal("al  ice")).toEqual({ code: 42200, message: "The username must not hold two spaces in a row" });
    for (const [typed, what] of [
      ["al\tice", "U+0009, a control character"],
      ["alice\u0000", "U+0000, a control character"],
      ["ali\u2028ce", "U+2028, a line or paragraph separator"],
      ["al\u00adice", "U+00AD, an invisible character"],
      ["ali\u200bce", "U+200B, an invisible character"],
      ["\u202ealice", "U+202E, a text-direction control"],
      ["alice\u3164", "U+1160, an invisible character"],
    ]) {
      expect(refusal(typed as string), JSON.stringify(typed)).toEqual({
        code: 42200,
        message: `The username must not contain ${what}`,
      });
    }
    expect(refusal("alice\u1680x")).toEqual({
      code: 42200,
      message: "The username may hold no white space but single spaces between its parts",
    });
    for (const typed of ["alice\u2800", "ali\ue000ce"]) {
      expect(refusal(typed), JSON.stringify(typed)).toEqual({
        code: 42200,
        message: "The username must not contain private-use characters or blank patterns",
      });
    }
  });

  it("RL-1: names of visible characters stay valid, a single space between parts too, and keep their key", () => {
    for (const [typed, key] of [
      ["Alice", "alice"],
      ["José García", "josé garcía"],
      ["o'brien-smith_2", "o'brien-smith_2"],
      ["ＡＬＩＣＥ", "alice"],
      ["用户名", "用户名"],
      ["alice@example.com", "alice@example.com"],
      ["😀 party", "😀 party"],
    ]) {
      expect(typedUsernameKey(typed as string), typed).toBe(key);
      expect(normalizeUsername(typed as string).usernameKey, typed).toBe(key);
    }
  });

  it("RL-1: usernameProblem names what is wrong with a stored name, for the migration of existing accounts", () => {
    expect(usernameProblem("alice")).toBeNull();
    expect(usernameProblem("al\u00adice")).toBe("The username must not contain U+00AD, an invisible character");
    expect(usernameProblem("alice ")).toBe("The username must not start or end with a space");
  });
});
