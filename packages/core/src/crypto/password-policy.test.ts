import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { type AuthConfig, resolveConfig } from "../config.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { assertAcceptablePassword, exceedsByteCap, normalizePassword } from "./password-policy.js";

const policy = (password: AuthConfig["password"] = {}) =>
  resolveConfig({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: "x".repeat(32), encryption: "00".repeat(32) },
    password,
  }).password;

const defaults = policy();

async function refusal(password: string, config = defaults, username?: string): Promise<AuthError> {
  try {
    await assertAcceptablePassword(config, password, username);
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(password)} to be refused`);
}

async function expectAccepted(password: string, config = defaults, username?: string): Promise<void> {
  await expect(assertAcceptablePassword(config, password, username), JSON.stringify(password)).resolves.toBeUndefined();
}

/** Every password the test suites of this repository set, so that the policy never refuses a fixture. */
const fixturePasswords = [
  "correct horse battery staple",
  "a brand new passphrase",
  "second passphrase",
  "a different passphrase",
  "a long passphrase",
  "five fish on a flat plate",
  "\ufb01ve \ufb01sh on a \ufb02at plate",
  "caf\u00e9 au lait, s'il vous pla\u00eet",
  `${"x".repeat(100)}-tail`,
  "k".repeat(1024),
  "e\u0301".repeat(400),
  "bench-3q2E_x9ZkTm0a-bQ",
  "Xk3_9fQe-Lm0aZ7wPq2Tn8Rb",
];

describe("password policy", () => {
  it("PW-2: normalisation is NFKC and nothing else", () => {
    expect(normalizePassword("\ufb01sh")).toBe("fish");
    expect(normalizePassword("Ｐａｓｓ")).toBe("Pass");
    expect(normalizePassword("e\u0301")).toBe("\u00e9");
    expect(normalizePassword(" Secret ")).toBe(" Secret ");
    expect(normalizePassword("MiXeD")).toBe("MiXeD");
  });

  it("PW-2: a password that is not well-formed Unicode (a lone surrogate) is refused with the reason", async () => {
    for (const password of ["lone \ud800 high surrogate", "lone \udfff low surrogate", "reversed \udc00\ud800 pair", "\ud83d"]) {
      const error = await refusal(password);
      expect(error.code, JSON.stringify(password)).toBe(ErrorCode.ValidationFailed);
      expect(error.message).toMatch(/not valid Unicode text/);
    }
    await expectAccepted("a proper pair \ud83d\udd11 is fine");
  });

  it("PW-3: fewer than 8 characters is refused with the reason", async () => {
    const error = await refusal("seven77");
    expect(error.code).toBe(ErrorCode.ValidationFailed);
    expect(error.message).toMatch(/at least 8 characters/);
    await expectAccepted("eight8x8");
  });

  it("PW-3: length is counted in characters, not bytes or UTF-16 units", async () => {
    expect((await refusal("🔑🔑🔑🔑🔑🔑🔑")).message).toMatch(/at least 8/);
    await expectAccepted("🔑🔒🔐🔓🏰🚪🧱🪜");
  });

  it("PW-3: 64 and more characters are accepted, a 100-character passphrase too", async () => {
    await expectAccepted(`${"a".repeat(63)}b`);
    const hundred = "correct horse battery staple ".repeat(4).slice(0, 100);
    expect([...hundred]).toHaveLength(100);
    await expectAccepted(hundred);
    await expectAccepted("x".repeat(1024));
  });

  it("PW-3: any characters are allowed and there are no composition rules", async () => {
    for (const password of [
      "all lowercase words here",
      "ALLUPPERCASEPASSWORD",
      "ünïcödé пароль 密码很长",
      "tabs\tand\nnewlines",
    ]) {
      await expectAccepted(password);
    }
  });

  it("PW-3: a common password is refused with the reason 'too common', whatever its case", async () => {
    for (const password of ["password", "Password1", "QWERTY123", "iloveyou", "12345678"]) {
      const error = await refusal(password);
      expect(error.code).toBe(ErrorCode.ValidationFailed);
      expect(error.message).toMatch(/too common/);
    }
  });

  it("PW-3: a common password with the usual decorations is refused: Password1!, P@ssw0rd!, Qwerty123!", async () => {
    for (const password of [
      "Password1!",
      "P@ssw0rd!",
      "Qwerty123!",
      "Password123!!",
      "Dragon2024!",
      "!!Sunshine",
      "2024football",
      "Letmein!!!1",
      "trustno1?!",
    ]) {
      expect((await refusal(password)).message, password).toMatch(/too common/);
    }
  });

  it("PW-3: a common password that ends in digits is refused with symbols added after it: Qwer1234!!, Abcd1234?!", async () => {
    for (const password of ["Qwer1234!!", "Abcd1234?!"]) {
      expect((await refusal(password)).message, password).toMatch(/too common/);
    }
  });

  it("PW-3: a common password with a symbol inside is refused with digits added after it: P@ssw0rd2024, Hip-Hop2024", async () => {
    for (const password of ["P@ssw0rd2024", "Hip-Hop2024"]) {
      expect((await refusal(password)).message, password).toMatch(/too common/);
    }
  });

  it("PW-3: only decoration at the ends is stripped: a password that is common only without a space or symbol inside it passes", async () => {
    for (const password of ["sun shine", "base-ball", "star wars"]) await expectAccepted(password);
  });

  it("PW-3: an empty blocklist entry (the last line of a file split on newlines) refuses nothing: passwords without letters pass", async () => {
    const config = policy({ blocklist: ["portcullis", ""] });
    for (const password of ["4815 1623 4242", "#%&*(@!$)"]) await expectAccepted(password, config);
    expect((await refusal("Portcullis!", config)).message).toMatch(/too common/);
  });

  it("PW-3: a failed load of the common-password list is not kept: the next check loads it again", async () => {
    vi.resetModules();
    let loads = 0;
    vi.doMock("@zxcvbn-ts/language-common", async (importOriginal) => {
      const { dictionary } = await importOriginal<typeof import("@zxcvbn-ts/language-common")>();
      return {
        dictionary: {
          get "passwords-common"() {
            loads += 1;
            if (loads === 1) throw new Error("word list unreadable");
            return dictionary["passwords-common"];
          },
        },
      };
    });
    try {
      const fresh = await import("./password-policy.js");
      await expect(fresh.assertAcceptablePassword(defaults, "correct horse battery staple")).rejects.toThrow(
        "word list unreadable",
      );
      await expect(fresh.assertAcceptablePassword(defaults, "Password1!")).rejects.toMatchObject({
        code: ErrorCode.ValidationFailed,
        message: "The password is too common; choose another",
      });
      await expect(fresh.assertAcceptablePassword(defaults, "correct horse battery staple")).resolves.toBeUndefined();
      expect(loads).toBe(2);
    } finally {
      vi.doUnmock("@zxcvbn-ts/language-common");
      vi.resetModules();
    }
  });

  it("PW-3: passphrases of ordinary words and every password the test suites set pass the policy", async () => {
    for (const password of fixturePasswords) await expectAccepted(password);
    await expectAccepted("correct horse battery staple", defaults, "alice");
    await expectAccepted("purple elephant dancing quietly");
    await expectAccepted("my dog has fleas, and so do I");
  });

  it("PW-3: the common-password list is loaded at the first check, never when @portcullis/core is imported", async () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url));
    const core = new URL("../index.ts", import.meta.url).href;
    const script = `
      import { createRequire } from "node:module";
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes("@zxcvbn-ts"));
      const { createAuth, createUser, memoryStorage } = await import(${JSON.stringify(core)});
      const auth = createAuth({
        storage: memoryStorage(), issuer: "https://api.example.com", audience: "example-api",
        secrets: { signing: "x".repeat(32), encryption: "00".repeat(32) },
      });
      const atImport = loaded();
      const refused = await createUser(auth, { username: "alice", password: "Password1!" }).then(() => "accepted", (error) => error.message);
      console.log(JSON.stringify({ atImport, afterCheck: loaded(), refused }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
    });
    expect(JSON.parse(stdout)).toEqual({
      atImport: false,
      afterCheck: true,
      refused: "The password is too common; choose another",
    });
  });

  it("PW-3: the configured blocklist is refused too, after NFKC and case folding", async () => {
    const config = policy({ blocklist: ["Portcullis2025"] });
    expect((await refusal("portcullis2025", config)).message).toMatch(/too common/);
    expect((await refusal("ＰＯＲＴＣＵＬＬＩＳ2025", config)).message).toMatch(/too common/);
    await expectAccepted("portcullis2025");
  });

  it("PW-3: the username is refused as the password", async () => {
    expect((await refusal("alice-in-wonderland", defaults, "Alice-In-Wonderland")).message).toMatch(/username/);
  });

  it("PW-3: the minimum length is configurable, but never below 8", async () => {
    const config = policy({ minLength: 12 });
    expect((await refusal("elevenchars", config)).message).toMatch(/at least 12 characters/);
    await expectAccepted("twelve chars", config);
    expect(() => policy({ minLength: 7 })).toThrow(/password\.minLength/);
  });

  describe("PW-3: the isBreached hook", () => {
    it("PW-3: isBreached gets the NFKC form once the other checks pass; true refuses with the reason", async () => {
      const isBreached = vi.fn((password: string) => password === "five fish on a flat plate");
      const config = policy({ isBreached });
      expect((await refusal("\ufb01ve \ufb01sh on a \ufb02at plate", config)).message).toMatch(/data breach/);
      expect(isBreached).toHaveBeenCalledWith("five fish on a flat plate");
      isBreached.mockClear();
      for (const password of ["short", "Password1!", "alice-in-wonderland", "bad \ud800 text"]) {
        expect((await refusal(password, config, "alice-in-wonderland")).code).toBe(ErrorCode.ValidationFailed);
      }
      expect(isBreached).not.toHaveBeenCalled();
      await expectAccepted("correct horse battery staple", config);
      expect(isBreached).toHaveBeenCalledTimes(1);
    });

    it("PW-3: an asynchronous isBreached is awaited", async () => {
      const config = policy({ isBreached: async (password) => password.startsWith("leaked") });
      const error = await refusal("leaked long passphrase", config);
      expect(error.code).toBe(ErrorCode.ValidationFailed);
      expect(error.message).toBe("This password appears in a data breach; choose another");
      await expectAccepted("unleaked long passphrase", config);
    });

    it("PW-3: an isBreached hook that fails gives 50300 with the error as cause: the check fails closed", async () => {
      const outage = new Error("range API unreachable");
      for (const isBreached of [
        () => {
          throw outage;
        },
        async () => Promise.reject(outage),
      ]) {
        const error = await refusal("correct horse battery staple", policy({ isBreached }));
        expect(error.code).toBe(ErrorCode.Unavailable);
        expect(error.cause).toBe(outage);
        expect(error.message).toBe("The password could not be checked against known breaches; try again later");
      }
    });

    it("PW-3: isBreached must be a function when given", () => {
      for (const isBreached of ["yes", true, {}, null]) {
        expect(() => policy({ isBreached } as unknown as AuthConfig["password"]), String(isBreached)).toThrow(
          /password\.isBreached must be a function/,
        );
      }
      expect(() => policy({ isBreached: undefined })).not.toThrow();
    });
  });

  it("PW-4: the byte cap counts UTF-8 bytes", async () => {
    expect(exceedsByteCap("a".repeat(1024), 1024)).toBe(false);
    expect(exceedsByteCap("a".repeat(1025), 1024)).toBe(true);
    expect(exceedsByteCap("é".repeat(513), 1024)).toBe(true);
    expect(exceedsByteCap("é".repeat(512), 1024)).toBe(false);
    expect((await refusal("é".repeat(600))).message).toMatch(/at most 1024 bytes/);
  });

  it("PW-4: the byte cap counts the NFKC form: 400 × e+U+0301 is 1200 bytes typed and 800 stored, so it is accepted", async () => {
    await expectAccepted("e\u0301".repeat(400));
    expect((await refusal("\ufdfa".repeat(32))).message).toMatch(/at most 1024 bytes/);
  });

  it("PW-4: a password over the cap as typed is refused, even when its NFKC form would fit: 600 × U+1D400 is 2400 bytes typed and 600 after NFKC", async () => {
    const typed = "\u{1d400}".repeat(600);
    expect(typed).toHaveLength(1200);
    expect(Buffer.byteLength(normalizePassword(typed))).toBe(600);
    expect((await refusal(typed)).message).toMatch(/at most 1024 bytes/);
    await expectAccepted("\u{1d400}".repeat(512));
  });
});
