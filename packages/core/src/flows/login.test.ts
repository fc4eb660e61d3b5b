import { createHash, randomBytes } from "node:crypto";
import { hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import bcryptjs from "bcryptjs";
import { describe, expect, it, vi } from "vitest";
import { parseImportedPasswordHash } from "../crypto/imported-password-hash.js";
import { phcParameters } from "../crypto/password-hasher.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { verifyAccessTokenClaims } from "../tokens/access-token.js";
import {
  addUser,
  authError,
  encryptionKey,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  shownUser,
  signingSecret,
  tally,
} from "./fixtures.test-support.js";
import { type LoginInput, login } from "./login.js";
import { setUserDisabled } from "./manage-users.js";
import { verifyTotp } from "./verify-totp.js";

vi.mock("@node-rs/argon2", async (importOriginal) => {
  const argon2 = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...argon2, hash: vi.fn(argon2.hash), verify: vi.fn(argon2.verify) };
});

/** How many argon2id computations (hash or verify) ran so far. */
const argon2Runs = () => vi.mocked(argon2Hash).mock.calls.length + vi.mocked(argon2Verify).mock.calls.length;

const wrongPassword = "not the right password";
const minutes = (count: number) => count * 60_000;
const hours = (count: number) => count * 3_600_000;

async function tokensOf(promise: ReturnType<typeof login>) {
  const result = await promise;
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens;
}

