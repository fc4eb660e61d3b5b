import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { normalizeUsername, typedUsernameKey } from "./username.js";

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
