import { randomBytes as nodeRandomBytes } from "node:crypto";
import { hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import {
  type Harness,
  addUser,
  authError,
  codeAt,
  decodeBase32,
  encryptionKey,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  signIn,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { logout } from "./logout.js";
import { setUserDisabled } from "./manage-users.js";
import { expectOnlyCurrentSessionLives, twoSessions } from "./sessions.test-support.js";
import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "./totp-enrolment.js";
import { useRecoveryCode } from "./use-recovery-code.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

vi.mock("@node-rs/argon2", async (importOriginal) => {
  const argon2 = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...argon2, hash: vi.fn(argon2.hash), verify: vi.fn(argon2.verify) };
});

/** How many argon2id computations (hash or verify) ran so far. */
const argon2Runs = () => vi.mocked(argon2Hash).mock.calls.length + vi.mocked(argon2Verify).mock.calls.length;

const codeFormat = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/;

async function loginStatus(harness: Harness, username: string) {
  return (await login(harness.auth, { username, password: goodPassword })).status;
}

async function tempTokenOf(harness: Harness, username: string): Promise<string> {
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "totp_required") throw new Error("expected a second-factor request");
  return result.tempToken;
}

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

const tokenVersionOf = async (harness: Harness, userId: string) => (await harness.storage.users.findById(userId))?.tokenVersion;