describe("login", () => {
  it("a user signs in with the right password and gets a session", async () => {
    const { auth, events } = makeAuth();
    const userId = await addUser(auth, "alice");
    const tokens = await tokensOf(login(auth, { username: "Alice", password: goodPassword }));
    expect(tokens.user).toEqual(shownUser({ id: userId, username: "alice", createdAt: auth.now() }));
    expect(tokens.tokenType).toBe("Bearer");
    expect(tokens.expiresIn).toBe(900);
    expect(events.map((event) => event.type)).toContain("login.succeeded");
  });

  it("ASVS 6.2.10: a password set three years ago still signs in, and nothing in the answer asks for a change", async () => {
    const { auth, clock } = makeAuth();
    await addUser(auth, "alice");
    clock.advance(hours(24 * 365 * 3));
    const result = await login(auth, { username: "alice", password: goodPassword });
    expect(result.status).toBe("authenticated");
    expect(JSON.stringify(result)).not.toMatch(/expir(ed|y)Password|passwordExpir|mustChange|changeRequired/i);
  });

  it("HTTP-6: login.failed names the account by id, never by what was typed as the username", async () => {
    const { auth, events } = makeAuth();
    const userId = await addUser(auth, "known");
    await outcome(login(auth, { username: "known", password: wrongPassword }));
    await outcome(login(auth, { username: "my secret passphrase typed in the wrong box", password: wrongPassword }));
    const failures = events.filter((event) => event.type === "login.failed");
    expect(failures.map((event) => event.userId)).toEqual([userId, null]);
    expect(JSON.stringify(events)).not.toContain("my secret passphrase");
  });

  describe("RL-1, HTTP-6: what a typed username leaves in storage and events", () => {
    /** Memory storage that records every counter key it is asked to hit. */
    function recordingStorage() {
      const storage = memoryStorage();
      const keys: string[] = [];
      const hit = storage.counters.hit.bind(storage.counters);
      storage.counters.hit = (key, ...rest) => {
        keys.push(key);
        return hit(key, ...rest);
      };
      return { storage, keys };
    }
    const huge = "\ufdfa".repeat(21_000);

    it("RL-1: a username over 128 characters is answered like an unknown user, before it is normalised", async () => {
      const { storage, keys } = recordingStorage();
      const { auth, events } = makeAuth({ storage });
      await addUser(auth, "a".repeat(128));
      const normalize = vi.spyOn(String.prototype, "normalize");
      const unknown = await authError(login(auth, { username: huge, password: "x".repeat(1025), ip: "203.0.113.7" }));
      const calls = normalize.mock.contexts.map((context) => String(context).length);
      normalize.mockRestore();
      expect(calls.every((length) => length < huge.length)).toBe(true);
      const ghost = await authError(login(auth, { username: "ghost", password: wrongPassword }));
      expect({ code: unknown.code, message: unknown.message }).toEqual({ code: ghost.code, message: ghost.message });
      expect(await outcome(login(auth, { username: "a".repeat(129), password: goodPassword }))).toBe(40100);
      await tokensOf(login(auth, { username: "A".repeat(128), password: goodPassword }));
      expect(keys.some((key) => key.startsWith("ip:"))).toBe(true);
      expect(Math.max(...keys.map((key) => key.length))).toBeLessThanOrEqual(64);
      expect(events.find((event) => event.type === "login.failed")).toMatchObject({ userId: null });
    });

    it("RL-1: a username that can be nobody's is never looked up in storage, yet costs one dummy verification (EN-2)", async () => {
      const { storage } = recordingStorage();
      const { auth } = makeAuth({ storage });
      await addUser(auth, "a".repeat(128));
      const find = vi.spyOn(storage.users, "findByUsernameKey");
      const verify = vi.spyOn(auth.passwords, "verify");
      for (const username of ["a".repeat(129), "lone \ud800 surrogate", huge]) {
        expect(await outcome(login(auth, { username, password: goodPassword }))).toBe(40100);
      }
      expect(find).not.toHaveBeenCalled();
      expect(verify.mock.calls.map(([phc]) => phc)).toEqual([null, null, null]);
      await tokensOf(login(auth, { username: "a".repeat(128), password: goodPassword }));
      expect(find).toHaveBeenCalledTimes(1);
    });

    it("RL-1: a name that is not a stable identifier (spaces around it, NBSP, soft hyphen, zero-width space, NUL) reaches neither storage nor an account counter, and costs one dummy verification", async () => {
      const { storage, keys } = recordingStorage();
      const { auth } = makeAuth({ storage });
      await addUser(auth, "alice");
      const find = vi.spyOn(storage.users, "findByUsernameKey");
      const verify = vi.spyOn(auth.passwords, "verify");
      const spellings = [
        " alice",
        "alice  ",
        "    alice    ",
        "\u00a0alice",
        "al\u00adice",
        "ali\u200bce",
        "alice\u0000",
        "ali\u0000ce",
      ];
      for (const username of spellings) {
        expect(await outcome(login(auth, { username, password: goodPassword })), JSON.stringify(username)).toBe(40100);
      }
      expect(find).not.toHaveBeenCalled();
      expect(keys.filter((key) => key.startsWith("account:"))).toEqual([]);
      expect(verify.mock.calls.map(([phc]) => phc)).toEqual(spellings.map(() => null));
      await tokensOf(login(auth, { username: "Alice", password: goodPassword }));
    });

    it("RL-1: 100 logins with 21,000 × U+FDFA as the username hold no more in storage than 100 short ones", async () => {
      const { storage, keys } = recordingStorage();
      const { auth } = makeAuth({
        storage,
        throttle: { account: [{ limit: 5, window: "15m" }], ip: [{ limit: 1000, window: "15m" }] },
      });
      for (let index = 0; index < 100; index += 1) {
        await outcome(login(auth, { username: `${huge}${index}`, password: "x".repeat(1025), ip: `203.0.113.${index}` }));
      }
      expect(keys.reduce((sum, key) => sum + key.length, 0)).toBeLessThan(100 * 2 * 64);
      expect(storage.sizes().counters).toBeLessThanOrEqual(100);
    });

    it("HTTP-6: a password typed as the username never reaches a counter key or an event, not even as a plain digest", async () => {
      const { storage, keys } = recordingStorage();
      const { auth, events } = makeAuth({ storage, throttle: { account: [{ limit: 1, window: "15m" }] } });
      const typed = "Tr0ub4dor&3 typed in the wrong box";
      for (let attempt = 0; attempt < 2; attempt += 1) await outcome(login(auth, { username: typed, password: wrongPassword }));
      const throttled = events.find((event) => event.type === "throttled");
      expect(throttled).toMatchObject({ scope: "account" });
      const plainDigests = [typed, typed.toLowerCase()].flatMap((value) => {
        const digest = createHash("sha256").update(value).digest();
        return [digest.toString("base64url"), digest.toString("hex"), digest.toString("base64")];
      });
      const seen = [...keys, JSON.stringify(events)].join("\n");
      for (const forbidden of [typed, typed.toLowerCase(), ...plainDigests.map((digest) => digest.slice(0, 16))]) {
        expect(seen).not.toContain(forbidden);
      }
    });

    it("HTTP-6: the account key is keyed by the configured secret: stable for one key, different under another", async () => {
      const keysUnder = async (encryption: string) => {
        const { storage, keys } = recordingStorage();
        const { auth } = makeAuth({ storage, secrets: { signing: signingSecret, encryption } });
        await outcome(login(auth, { username: "Same-Name", password: wrongPassword }));
        await outcome(login(auth, { username: "same-name", password: wrongPassword }));
        return keys.filter((key) => key.startsWith("account:"));
      };
      const first = await keysUnder(encryptionKey);
      const again = await keysUnder(encryptionKey);
      const other = await keysUnder(randomBytes(32).toString("base64url"));
      expect(first.length).toBeGreaterThan(0);
      expect(again).toEqual(first);
      expect(new Set(first).size).toBe(first.length / 2);
      for (const key of other) expect(first).not.toContain(key);
    });
  });

  describe("PW-1: re-hashing", () => {
    it("PW-1: a hash with older parameters is re-hashed at the next successful login", async () => {
      const { auth, storage } = makeAuth();
      const userId = await addUser(auth, "old-hash");
      const old = await argon2Hash(goodPassword, { algorithm: 2, memoryCost: 19456, timeCost: 3, parallelism: 1 });
      await storage.users.update(userId, { passwordHash: old }, auth.now());

      await expect(outcome(login(auth, { username: "old-hash", password: wrongPassword }))).resolves.toBe(40100);
      expect((await storage.users.findById(userId))?.passwordHash).toBe(old);

      await tokensOf(login(auth, { username: "old-hash", password: goodPassword }));
      const rehashed = (await storage.users.findById(userId))?.passwordHash as string;
      expect(rehashed).not.toBe(old);
      expect(phcParameters(rehashed)).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
      expect(await auth.passwords.verify(rehashed, goodPassword)).toBe(true);
      await tokensOf(login(auth, { username: "old-hash", password: goodPassword }));
      expect((await storage.users.findById(userId))?.passwordHash).toBe(rehashed);
    });

    it("PW-1: the re-hash does not overwrite a password changed after it was read (compare-and-set)", async () => {
      const { auth, storage } = makeAuth();
      const userId = await addUser(auth, "racing");
      const old = await argon2Hash(goodPassword, { algorithm: 2, memoryCost: 19456, timeCost: 3, parallelism: 1 });
      await storage.users.update(userId, { passwordHash: old }, auth.now());
      const changed = await auth.passwords.hash("a password set meanwhile");
      const hash = auth.passwords.hash.bind(auth.passwords);
      const during = vi.spyOn(auth.passwords, "hash").mockImplementationOnce(async (password) => {
        await storage.users.update(userId, { passwordHash: changed }, auth.now());
        return hash(password);
      });
      try {
        await tokensOf(login(auth, { username: "racing", password: goodPassword }));
      } finally {
        during.mockRestore();
      }
      expect((await storage.users.findById(userId))?.passwordHash).toBe(changed);
    });

    it("PW-1, IM-1, TMP-4: a TOTP user whose hash is re-hashed at the password step finishes the login with the code", async () => {
      const harness = makeAuth();
      const { auth, storage } = harness;
      const userId = await addUser(auth, "totp-rehash");
      const { secret } = await enrolTotp(auth, userId);
      const parsed = parseImportedPasswordHash(await bcryptjs.hash(goodPassword, 4));
      if (!parsed.ok) throw new Error(parsed.reason);
      await storage.users.update(userId, { passwordHash: parsed.stored }, auth.now());
      const first = await login(auth, { username: "totp-rehash", password: goodPassword });
      if (first.status !== "totp_required") throw new Error(`expected totp_required, got ${first.status}`);
      expect(phcParameters((await storage.users.findById(userId))?.passwordHash as string)).not.toBeNull();
      const done = await verifyTotp(auth, { tempToken: first.tempToken, code: nextCode(harness, secret) });
      expect(done.user.id).toBe(userId);
    });

    it("PW-1: a weaker hash is re-hashed with the configured, higher cost", async () => {
      const { auth, storage } = makeAuth({ password: { hashing: { memoryCost: 24576, timeCost: 3 } } });
      const userId = await addUser(auth, "weak-hash");
      const weak = await argon2Hash(goodPassword, { algorithm: 2, memoryCost: 4096, timeCost: 2, parallelism: 1 });
      await storage.users.update(userId, { passwordHash: weak }, auth.now());
      await tokensOf(login(auth, { username: "weak-hash", password: goodPassword }));
      const rehashed = (await storage.users.findById(userId))?.passwordHash as string;
      expect(phcParameters(rehashed)).toEqual({ memoryCost: 24576, timeCost: 3, parallelism: 1 });
    });
  });

  describe("PW-2: a password matches only itself", () => {
    const ligature = "\ufb01ve \ufb01sh on a \ufb02at plate";
    const { auth } = makeAuth({ throttle: generousThrottle });
    const created = addUser(auth, "nfkc", ligature);

    it("PW-2: a password set with compatibility characters verifies in its NFKC form, and the other way round", async () => {
      await created;
      await tokensOf(login(auth, { username: "nfkc", password: "five fish on a flat plate" }));
      await tokensOf(login(auth, { username: "nfkc", password: ligature }));
      await addUser(auth, "nfkc-plain", "five fish on a flat plate");
      await tokensOf(login(auth, { username: "nfkc-plain", password: ligature }));
    });

    it("PW-2: composed and decomposed accents are the same password", async () => {
      await addUser(auth, "accents", "caf\u00e9 au lait, s'il vous pla\u00eet");
      await tokensOf(login(auth, { username: "accents", password: "cafe\u0301 au lait, s'il vous plai\u0302t" }));
    });

    it("PW-2: no trimming, case folding or truncation", async () => {
      await created;
      for (const password of [
        "five fish on a flat plate ",
        " five fish on a flat plate",
        "FIVE FISH ON A FLAT PLATE",
        "Five fish on a flat plate",
        "five fish on a flat plat",
        "five fish on a flat plate\n",
        "five fish on a flat plate\u0000",
      ]) {
        expect(await outcome(login(auth, { username: "nfkc", password })), JSON.stringify(password)).toBe(40100);
      }
    });

    it("PW-2: a long password is not truncated at 72 bytes", async () => {
      const long = `${"x".repeat(100)}-tail`;
      await addUser(auth, "long-password", long);
      expect(await outcome(login(auth, { username: "long-password", password: `${"x".repeat(100)}-tai1` }))).toBe(40100);
      await tokensOf(login(auth, { username: "long-password", password: long }));
    });

    it("PW-2: a lone surrogate never signs in, though argon2 reads U+D800 and U+DBFF alike as U+FFFD", async () => {
      const userId = await addUser(auth, "surrogate");
      const cost = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
      const collapsed = await argon2Hash("lone \ufffd surrogate", cost);
      await auth.storage.users.update(userId, { passwordHash: collapsed }, auth.now());
      await tokensOf(login(auth, { username: "surrogate", password: "lone \ufffd surrogate" }));
      const before = argon2Runs();
      for (const password of ["lone \ud800 surrogate", "lone \udbff surrogate", "lone \udc00 surrogate"]) {
        expect(await outcome(login(auth, { username: "surrogate", password })), JSON.stringify(password)).toBe(40100);
      }
      expect(argon2Runs()).toBe(before);
    });
  });

  describe("PW-4: the byte cap", () => {
    it("PW-4: a password over 1 KiB is refused at login without any hashing", async () => {
      const { auth, events } = makeAuth();
      await addUser(auth, "capped");
      const before = argon2Runs();
      for (const password of ["a".repeat(1025), "é".repeat(513), "x".repeat(1_000_000)]) {
        const error = await authError(login(auth, { username: "capped", password }));
        expect(error.code).toBe(ErrorCode.AuthenticationFailed);
        expect(error.message).toBe("Invalid username or password");
      }
      expect(await outcome(login(auth, { username: "nobody-capped", password: "a".repeat(2048) }))).toBe(40100);
      expect(argon2Runs()).toBe(before);
      expect(events.filter((event) => event.type === "login.failed")).toHaveLength(4);
    });

    it("PW-4: a password of exactly 1 KiB is still evaluated", async () => {
      const { auth } = makeAuth();
      const password = "k".repeat(1024);
      await addUser(auth, "kibi", password);
      const verify = vi.spyOn(auth.passwords, "verify");
      await tokensOf(login(auth, { username: "kibi", password }));
      expect(verify).toHaveBeenCalledTimes(1);
    });

    it("PW-4: the cap counts the NFKC form at login as when setting: 400 × e+U+0301 (1200 bytes typed) signs in", async () => {
      const { auth } = makeAuth();
      const password = "e\u0301".repeat(400);
      await addUser(auth, "accented", password);
      await tokensOf(login(auth, { username: "accented", password }));
      await tokensOf(login(auth, { username: "accented", password: "\u00e9".repeat(400) }));
      expect(await outcome(login(auth, { username: "accented", password: "\u00e9".repeat(513) }))).toBe(40100);
    });
  });

  describe("PW-5: wrong JSON types", () => {
    const { auth, storage } = makeAuth();
    const created = addUser(auth, "typed");
    const malformed: unknown[] = [{ $ne: "" }, { $gt: "" }, [], [goodPassword], 12345, 0, true, false];

    it("PW-5: an object, array, number or boolean as the password or username gets 40002 and never reaches storage", async () => {
      await created;
      const find = vi.spyOn(storage.users, "findByUsernameKey");
      const hit = vi.spyOn(storage.counters, "hit");
      const verify = vi.spyOn(auth.passwords, "verify");
      for (const value of malformed) {
        const byPassword = await authError(login(auth, { username: "typed", password: value } as unknown as LoginInput));
        expect(byPassword.code, JSON.stringify(value)).toBe(ErrorCode.MalformedParameter);
        const byUsername = await authError(login(auth, { username: value, password: goodPassword } as unknown as LoginInput));
        expect(byUsername.code, JSON.stringify(value)).toBe(ErrorCode.MalformedParameter);
      }
      expect(await outcome(login(auth, { username: "typed", password: goodPassword, provider: { $ne: "" } } as never))).toBe(
        40002,
      );
      expect(find).not.toHaveBeenCalled();
      expect(hit).not.toHaveBeenCalled();
      expect(verify).not.toHaveBeenCalled();
      find.mockRestore();
    });

    it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
      await created;
      const answer = async (input: Record<string, unknown>) => {
        const error = await authError(login(auth, input as unknown as LoginInput));
        return { code: error.code, message: error.message };
      };
      const valid = { username: "typed", password: goodPassword };
      for (const field of ["username", "password"]) {
        for (const missing of [undefined, null, ""]) {
          expect(await answer({ ...valid, [field]: missing }), `${field}: ${missing}`).toEqual({
            code: ErrorCode.MissingParameter,
            message: `${field} is required`,
          });
        }
        for (const value of malformed) {
          expect(await answer({ ...valid, [field]: value }), `${field}: ${JSON.stringify(value)}`).toEqual({
            code: ErrorCode.MalformedParameter,
            message: `${field} must be a string`,
          });
        }
      }
      expect(await answer({ ...valid, provider: 42 })).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "provider must be a string",
      });
      await tokensOf(login(auth, { ...valid, provider: null } as unknown as LoginInput));
      await tokensOf(login(auth, { ...valid, provider: "local" }));
    });

    it("PW-5: missing fields get 40001 and never reach storage, also when smuggled in a __proto__ key", async () => {
      await created;
      const find = vi.spyOn(storage.users, "findByUsernameKey");
      const smuggled = JSON.parse(`{"username":"typed","__proto__":{"password":${JSON.stringify(goodPassword)}}}`);
      for (const input of [{ username: "typed" }, { password: goodPassword }, { username: "typed", password: "" }, smuggled]) {
        expect(await outcome(login(auth, input as LoginInput))).toBe(ErrorCode.MissingParameter);
      }
      expect(find).not.toHaveBeenCalled();
      find.mockRestore();
    });
  });

  it("directory login without a directory, and an unknown provider, are 40400 before any attempt or password check", async () => {
    const { auth, storage } = makeAuth();
    await addUser(auth, "directory-user");
    const hit = vi.spyOn(storage.counters, "hit");
    const verify = vi.spyOn(auth.passwords, "verify");
    const cases = [
      ["directory", "Directory login is not enabled"],
      ["ldap", "No such login provider"],
      ["", "No such login provider"],
      ["LOCAL", "No such login provider"],
    ];
    for (const [provider, message] of cases) {
      const error = await authError(login(auth, { username: "directory-user", password: goodPassword, provider }));
      expect({ code: error.code, message: error.message }, provider).toEqual({ code: ErrorCode.NotFound, message });
    }
    expect(hit).not.toHaveBeenCalled();
    expect(verify).not.toHaveBeenCalled();
  });

  it("PW-7: every login mints fresh tokens and a new session", async () => {
    const { auth, storage } = makeAuth();
    await addUser(auth, "fresh");
    const first = await tokensOf(login(auth, { username: "fresh", password: goodPassword }));
    const second = await tokensOf(login(auth, { username: "fresh", password: goodPassword }));
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    const expected = {
      keys: auth.keys,
      issuer: auth.config.issuer,
      audience: auth.config.audience,
      now: auth.now(),
      clockToleranceSeconds: 5,
    };
    const [one, two] = await Promise.all([
      verifyAccessTokenClaims(first.accessToken, expected),
      verifyAccessTokenClaims(second.accessToken, expected),
    ]);
    expect(two.sid).not.toBe(one.sid);
    expect(two.jti).not.toBe(one.jti);
    expect(await storage.sessions.findSession(two.sid)).not.toBeNull();
  });

  describe("EN-1: one answer for every credential failure", () => {
    it("EN-1: unknown user, wrong password, disabled account with a wrong password: same code and message", async () => {
      const { auth, events } = makeAuth();
      await addUser(auth, "known");
      const disabledId = await addUser(auth, "disabled");
      await setUserDisabled(auth, { userId: disabledId, disabled: true });
      const answers = await Promise.all(
        [
          { username: "unknown", password: wrongPassword },
          { username: "known", password: wrongPassword },
          { username: "disabled", password: wrongPassword },
        ].map(async (input) => {
          const error = await authError(login(auth, input));
          return { name: error.name, code: error.code, message: error.message, retryAfterSeconds: error.retryAfterSeconds };
        }),
      );
      expect(answers[0]).toEqual({
        name: "AuthError",
        code: 40100,
        message: "Invalid username or password",
        retryAfterSeconds: undefined,
      });
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      const failures = events.flatMap((event) => (event.type === "login.failed" ? [event.reason] : []));
      expect(failures).toEqual(["invalid_credentials", "invalid_credentials", "invalid_credentials"]);
    });

    it("EN-1: a disabled account is told so only after its password was proven", async () => {
      const { auth, events } = makeAuth();
      const userId = await addUser(auth, "disabled-right");
      await setUserDisabled(auth, { userId, disabled: true });
      events.length = 0;
      const error = await authError(login(auth, { username: "disabled-right", password: goodPassword, ip: "192.0.2.10" }));
      expect({ code: error.code, message: error.message }).toEqual({
        code: ErrorCode.Forbidden,
        message: "The account is disabled",
      });
      expect(events).toEqual([{ type: "login.failed", userId, reason: "disabled", at: auth.now(), ip: "192.0.2.10" }]);
    });

    it("EN-1: a locked account and an unknown user locked the same way get the same answer", async () => {
      const { auth } = makeAuth();
      await addUser(auth, "lockable");
      for (const username of ["lockable", "ghost"]) {
        for (let attempt = 0; attempt < 5; attempt += 1) await outcome(login(auth, { username, password: wrongPassword }));
      }
      const [known, unknown] = await Promise.all(
        ["lockable", "ghost"].map(async (username) => {
          const error = await authError(login(auth, { username, password: goodPassword }));
          return { code: error.code, message: error.message, retryAfterSeconds: error.retryAfterSeconds };
        }),
      );
      expect(known).toEqual({ code: 42900, message: "Too many attempts; try again later", retryAfterSeconds: 900 });
      expect(unknown).toEqual(known);
    });
  });

  it("EN-2: an unknown user costs one argon2id verify, like a wrong password (median ratio, 25 samples)", async () => {
    const { auth } = makeAuth({ throttle: generousThrottle });
    await addUser(auth, "timing");
    const verify = vi.spyOn(auth.passwords, "verify");
    const time = async (username: string) => {
      const started = performance.now();
      expect(await outcome(login(auth, { username, password: wrongPassword }))).toBe(40100);
      return performance.now() - started;
    };
    await time("warm-up");
    await time("timing");
    verify.mockClear();
    const argon2Before = vi.mocked(argon2Verify).mock.calls.length;
    const unknown: number[] = [];
    const known: number[] = [];
    for (let sample = 0; sample < 25; sample += 1) {
      unknown.push(await time(`nobody-${sample}`));
      known.push(await time("timing"));
    }
    expect(verify.mock.calls.filter(([phc]) => phc === null)).toHaveLength(25);
    expect(verify).toHaveBeenCalledTimes(50);
    expect(vi.mocked(argon2Verify).mock.calls.length - argon2Before).toBe(50);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    const ratio = median(unknown) / median(known);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it("EN-2: a hash with older, cheaper parameters answers a wrong password no faster than an unknown user (median ratio, 12 samples)", async () => {
    const { auth, storage } = makeAuth({ throttle: generousThrottle, password: { hashing: { timeCost: 6 } } });
    const userId = await addUser(auth, "legacy");
    const legacy = await argon2Hash(goodPassword, { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    await storage.users.update(userId, { passwordHash: legacy }, auth.now());
    const time = async (username: string) => {
      const started = performance.now();
      expect(await outcome(login(auth, { username, password: wrongPassword }))).toBe(40100);
      return performance.now() - started;
    };
    await time("warm-up");
    await time("legacy");
    const unknown: number[] = [];
    const known: number[] = [];
    for (let sample = 0; sample < 12; sample += 1) {
      unknown.push(await time(`nobody-${sample}`));
      known.push(await time("legacy"));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    const ratio = median(unknown) / median(known);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(1.5);
    expect((await storage.users.findById(userId))?.passwordHash).toBe(legacy);
  });

  describe("EN-3 and TMP-1: the second factor", () => {
    const { auth, storage, events } = makeAuth({ throttle: generousThrottle });
    const enrolled = (async () => {
      const userId = await addUser(auth, "two-factor");
      await enrolTotp(auth, userId);
      return userId;
    })();

    it("EN-3: a wrong password for a TOTP user gets 40100, not a request for the second factor", async () => {
      await enrolled;
      const error = await authError(login(auth, { username: "two-factor", password: wrongPassword }));
      expect(error.code).toBe(ErrorCode.AuthenticationFailed);
      expect(error.message).toBe("Invalid username or password");
    });

    it("TMP-1: the 40102 result carries a temporary token and no access or refresh token; no session starts", async () => {
      const userId = await enrolled;
      const createSession = vi.spyOn(storage.sessions, "createSession");
      events.length = 0;
      const result = await login(auth, { username: "two-factor", password: goodPassword });
      expect(result.status).toBe("totp_required");
      expect(Object.keys(result).sort()).toEqual(["status", "tempToken"]);
      expect(createSession).not.toHaveBeenCalled();
      expect(events).toEqual([{ type: "second_factor.required", userId, at: auth.now(), ip: undefined }]);
      createSession.mockRestore();
    });
  });

  describe("RL-1: the account throttle", () => {
    it("RL-1: after 5 failures the account gets 42900 with Retry-After, and is allowed again after the window", async () => {
      const { auth, clock } = makeAuth();
      await addUser(auth, "throttled");
      const verify = vi.spyOn(auth.passwords, "verify");
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcome(login(auth, { username: "throttled", password: wrongPassword }))).toBe(40100);
      }
      clock.advance(minutes(5));
      const throttled = await authError(login(auth, { username: "throttled", password: goodPassword }));
      expect(throttled.code).toBe(ErrorCode.TooManyAttempts);
      expect(throttled.retryAfterSeconds).toBe(600);
      expect(verify).toHaveBeenCalledTimes(5);
      clock.advance(minutes(10) - 1000);
      expect(await outcome(login(auth, { username: "throttled", password: goodPassword }))).toBe(42900);
      clock.advance(1000);
      await tokensOf(login(auth, { username: "throttled", password: goodPassword }));
    });

    it("RL-1: a completed sign-in clears the failures", async () => {
      const { auth } = makeAuth();
      await addUser(auth, "cleared");
      for (let attempt = 0; attempt < 4; attempt += 1)
        await outcome(login(auth, { username: "cleared", password: wrongPassword }));
      await tokensOf(login(auth, { username: "cleared", password: goodPassword }));
      for (let attempt = 0; attempt < 4; attempt += 1) {
        expect(await outcome(login(auth, { username: "cleared", password: wrongPassword }))).toBe(40100);
      }
    });

    it("RL-1: the second tier caps an account at 20 failures per 24 hours", async () => {
      const { auth, clock } = makeAuth();
      await addUser(auth, "daily");
      const start = clock.now;
      for (let window = 0; window < 4; window += 1) {
        for (let attempt = 0; attempt < 5; attempt += 1) {
          expect(await outcome(login(auth, { username: "daily", password: wrongPassword }))).toBe(40100);
        }
        expect(await outcome(login(auth, { username: "daily", password: wrongPassword }))).toBe(42900);
        clock.advance(minutes(15));
      }
      const capped = await authError(login(auth, { username: "daily", password: goodPassword }));
      expect(capped.code).toBe(ErrorCode.TooManyAttempts);
      expect(capped.retryAfterSeconds).toBe((start + hours(24) - clock.now) / 1000);
      clock.advance(hours(22));
      expect(await outcome(login(auth, { username: "daily", password: goodPassword }))).toBe(42900);
      clock.now = start + hours(24);
      await tokensOf(login(auth, { username: "daily", password: goodPassword }));
    });

    it("RL-1: attempts refused during a lockout do not use up the daily tier", async () => {
      const { auth, clock } = makeAuth();
      await addUser(auth, "hammered");
      const verify = vi.spyOn(auth.passwords, "verify");
      for (let attempt = 0; attempt < 5; attempt += 1)
        await outcome(login(auth, { username: "hammered", password: wrongPassword }));
      for (let attempt = 0; attempt < 30; attempt += 1) {
        expect(await outcome(login(auth, { username: "hammered", password: wrongPassword }))).toBe(42900);
      }
      expect(verify).toHaveBeenCalledTimes(5);
      clock.advance(minutes(15));
      expect(await outcome(login(auth, { username: "hammered", password: wrongPassword }))).toBe(40100);
      await tokensOf(login(auth, { username: "hammered", password: goodPassword }));
    });

    it("RL-1: unknown usernames have counters too, keyed like known ones (NFKC, case-insensitive)", async () => {
      const { auth } = makeAuth();
      const verify = vi.spyOn(auth.passwords, "verify");
      for (const username of ["Nobody", "NOBODY", "nobody", "ｎｏｂｏｄｙ", "nobody"]) {
        expect(await outcome(login(auth, { username, password: wrongPassword }))).toBe(40100);
      }
      const error = await authError(login(auth, { username: "nobody", password: wrongPassword }));
      expect(error.code).toBe(ErrorCode.TooManyAttempts);
      expect(error.retryAfterSeconds).toBe(900);
      expect(verify.mock.calls.filter(([phc]) => phc === null)).toHaveLength(5);
      expect(await outcome(login(auth, { username: "somebody-else", password: wrongPassword }))).toBe(40100);
    });

    it("RL-1: one account's failures do not throttle another account", async () => {
      const { auth } = makeAuth();
      await addUser(auth, "victim");
      for (let attempt = 0; attempt < 6; attempt += 1)
        await outcome(login(auth, { username: "attacked", password: wrongPassword }));
      await tokensOf(login(auth, { username: "victim", password: goodPassword }));
    });
  });

  describe("RL-5: a client that signed in before has a budget of its own", () => {
    const lockingTiers: NonNullable<Parameters<typeof makeAuth>[0]>["throttle"] = {
      account: [
        { limit: 5, window: "15m" },
        { limit: 20, window: "24h" },
      ],
    };

    async function deviceTokenOf(auth: Parameters<typeof login>[0], username: string): Promise<string> {
      const tokens = await tokensOf(login(auth, { username, password: goodPassword }));
      expect(tokens.deviceToken).toMatch(/^[A-Za-z0-9_-]{22}\.[0-9]+\.[A-Za-z0-9_-]{22}$/);
      return tokens.deviceToken as string;
    }

    it("RL-5: after a stranger's failures lock the account for a day, its owner's device token still signs in with the password", async () => {
      const { auth, clock } = makeAuth({ throttle: lockingTiers });
      await addUser(auth, "owner");
      const deviceToken = await deviceTokenOf(auth, "owner");
      for (let attempt = 0; attempt < 20; attempt += 1) {
        await outcome(login(auth, { username: "owner", password: `${wrongPassword} ${attempt}` }));
        clock.advance(minutes(16));
      }
      expect(await outcome(login(auth, { username: "owner", password: goodPassword }))).toBe(42900);
      const tokens = await tokensOf(login(auth, { username: "owner", password: goodPassword, deviceToken }));
      expect(tokens.user.username).toBe("owner");
      // The account-wide cap still stops everyone else.
      expect(await outcome(login(auth, { username: "owner", password: goodPassword }))).toBe(42900);
    });

    it("RL-5: the device's own failures are capped, on a counter of its own that a success clears", async () => {
      const { auth } = makeAuth({ throttle: { ...lockingTiers, device: [{ limit: 3, window: "15m" }] } });
      await addUser(auth, "owner");
      const deviceToken = await deviceTokenOf(auth, "owner");
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(await outcome(login(auth, { username: "owner", password: wrongPassword, deviceToken }))).toBe(40100);
      }
      const renewed = (await tokensOf(login(auth, { username: "owner", password: goodPassword, deviceToken }))).deviceToken;
      expect(renewed?.split(".")[0]).toBe(deviceToken.split(".")[0]);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect(await outcome(login(auth, { username: "owner", password: wrongPassword, deviceToken: renewed }))).toBe(40100);
      }
      expect(await outcome(login(auth, { username: "owner", password: goodPassword, deviceToken: renewed }))).toBe(42900);
      // None of the device's failures spent the account's budget.
      await tokensOf(login(auth, { username: "owner", password: goodPassword }));
    });

    it("RL-5: another account's token, a forged, expired, malformed or foreign-key token spends the account's budget", async () => {
      const { auth, clock } = makeAuth({ throttle: { account: [{ limit: 1, window: "15m" }], deviceTokenLifetime: "1d" } });
      await addUser(auth, "owner");
      await addUser(auth, "other");
      const own = await deviceTokenOf(auth, "owner");
      const others = await deviceTokenOf(auth, "other");
      const [id, issued, tag] = own.split(".") as [string, string, string];
      const flipped = `${tag.slice(0, -1)}${tag.endsWith("A") ? "B" : "A"}`;
      const otherKey = { signing: signingSecret, encryption: randomBytes(32).toString("base64url") };
      const foreign = await deviceTokenOf(makeAuth({ storage: auth.storage, clock, secrets: otherKey }).auth, "owner");
      expect(await outcome(login(auth, { username: "owner", password: wrongPassword }))).toBe(40100);
      for (const deviceToken of [
        others,
        `${id}.${issued}.${flipped}`,
        `${id}.${Number(issued) - 1}.${tag}`,
        "garbage",
        "",
        foreign,
      ]) {
        expect(await outcome(login(auth, { username: "owner", password: goodPassword, deviceToken })), deviceToken).toBe(42900);
      }
      clock.advance(hours(24));
      expect(await outcome(login(auth, { username: "owner", password: wrongPassword, deviceToken: own }))).toBe(40100);
      expect(await outcome(login(auth, { username: "owner", password: goodPassword, deviceToken: own }))).toBe(42900);
    });

    it("RL-5, RL-2: the second factor after a device's password spends the device's budget; the locked account's owner finishes TOTP", async () => {
      const harness = makeAuth({ throttle: lockingTiers });
      const { auth } = harness;
      const userId = await addUser(auth, "owner");
      const deviceToken = await deviceTokenOf(auth, "owner");
      const { secret } = await enrolTotp(auth, userId);
      for (let attempt = 0; attempt < 5; attempt += 1) await outcome(login(auth, { username: "owner", password: wrongPassword }));
      const pending = await login(auth, { username: "owner", password: goodPassword, deviceToken });
      if (pending.status !== "totp_required") throw new Error("expected the TOTP step");
      const tokens = await verifyTotp(auth, { tempToken: pending.tempToken, code: nextCode(harness, secret) });
      expect(tokens.deviceToken?.split(".")[0]).toBe(deviceToken.split(".")[0]);
    });

    it("PW-5: a device token that is not a string is 40002 naming deviceToken", async () => {
      const { auth } = makeAuth();
      const error = await authError(login(auth, { username: "a", password: "b", deviceToken: { $ne: "" } as unknown as string }));
      expect({ code: error.code, message: error.message }).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "deviceToken must be a string",
      });
    });
  });

  it("RL-4: 50 concurrent wrong logins on one account are evaluated 5 times; the rest get 42900 with Retry-After", async () => {
    const { auth, events } = makeAuth();
    await addUser(auth, "flooded");
    const verify = vi.spyOn(auth.passwords, "verify");
    const attempts = Array.from({ length: 50 }, () => login(auth, { username: "flooded", password: wrongPassword }));
    const errors = await Promise.all(attempts.map(authError));
    expect(errors.filter((error) => error.code === 40100)).toHaveLength(5);
    const throttled = errors.filter((error) => error.code === 42900);
    expect(throttled).toHaveLength(45);
    expect(throttled.every((error) => error.retryAfterSeconds === 900)).toBe(true);
    expect(verify).toHaveBeenCalledTimes(5);
    expect(events.filter((event) => event.type === "login.failed")).toHaveLength(5);
    expect(events.filter((event) => event.type === "throttled")).toHaveLength(45);
  });

  describe("RL-3: the address throttle", () => {
    it("RL-3: attempts from one address are limited across usernames", async () => {
      const { auth } = makeAuth({ throttle: { ip: [{ limit: 3, window: "1m" }] } });
      const results = await tally(
        ["a", "b", "c", "d", "e"].map((username) => login(auth, { username, password: wrongPassword, ip: "198.51.100.7" })),
      );
      expect(results).toEqual(
        new Map([
          [40100, 3],
          [42900, 2],
        ]),
      );
      expect(await outcome(login(auth, { username: "f", password: wrongPassword, ip: "198.51.100.8" }))).toBe(40100);
    });

    it("RL-3: every address of one IPv6 /64 shares a bucket; another /64 does not", async () => {
      const { auth } = makeAuth({ throttle: { ip: [{ limit: 3, window: "1m" }] } });
      const addresses = ["2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:0db8:0001:0002:0:0:0:abc", "2001:db8:1:2::77"];
      const results = await Promise.all(
        addresses.map((ip, index) => outcome(login(auth, { username: `u${index}`, password: wrongPassword, ip }))),
      );
      expect(results).toEqual([40100, 40100, 40100, 42900]);
      expect(await outcome(login(auth, { username: "v", password: wrongPassword, ip: "2001:db8:1:3::1" }))).toBe(40100);
    });
  });
});
