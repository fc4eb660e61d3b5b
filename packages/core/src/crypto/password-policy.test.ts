import { describe, expect, it } from "vitest";
import { resolveConfig } from "../config.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { assertAcceptablePassword, exceedsByteCap, normalizePassword } from "./password-policy.js";

const policy = (password: Record<string, unknown> = {}) =>
  resolveConfig({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: "x".repeat(32), encryption: "00".repeat(32) },
    password,
  }).password;

const defaults = policy();

function refusal(password: string, config = defaults, username?: string): AuthError {
  try {
    assertAcceptablePassword(config, password, username);
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(password)} to be refused`);
}

describe("password policy", () => {
  it("PW-2: normalisation is NFKC and nothing else", () => {
    expect(normalizePassword("\ufb01sh")).toBe("fish");
    expect(normalizePassword("Ｐａｓｓ")).toBe("Pass");
    expect(normalizePassword("e\u0301")).toBe("\u00e9");
    expect(normalizePassword(" Secret ")).toBe(" Secret ");
    expect(normalizePassword("MiXeD")).toBe("MiXeD");
  });

  it("PW-3: fewer than 8 characters is refused with the reason", () => {
    const error = refusal("seven77");
    expect(error.code).toBe(ErrorCode.ValidationFailed);
    expect(error.message).toMatch(/at least 8 characters/);
    expect(() => assertAcceptablePassword(defaults, "eight888")).not.toThrow();
  });

  it("PW-3: length is counted in characters, not bytes or UTF-16 units", () => {
    expect(refusal("🔑🔑🔑🔑🔑🔑🔑").message).toMatch(/at least 8/);
    expect(() => assertAcceptablePassword(defaults, "🔑🔒🔐🔓🏰🚪🧱🪜")).not.toThrow();
  });

  it("PW-3: 64 and more characters are accepted, a 100-character passphrase too", () => {
    expect(() => assertAcceptablePassword(defaults, `${"a".repeat(63)}b`)).not.toThrow();
    const hundred = "correct horse battery staple ".repeat(4).slice(0, 100);
    expect([...hundred]).toHaveLength(100);
    expect(() => assertAcceptablePassword(defaults, hundred)).not.toThrow();
    expect(() => assertAcceptablePassword(defaults, "x".repeat(1024))).not.toThrow();
  });

  it("PW-3: any characters are allowed and there are no composition rules", () => {
    for (const password of [
      "all lowercase words here",
      "ALLUPPERCASEPASSWORD",
      "ünïcödé пароль 密码很长",
      "tabs\tand\nnewlines",
    ]) {
      expect(() => assertAcceptablePassword(defaults, password)).not.toThrow();
    }
  });

  it("PW-3: a common password is refused with the reason 'too common', whatever its case", () => {
    for (const password of ["password", "Password1", "QWERTY123", "iloveyou", "12345678"]) {
      const error = refusal(password);
      expect(error.code).toBe(ErrorCode.ValidationFailed);
      expect(error.message).toMatch(/too common/);
    }
  });

  it("PW-3: the configured blocklist is refused too, after NFKC and case folding", () => {
    const config = policy({ blocklist: ["Portcullis2025"] });
    expect(refusal("portcullis2025", config).message).toMatch(/too common/);
    expect(refusal("ＰＯＲＴＣＵＬＬＩＳ2025", config).message).toMatch(/too common/);
    expect(() => assertAcceptablePassword(defaults, "portcullis2025")).not.toThrow();
  });

  it("PW-3: the username is refused as the password", () => {
    expect(refusal("alice-in-wonderland", defaults, "Alice-In-Wonderland").message).toMatch(/username/);
  });

  it("PW-3: the minimum length is configurable, but never below 8", () => {
    const config = policy({ minLength: 12 });
    expect(refusal("elevenchars", config).message).toMatch(/at least 12 characters/);
    expect(() => assertAcceptablePassword(config, "twelve chars")).not.toThrow();
    expect(() => policy({ minLength: 7 })).toThrow(/password\.minLength/);
  });

  it("PW-4: the byte cap counts UTF-8 bytes", () => {
    expect(exceedsByteCap("a".repeat(1024), 1024)).toBe(false);
    expect(exceedsByteCap("a".repeat(1025), 1024)).toBe(true);
    expect(exceedsByteCap("é".repeat(513), 1024)).toBe(true);
    expect(exceedsByteCap("é".repeat(512), 1024)).toBe(false);
    expect(refusal("é".repeat(600)).message).toMatch(/at most 1024 bytes/);
  });
});