describe("TOTP enrolment", () => {
  it("TOTP-2: the secret is 20 bytes from the configured CSPRNG, new at every setup", async () => {
    const drawn: Uint8Array[] = [];
    const harness = makeAuth({
      randomBytes: (size) => {
        const bytes = new Uint8Array(nodeRandomBytes(size));
        if (size === 20) drawn.push(bytes);
        return bytes;
      },
    });
    const userId = await addUser(harness.auth, "secret-size");
    const first = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const second = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    expect(decodeBase32(first.secret)).toHaveLength(20);
    expect(first.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(drawn.map((bytes) => Buffer.from(bytes).toString("hex"))).toEqual([
      Buffer.from(decodeBase32(first.secret)).toString("hex"),
      Buffer.from(decodeBase32(second.secret)).toString("hex"),
    ]);
    expect(second.secret).not.toBe(first.secret);
    const uri = new URL(second.otpauthUrl);
    expect(uri.searchParams.get("secret")).toBe(second.secret);
    expect(uri.searchParams.get("issuer")).toBe("api.example.com");
    expect(decodeURIComponent(uri.pathname)).toContain("secret-size");
  });

  describe("TOTP-5: enrolment", () => {
    const harness = makeAuth({ throttle: generousThrottle });

    it("TOTP-5: setup needs an existing, enabled user", async () => {
      expect(await outcome(beginTotpSetup(harness.auth, { userId: "no-such-user" }))).toBe(ErrorCode.InvalidToken);
      const userId = await addUser(harness.auth, "disabled-setup");
      await setUserDisabled(harness.auth, { userId, disabled: true });
      expect(await outcome(beginTotpSetup(harness.auth, { userId, password: goodPassword }))).toBe(ErrorCode.InvalidToken);
      expect(await harness.storage.totp.get(userId)).toBeNull();
    });

    it("TOTP-5: the factor stays pending until a valid code; meanwhile login needs no second factor", async () => {
      const userId = await addUser(harness.auth, "pending");
      const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
      const secret = decodeBase32(setup.secret);
      expect(await harness.storage.totp.get(userId)).toMatchObject({ enabled: false, lastUsedStep: -1 });
      expect(await loginStatus(harness, "pending")).toBe("authenticated");
      const wrong = await authError(
        enableTotp(harness.auth, { userId, password: goodPassword, code: wrongCodeAt(secret, harness.clock.now) }),
      );
      expect(wrong.code).toBe(ErrorCode.SecondFactorFailed);
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
      expect(await loginStatus(harness, "pending")).toBe("authenticated");

      const { recoveryCodes } = await enableTotp(harness.auth, {
        userId,
        password: goodPassword,
        code: codeAt(secret, harness.clock.now),
      });
      expect(recoveryCodes).toHaveLength(10);
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
      expect(await loginStatus(harness, "pending")).toBe("totp_required");
    });

    it("TOTP-5: enabling needs a pending factor, and a second setup is refused once enabled", async () => {
      const userId = await addUser(harness.auth, "enabled-once");
      expect(await outcome(enableTotp(harness.auth, { userId, password: goodPassword, code: "123456" }))).toBe(
        ErrorCode.Conflict,
      );
      await enrolTotp(harness.auth, userId);
      expect(await outcome(beginTotpSetup(harness.auth, { userId, password: goodPassword }))).toBe(ErrorCode.Conflict);
      expect(await outcome(enableTotp(harness.auth, { userId, password: goodPassword, code: "123456" }))).toBe(
        ErrorCode.Conflict,
      );
    });

    it("TOTP-5, SE-2: enabling ends the existing sessions without raising the token version", async () => {
      const userId = await addUser(harness.auth, "enable-version");
      const before = await login(harness.auth, { username: "enable-version", password: goodPassword });
      if (before.status !== "authenticated") throw new Error("expected a session");
      const version = await tokenVersionOf(harness, userId);
      await enrolTotp(harness.auth, userId);
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(await outcome(verifyAccessToken(harness.auth, { token: before.tokens.accessToken }))).toBe(40101);
    });

    it("TOTP-5, SE-2, STUP-3: disabling with the password and a code removes factor and codes, the token version unmoved", async () => {
      for (const username of ["disable-once", "disable-twice"]) {
        const userId = await addUser(harness.auth, username);
        const { secret } = await enrolTotp(harness.auth, userId);
        const version = (await tokenVersionOf(harness, userId)) as number;
        await disableTotp(harness.auth, { userId, code: nextCode(harness, secret), password: goodPassword });
        expect(await tokenVersionOf(harness, userId)).toBe(version);
        expect(await harness.storage.totp.get(userId)).toBeNull();
        expect(await harness.storage.recoveryCodes.count(userId)).toBe(0);
        expect(await loginStatus(harness, username)).toBe("authenticated");
      }
    });

    it("TOTP-5: disabling is refused without a valid proof", async () => {
      const userId = await addUser(harness.auth, "keep-totp");
      const { secret } = await enrolTotp(harness.auth, userId);
      const version = await tokenVersionOf(harness, userId);
      expect(await outcome(disableTotp(harness.auth, { userId }))).toBe(ErrorCode.MissingParameter);
      const code = codeAt(secret, harness.clock.now);
      expect(await outcome(disableTotp(harness.auth, { userId, password: "wrong password!", code }))).toBe(
        ErrorCode.AuthenticationFailed,
      );
      const wrongCode = wrongCodeAt(secret, harness.clock.now);
      expect(await outcome(disableTotp(harness.auth, { userId, password: goodPassword, code: wrongCode }))).toBe(
        ErrorCode.SecondFactorFailed,
      );
      expect(await outcome(disableTotp(harness.auth, { userId, password: goodPassword, code }))).toBe(
        ErrorCode.SecondFactorFailed,
      );
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
    });
  });

  describe("SE-2: a change made from a session keeps that session and ends the others", () => {
    it("SE-2: enabling TOTP from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "se2-enable");
      const before = await twoSessions(harness, userId, "se2-enable");
      const sessionId = before.current.sessionId;
      const secret = decodeBase32((await beginTotpSetup(harness.auth, { userId, sessionId })).secret);
      await enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) });
      await expectOnlyCurrentSessionLives(harness, before, "totp_enabled");
      expect(await loginStatus(harness, "se2-enable")).toBe("totp_required");
    });

    it("SE-2: disabling TOTP from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "se2-disable");
      const { secret } = await enrolTotp(harness.auth, userId);
      const before = await twoSessions(harness, userId, "se2-disable", { totpSecret: secret });
      await disableTotp(harness.auth, { userId, sessionId: before.current.sessionId, code: nextCode(harness, secret) });
      const at = harness.clock.now;
      await expectOnlyCurrentSessionLives(harness, before, "totp_disabled");
      expect(harness.events.filter((event) => event.type === "totp.disabled")).toEqual([{ type: "totp.disabled", userId, at }]);
      expect(await loginStatus(harness, "se2-disable")).toBe("authenticated");
    });

    it("SE-2: new recovery codes from a session end the user's other sessions; this one's access and refresh tokens go on working", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "se2-codes");
      const { secret } = await enrolTotp(harness.auth, userId);
      const before = await twoSessions(harness, userId, "se2-codes", { totpSecret: secret });
      const sessionId = before.current.sessionId;
      await regenerateRecoveryCodes(harness.auth, { userId, sessionId, code: nextCode(harness, secret) });
      const at = harness.clock.now;
      await expectOnlyCurrentSessionLives(harness, before, "recovery_codes_regenerated");
      expect(harness.events.filter((event) => event.type === "recovery_codes.regenerated")).toEqual([
        { type: "recovery_codes.regenerated", userId, at },
      ]);
    });

    it("SE-2: called with no session (the service's own code), enabling ends every session of the user, without raising the token version", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "se2-direct");
      const { current, other } = await twoSessions(harness, userId, "se2-direct");
      await enrolTotp(harness.auth, userId);
      for (const session of [current, other]) {
        expect(await outcome(verifyAccessToken(harness.auth, { token: session.tokens.accessToken }))).toBe(40101);
      }
      expect(await tokenVersionOf(harness, userId)).toBe(0);
      expect(harness.events.filter((event) => event.type === "sessions.ended")).toEqual([
        expect.objectContaining({ userId, keptSessionId: null, count: 2, reason: "totp_enabled" }),
      ]);
    });
  });

  describe("TOTP-5: re-authentication before enrolment", () => {
    const minutes = (count: number) => count * 60_000;

    /** A user signed in now; returns the user id and the session of the access token. */
    async function signedIn(harness: Harness, username: string) {
      const userId = await addUser(harness.auth, username);
      const tokens = await signIn(harness, username);
      const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      return { userId, sessionId };
    }

    it("TOTP-5: a stolen access token alone cannot enrol TOTP once the sign-in is 5 minutes old", async () => {
      const harness = makeAuth();
      const { userId, sessionId } = await signedIn(harness, "stolen-token");
      harness.clock.advance(minutes(5));
      const refused = await authError(beginTotpSetup(harness.auth, { userId, sessionId }));
      expect(refused.code).toBe(ErrorCode.MissingParameter);
      expect(refused.message).toMatch(/password/);
      expect(await harness.storage.totp.get(userId)).toBeNull();
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId, password: "not the password" }))).toBe(
        ErrorCode.AuthenticationFailed,
      );
      expect(await harness.storage.totp.get(userId)).toBeNull();

      const setup = await beginTotpSetup(harness.auth, { userId, sessionId, password: goodPassword });
      const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
      expect(await outcome(enableTotp(harness.auth, { userId, sessionId, code }))).toBe(ErrorCode.MissingParameter);
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
      expect(await harness.storage.recoveryCodes.count(userId)).toBe(0);
      await enableTotp(harness.auth, { userId, sessionId, password: goodPassword, code });
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
    });

    it("TOTP-5: within 5 minutes of signing in, the session is proof enough for setup and enable", async () => {
      const harness = makeAuth();
      const { userId, sessionId } = await signedIn(harness, "fresh-sign-in");
      harness.clock.advance(minutes(5) - 1000);
      const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
      await enableTotp(harness.auth, { userId, sessionId, code: codeAt(decodeBase32(setup.secret), harness.clock.now) });
      expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
    });

    it("TOTP-5: the session must be the user's own, live one", async () => {
      const harness = makeAuth();
      const { userId } = await signedIn(harness, "owner");
      const other = await signedIn(harness, "someone-else");
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId: other.sessionId }))).toBe(
        ErrorCode.MissingParameter,
      );
      const mine = await signIn(harness, "owner");
      const { sessionId } = await verifyAccessToken(harness.auth, { token: mine.accessToken });
      await logout(harness.auth, { refreshToken: mine.refreshToken });
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId }))).toBe(ErrorCode.MissingParameter);
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId: "no-such-session" }))).toBe(
        ErrorCode.MissingParameter,
      );
      expect(await harness.storage.totp.get(userId)).toBeNull();
    });

    it("TOTP-5: a session that has expired is no proof, even within the window", async () => {
      const harness = makeAuth({ ttl: { access: 60, refresh: 120 } });
      const { userId, sessionId } = await signedIn(harness, "expired-session");
      harness.clock.advance(minutes(2));
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId }))).toBe(ErrorCode.MissingParameter);
      expect(await harness.storage.totp.get(userId)).toBeNull();
    });

    it("TOTP-5: reauthentication.recentSignIn sets the window; false asks for the password every time", async () => {
      const strict = makeAuth({ reauthentication: { recentSignIn: false } });
      const fresh = await signedIn(strict, "strict");
      expect(await outcome(beginTotpSetup(strict.auth, { userId: fresh.userId, sessionId: fresh.sessionId }))).toBe(
        ErrorCode.MissingParameter,
      );
      await beginTotpSetup(strict.auth, { userId: fresh.userId, sessionId: fresh.sessionId, password: goodPassword });

      const lenient = makeAuth({ reauthentication: { recentSignIn: "15m" } });
      const later = await signedIn(lenient, "lenient");
      lenient.clock.advance(minutes(14));
      await beginTotpSetup(lenient.auth, { userId: later.userId, sessionId: later.sessionId });
      lenient.clock.advance(minutes(1));
      expect(await outcome(beginTotpSetup(lenient.auth, { userId: later.userId, sessionId: later.sessionId }))).toBe(
        ErrorCode.MissingParameter,
      );
    });

    it("RL-1: wrong re-authentication passwords count against the account throttle", async () => {
      const harness = makeAuth();
      const { userId, sessionId } = await signedIn(harness, "guessed");
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId, password: `guess ${attempt}` }))).toBe(40100);
      }
      expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId, password: goodPassword }))).toBe(42900);
    });
  });

  it("PW-4: disabling TOTP with a password over the byte cap is refused without hashing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "oversized-disable");
    const { secret } = await enrolTotp(harness.auth, userId);
    const before = argon2Runs();
    const code = nextCode(harness, secret);
    expect(await outcome(disableTotp(harness.auth, { userId, password: "p".repeat(4096), code }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect(argon2Runs()).toBe(before);
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
  });

  describe("TOTP-6: secrets at rest", () => {
    it("TOTP-6: the stored secret is sealed, not the plaintext, and names its key", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "sealed");
      const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
      const record = await harness.storage.totp.get(userId);
      expect(record?.secret.keyId).toBe("k1");
      const raw = Buffer.from(record?.secret.sealed as string, "base64url");
      expect(raw.includes(Buffer.from(decodeBase32(setup.secret)))).toBe(false);
      expect(JSON.stringify(record)).not.toContain(setup.secret);
      expect(raw.length).toBe(12 + 20 + 16);
    });

    it("TOTP-6: a sealed secret moved to another user cannot be used", async () => {
      const harness = makeAuth();
      const victimId = await addUser(harness.auth, "victim");
      const attackerId = await addUser(harness.auth, "attacker");
      const setup = await beginTotpSetup(harness.auth, { userId: victimId, password: goodPassword });
      const victimRecord = await harness.storage.totp.get(victimId);
      if (!victimRecord) throw new Error("no record");
      await harness.storage.totp.putPending({ ...victimRecord, userId: attackerId });
      const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
      expect(await outcome(enableTotp(harness.auth, { userId: attackerId, password: goodPassword, code }))).toBe(
        ErrorCode.Internal,
      );
      await enableTotp(harness.auth, { userId: victimId, password: goodPassword, code });
    });

    it("TOTP-6: after a key rotation, secrets sealed with the old key still open and new ones use the current key", async () => {
      const before = makeAuth();
      const userId = await addUser(before.auth, "rotation");
      const { secret } = await enrolTotp(before.auth, userId);
      const newKey = nodeRandomBytes(32).toString("hex");
      const after = makeAuth({
        storage: before.storage,
        clock: before.clock,
        secrets: {
          signing: "another-signing-secret-of-at-least-32-bytes",
          encryption: { current: "k2", keys: { k1: encryptionKey, k2: newKey } },
        },
      });
      await verifyTotp(after.auth, { tempToken: await tempTokenOf(after, "rotation"), code: nextCode(after, secret) });

      const newcomerId = await addUser(after.auth, "after-rotation");
      const { secret: newcomerSecret } = await enrolTotp(after.auth, newcomerId);
      expect((await after.storage.totp.get(newcomerId))?.secret.keyId).toBe("k2");
      const code = nextCode(after, newcomerSecret);
      expect(await outcome(verifyTotp(before.auth, { tempToken: await tempTokenOf(before, "after-rotation"), code }))).toBe(
        ErrorCode.Internal,
      );
    });
  });

  describe("RC-1 and RC-2: recovery codes", () => {
    const harness = makeAuth({ throttle: generousThrottle });

    it("RC-1, STUP-7: enabling shows ten distinct codes of 120 bits", async () => {
      const userId = await addUser(harness.auth, "codes");
      const { recoveryCodes } = await enrolTotp(harness.auth, userId);
      expect(recoveryCodes).toHaveLength(10);
      expect(new Set(recoveryCodes).size).toBe(10);
      for (const code of recoveryCodes) expect(code).toMatch(codeFormat);
      expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
    });

    it("RC-2: storage receives only hashes of the codes", async () => {
      const replace = vi.spyOn(harness.storage.recoveryCodes, "replace");
      const userId = await addUser(harness.auth, "hashed-codes");
      const { secret, recoveryCodes: first } = await enrolTotp(harness.auth, userId);
      const proof = { userId, code: nextCode(harness, secret), password: goodPassword };
      const { recoveryCodes: second } = await regenerateRecoveryCodes(harness.auth, proof);
      expect(replace).toHaveBeenCalledTimes(2);
      const stored = JSON.stringify(replace.mock.calls);
      for (const code of [...first, ...second]) {
        const compact = normalizeRecoveryCode(code) as string;
        expect(stored).not.toContain(code);
        expect(stored).not.toContain(compact);
        expect(stored).not.toContain(compact.toLowerCase());
      }
      expect(replace.mock.calls[0]?.[1]).toEqual(
        first.map((code) => hashRecoveryCode(userId, normalizeRecoveryCode(code) as string)),
      );
      expect(replace.mock.calls[1]?.[1]).toEqual(
        second.map((code) => hashRecoveryCode(userId, normalizeRecoveryCode(code) as string)),
      );
      replace.mockRestore();
    });

    it("RC-1: regenerating voids the old set; the new set works", async () => {
      const userId = await addUser(harness.auth, "regenerated");
      const { secret, recoveryCodes: old } = await enrolTotp(harness.auth, userId);
      const proof = { userId, code: nextCode(harness, secret), password: goodPassword };
      const { recoveryCodes: fresh } = await regenerateRecoveryCodes(harness.auth, proof);
      expect(fresh.filter((code) => old.includes(code))).toEqual([]);
      for (const code of old.slice(0, 3)) {
        expect(
          await outcome(
            useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "regenerated"), recoveryCode: code }),
          ),
        ).toBe(40103);
      }
      await useRecoveryCode(harness.auth, {
        tempToken: await tempTokenOf(harness, "regenerated"),
        recoveryCode: fresh[0] as string,
      });
    });

    it("RC-1: regenerating needs a current TOTP code; a wrong one keeps the old set", async () => {
      const userId = await addUser(harness.auth, "not-regenerated");
      const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
      const error = await authError(
        regenerateRecoveryCodes(harness.auth, { userId, password: goodPassword, code: wrongCodeAt(secret, harness.clock.now) }),
      );
      expect(error.code).toBe(ErrorCode.SecondFactorFailed);
      await useRecoveryCode(harness.auth, {
        tempToken: await tempTokenOf(harness, "not-regenerated"),
        recoveryCode: recoveryCodes[0] as string,
      });
      const plain = await addUser(harness.auth, "no-totp-codes");
      expect(await outcome(regenerateRecoveryCodes(harness.auth, { userId: plain, code: "123456" }))).toBe(ErrorCode.Conflict);
    });
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "validated");
    const flows: Record<
      string,
      { run: (input: Record<string, unknown>) => Promise<unknown>; required: string[]; optional: string[] }
    > = {
      beginTotpSetup: {
        run: (input) => beginTotpSetup(harness.auth, input as never),
        required: ["userId"],
        optional: ["password"],
      },
      enableTotp: {
        run: (input) => enableTotp(harness.auth, input as never),
        required: ["userId", "code"],
        optional: ["password"],
      },
      disableTotp: {
        run: (input) => disableTotp(harness.auth, input as never),
        required: ["userId"],
        optional: ["code", "password"],
      },
      regenerateRecoveryCodes: {
        run: (input) => regenerateRecoveryCodes(harness.auth, input as never),
        required: ["userId"],
        optional: ["code", "password"],
      },
    };
    const valid: Record<string, unknown> = { userId, code: "123456", password: goodPassword };
    for (const [name, { run, required, optional }] of Object.entries(flows)) {
      const base = Object.fromEntries([...required, ...optional].map((field) => [field, valid[field]]));
      for (const field of required) {
        for (const missing of [undefined, null, ""]) {
          expect(await answerOf(run({ ...base, [field]: missing })), `${name} ${field}: ${missing}`).toEqual({
            code: ErrorCode.MissingParameter,
            message: `${field} is required`,
          });
        }
      }
      for (const field of [...required, ...optional]) {
        expect(await answerOf(run({ ...base, [field]: { $ne: "" } })), `${name} ${field}`).toEqual({
          code: ErrorCode.MalformedParameter,
          message: `${field} must be a string`,
        });
      }
    }
    expect(await harness.storage.totp.get(userId)).toBeNull();
  });

  describe("TOTP-5: refusals, and the order of the checks", () => {
    it("TOTP-5: enabling without a pending factor is 40900 Start TOTP setup first", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "nothing-pending");
      expect(await answerOf(enableTotp(harness.auth, { userId, password: goodPassword, code: "123456" }))).toEqual({
        code: ErrorCode.Conflict,
        message: "Start TOTP setup first",
      });
      await enrolTotp(harness.auth, userId);
      expect(await answerOf(enableTotp(harness.auth, { userId, password: goodPassword, code: "123456" }))).toEqual({
        code: ErrorCode.Conflict,
        message: "Start TOTP setup first",
      });
    });

    it("TOTP-5: a setup once TOTP is on is 40900 TOTP is already enabled, before any password is checked", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "already-on");
      await enrolTotp(harness.auth, userId);
      const stored = await harness.storage.totp.get(userId);
      const before = argon2Runs();
      for (const password of [goodPassword, "not the password"]) {
        expect(await answerOf(beginTotpSetup(harness.auth, { userId, password }))).toEqual({
          code: ErrorCode.Conflict,
          message: "TOTP is already enabled",
        });
      }
      expect(argon2Runs()).toBe(before);
      expect(await harness.storage.totp.get(userId)).toEqual(stored);
    });

    it("TOTP-5: setup hands storage a pending factor: not enabled, no step used", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "pending-record");
      const putPending = vi.spyOn(harness.storage.totp, "putPending");
      await beginTotpSetup(harness.auth, { userId, password: goodPassword });
      expect(putPending).toHaveBeenCalledTimes(1);
      expect(putPending.mock.calls[0]?.[0]).toMatchObject({
        userId,
        enabled: false,
        lastUsedStep: -1,
        createdAt: harness.clock.now,
      });
      putPending.mockRestore();
    });

    it("TOTP-5: a setup that loses the race to an enable is 40900 TOTP is already enabled; the enabled factor stays", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "racing-setup");
      const tokens = await signIn(harness, "racing-setup");
      const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
      const secret = decodeBase32(setup.secret);
      // The second setup finds no enabled factor, then spends an argon2id verification on the
      // password; the enable, proven by the fresh session, completes meanwhile.
      const [second, enabled] = await Promise.all([
        answerOf(beginTotpSetup(harness.auth, { userId, password: goodPassword })),
        enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) }),
      ]);
      expect(second).toEqual({ code: ErrorCode.Conflict, message: "TOTP is already enabled" });
      expect(enabled.recoveryCodes).toHaveLength(10);
      expect(await harness.storage.totp.get(userId)).toMatchObject({ enabled: true });
      await verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "racing-setup"), code: nextCode(harness, secret) });
    });

    it("TOTP-5: of two concurrent enables with two valid codes, one wins; the other is 40900 TOTP is already enabled", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "racing-enable");
      const tokens = await signIn(harness, "racing-enable");
      const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      const secret = decodeBase32((await beginTotpSetup(harness.auth, { userId, sessionId })).secret);
      const version = (await tokenVersionOf(harness, userId)) as number;
      const [won, lost] = await Promise.allSettled([
        enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) }),
        enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now + 30_000) }),
      ]);
      if (won?.status !== "fulfilled" || lost?.status !== "rejected") throw new Error("expected one winner, then one loser");
      expect({ code: lost.reason.code, message: lost.reason.message }).toEqual({
        code: ErrorCode.Conflict,
        message: "TOTP is already enabled",
      });
      expect(await tokenVersionOf(harness, userId)).toBe(version);
      expect(harness.events.filter((event) => event.type === "totp.enabled")).toHaveLength(1);
      await useRecoveryCode(harness.auth, {
        tempToken: await tempTokenOf(harness, "racing-enable"),
        recoveryCode: won.value.recoveryCodes[0] as string,
      });
    });

    it("TOTP-5, STUP-3: disabling without the password and a code (and no recent sign-in) is 40001 naming both, before anything is checked", async () => {
      const harness = makeAuth();
      const enrolledId = await addUser(harness.auth, "no-proof");
      await enrolTotp(harness.auth, enrolledId);
      const before = argon2Runs();
      for (const proof of [{}, { code: "", password: "" }]) {
        expect(await answerOf(disableTotp(harness.auth, { userId: enrolledId, ...proof }))).toEqual({
          code: ErrorCode.MissingParameter,
          message: "Confirm it is you: send the current password and a current TOTP code, or re-authenticate first",
        });
      }
      expect(await answerOf(disableTotp(harness.auth, { userId: enrolledId, password: "not the password" }))).toEqual({
        code: ErrorCode.MissingParameter,
        message: "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
      });
      expect(argon2Runs()).toBe(before);
      expect((await harness.storage.totp.get(enrolledId))?.enabled).toBe(true);
      const plainId = await addUser(harness.auth, "no-proof-no-totp");
      expect(await answerOf(disableTotp(harness.auth, { userId: plainId }))).toEqual({
        code: ErrorCode.Conflict,
        message: "TOTP is not enabled",
      });
    });

    it("TOTP-5: disabling when TOTP is off is 40900 TOTP is not enabled, before the password is checked", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "never-enrolled");
      await beginTotpSetup(harness.auth, { userId, password: goodPassword });
      const before = argon2Runs();
      for (const proof of [{ password: goodPassword }, { password: "not the password" }, { code: "123456" }]) {
        expect(await answerOf(disableTotp(harness.auth, { userId, ...proof }))).toEqual({
          code: ErrorCode.Conflict,
          message: "TOTP is not enabled",
        });
      }
      expect(argon2Runs()).toBe(before);
      expect(await tokenVersionOf(harness, userId)).toBe(0);
      expect(await harness.storage.totp.get(userId)).toMatchObject({ enabled: false });
    });
  });
});
