import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { optionalString, requiredString } from "./input.js";

/** The business code and message of what `read` throws, or the value it returns. */
function answerOf(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (error instanceof AuthError) return { code: error.code, message: error.message };
    throw error;
  }
}

const malformed: unknown[] = [{ $ne: "" }, { $gt: "" }, [], ["a"], 0, 42, true, false, Symbol("s"), () => "a"];

describe("input", () => {
  it("PW-5: requiredString: absent, null or empty is 40001 naming the field; any other type is 40002 naming it", () => {
    for (const missing of [undefined, null, ""]) {
      expect(
        answerOf(() => requiredString(missing, "username")),
        String(missing),
      ).toEqual({
        code: ErrorCode.MissingParameter,
        message: "username is required",
      });
    }
    for (const value of malformed) {
      expect(
        answerOf(() => requiredString(value, "password")),
        String(value),
      ).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "password must be a string",
      });
    }
    for (const value of [" ", "0", "alice", "\u0000"]) expect(requiredString(value, "username")).toBe(value);
  });

  it("PW-5: optionalString: absent or null is undefined; empty is kept; any other type is 40002 naming the field", () => {
    expect(optionalString(undefined, "provider")).toBeUndefined();
    expect(optionalString(null, "provider")).toBeUndefined();
    expect(optionalString("", "provider")).toBe("");
    expect(optionalString("local", "provider")).toBe("local");
    for (const value of malformed) {
      expect(
        answerOf(() => optionalString(value, "provider")),
        String(value),
      ).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "provider must be a string",
      });
    }
  });
});
