import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { pendingRecoveryCodes } from "../totp/pending-recovery-codes.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { openTotpSecret } from "../totp/totp-secret.js";
import { changePassword } from "./change-password.js";
import {
  type AuthOverrides,
  type Harness,
  addUser,
  authError,
  codeAt,
  decodeBase32,
  generousThrottle,
  goodPassword,
  makeAuth,
  outcome,
  signIn,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { makePasskeyAuth } from "./passkeys.test-support.js";
import { endOtherSessions } from "./sessions.js";
import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "./totp-enrolment.js";
import { useRecoveryCode } from "./use-recovery-code.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { webauthnRegisterBegin } from "./webauthn-register.js";

/**
 * The two options a client built for the original service needs on its TOTP page
 * (`docs/compatibility.md`): the recovery codes in the `2fa/setup` answer (RC-4) and enrolment
 * without re-authentication (TOTP-7). The defaults' behaviour is `totp-enrolment.test.ts`'s.
 */

const minutes = (count: number) => count * 60_000;
const codesAtSetup: AuthOverrides = { totp: { recoveryCodesAtSetup: true }, throttle: generousThrottle };
const hashOf = (userId: string, code: string) => hashRecoveryCode(userId, normalizeRecoveryCode(code) as string);

/** A temporary token of a password sign-in that asks for the second factor. */
async function tempTokenOf(harness: Harness, username: string): Promise<string> {
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "totp_required") throw new Error(`expected a second-factor request, got ${result.status}`);
  return result.tempToken;
}

/** Whether a recovery code completes a sign-in of `username` (spending it when it does). */
async function recoveryCodeWorks(harness: Harness, username: string, recoveryCode: string): Promise<boolean> {
  const result = await outcome(useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, username), recoveryCode }));
  if (result !== "fulfilled" && result !== ErrorCode.SecondFactorFailed) throw new Error(`unexpected ${result}`);
  return result === "fulfilled";
}

/** A user signed in now: its id and the session of its access token. */
async function signedInUser(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const tokens = await signIn(harness, username);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  return { userId, sessionId };
}

describe("RC-4: recovery codes in the 2fa/setup answer (totp.recoveryCodesAtSetup)", () => {
  it("RC-4: without the option, setup answers only the secret and its URI, and enabling draws a new set from the CSPRNG, as before", async () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const userId = await addUser(harness.auth, "as-before");
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    expect(Object.keys(setup).sort()).toEqual(["otpauthUrl", "secret"]);
    const pending = await harness.storage.totp.get(userId);
    if (!pending) throw new Error("no pending factor");
    const secret = decodeBase32(setup.secret);
    const { recoveryCodes } = await enableTotp(harness.auth, {
      userId,
      password: goodPassword,
      code: codeAt(secret, harness.clock.now),
    });
    expect(recoveryCodes).toHaveLength(10);
    const derived = pendingRecoveryCodes(userId, openTotpSecret(harness.auth, pending.secret, userId), pending.secret);
    expect(
      recoveryCodes.filter((code) => derived.includes(code)),
      "not the set derived from the factor",
    ).toEqual([]);
    expect(harness.auth.config.totp.recoveryCodesAtSetup).toBe(false);
  });

  it("RC-4: setup answers ten codes of the RC-1 form, none stored or usable before enable; enable answers the same ten and makes them usable, each once", async () => {
    const harness = makeAuth(codesAtSetup);
    const userId = await addUser(harness.auth, "at-setup");
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const shown = setup.recoveryCodes as string[];
    expect(shown).toHaveLength(10);
    expect(new Set(shown).size).toBe(10);
    for (const code of shown) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);

    expect(await harness.storage.recoveryCodes.count(userId), "nothing stored at setup").toBe(0);
    for (const code of shown) expect(await harness.storage.recoveryCodes.has(userId, hashOf(userId, code))).toBe(false);
    expect((await login(harness.auth, { username: "at-setup", password: goodPassword })).status, "still no second factor").toBe(
      "authenticated",
    );

    const secret = decodeBase32(setup.secret);
    const enabled = await enableTotp(harness.auth, { userId, password: goodPassword, code: codeAt(secret, harness.clock.now) });
    expect(enabled.recoveryCodes).toEqual(shown);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
    expect(await recoveryCodeWorks(harness, "at-setup", shown[3] as string)).toBe(true);
    expect(await recoveryCodeWorks(harness, "at-setup", shown[3] as string), "spent").toBe(false);
    expect(await recoveryCodeWorks(harness, "at-setup", shown[9] as string)).toBe(true);
  });

  it("RC-4: a pending set is unusable before enable: a sign-in the factor does not yet ask for has no second step, and the store holds none of the codes", async () => {
    const harness = makeAuth(codesAtSetup);
    const userId = await addUser(harness.auth, "never-enabled");
    const replace = vi.spyOn(harness.storage.recoveryCodes, "replace");
    const { recoveryCodes } = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    expect(replace).not.toHaveBeenCalled();
    for (const code of recoveryCodes as string[]) {
      expect(await harness.storage.recoveryCodes.consume(userId, hashOf(userId, code))).toBe(false);
    }
    replace.mockRestore();
  });

  it("RC-4: a second setup replaces the pending set: once enabled, only the second set works, and the first never does", async () => {
    const harness = makeAuth(codesAtSetup);
    const userId = await addUser(harness.auth, "set-up-twice");
    const first = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const second = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const firstCodes = first.recoveryCodes as string[];
    const secondCodes = second.recoveryCodes as string[];
    expect(secondCodes.filter((code) => firstCodes.includes(code))).toEqual([]);

    expect(
      await outcome(
        enableTotp(harness.auth, { userId, password: goodPassword, code: codeAt(decodeBase32(first.secret), harness.clock.now) }),
      ),
      "the first secret is no longer pending",
    ).toBe(ErrorCode.SecondFactorFailed);
    const enabled = await enableTotp(harness.auth, {
      userId,
      password: goodPassword,
      code: codeAt(decodeBase32(second.secret), harness.clock.now),
    });
    expect(enabled.recoveryCodes).toEqual(secondCodes);
    for (const code of firstCodes.slice(0, 3)) expect(await recoveryCodeWorks(harness, "set-up-twice", code)).toBe(false);
    expect(await recoveryCodeWorks(harness, "set-up-twice", secondCodes[0] as string)).toBe(true);
  });

  it("RC-4: a wrong code at enable stores no code and leaves the set pending", async () => {
    const harness = makeAuth(codesAtSetup);
    const userId = await addUser(harness.auth, "wrong-code");
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const secret = decodeBase32(setup.secret);
    const wrong = enableTotp(harness.auth, { userId, password: goodPassword, code: wrongCodeAt(secret, harness.clock.now) });
    expect(await outcome(wrong)).toBe(ErrorCode.SecondFactorFailed);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(0);
    const enabled = await enableTotp(harness.auth, { userId, password: goodPassword, code: codeAt(secret, harness.clock.now) });
    expect(enabled.recoveryCodes).toEqual(setup.recoveryCodes);
  });

  it("RC-2, RC-4: storage receives only the hashes of the codes setup showed", async () => {
    const harness = makeAuth(codesAtSetup);
    const replace = vi.spyOn(harness.storage.recoveryCodes, "replace");
    const userId = await addUser(harness.auth, "hashes-only");
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    await enableTotp(harness.auth, {
      userId,
      password: goodPassword,
      code: codeAt(decodeBase32(setup.secret), harness.clock.now),
    });
    expect(replace).toHaveBeenCalledTimes(1);
    const shown = setup.recoveryCodes as string[];
    expect(replace.mock.calls[0]?.[1]).toEqual(shown.map((code) => hashOf(userId, code)));
    const stored = JSON.stringify(replace.mock.calls);
    for (const code of shown) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(normalizeRecoveryCode(code));
    }
    replace.mockRestore();
  });

  it("RC-1, RC-4: new recovery codes after enabling are a fresh set that voids the one setup showed", async () => {
    const harness = makeAuth(codesAtSetup);
    const userId = await addUser(harness.auth, "regenerated");
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const secret = decodeBase32(setup.secret);
    await enableTotp(harness.auth, { userId, password: goodPassword, code: codeAt(secret, harness.clock.now) });
    const code = codeAt(secret, harness.clock.advance(30_000));
    const { recoveryCodes } = await regenerateRecoveryCodes(harness.auth, { userId, password: goodPassword, code });
    expect(recoveryCodes.filter((fresh) => (setup.recoveryCodes as string[]).includes(fresh))).toEqual([]);
    expect(await recoveryCodeWorks(harness, "regenerated", (setup.recoveryCodes as string[])[0] as string)).toBe(false);
    expect(await recoveryCodeWorks(harness, "regenerated", recoveryCodes[0] as string)).toBe(true);
  });
});

describe("TOTP-7: TOTP enrolment without re-authentication (reauthentication.unsafeAllowTotpEnrolmentWithoutProof)", () => {
  const unsafe: AuthOverrides = { reauthentication: { unsafeAllowTotpEnrolmentWithoutProof: true } };

  it("TOTP-7, TOTP-5: without the option, a session signed in 5 minutes ago cannot set up or enable without the password, as before", async () => {
    const harness = makeAuth();
    expect(harness.auth.config.reauthentication.unsafeAllowTotpEnrolmentWithoutProof).toBe(false);
    const { userId, sessionId } = await signedInUser(harness, "gated");
    harness.clock.advance(minutes(5));
    expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId }))).toBe(ErrorCode.MissingParameter);
    const setup = await beginTotpSetup(harness.auth, { userId, sessionId, password: goodPassword });
    const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
    expect(await outcome(enableTotp(harness.auth, { userId, sessionId, code }))).toBe(ErrorCode.MissingParameter);
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
  });

  it("TOTP-7: with the option, setup and enable need no password however old the sign-in, and without a session too", async () => {
    const harness = makeAuth(unsafe);
    const { userId, sessionId } = await signedInUser(harness, "old-sign-in");
    harness.clock.advance(minutes(60));
    const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
    const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
    const { recoveryCodes } = await enableTotp(harness.auth, { userId, sessionId, code });
    expect(recoveryCodes).toHaveLength(10);
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);

    const other = await addUser(harness.auth, "no-session");
    const otherSetup = await beginTotpSetup(harness.auth, { userId: other });
    await enableTotp(harness.auth, { userId: other, code: codeAt(decodeBase32(otherSetup.secret), harness.clock.now) });
    expect((await harness.storage.totp.get(other))?.enabled).toBe(true);
  });

  it("TOTP-7: a password that is offered is still checked, and the new authenticator must still prove a code", async () => {
    const harness = makeAuth(unsafe);
    const { userId, sessionId } = await signedInUser(harness, "offered");
    harness.clock.advance(minutes(10));
    expect(await outcome(beginTotpSetup(harness.auth, { userId, sessionId, password: "not the password" }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect(await harness.storage.totp.get(userId)).toBeNull();
    const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
    const secret = decodeBase32(setup.secret);
    const code = codeAt(secret, harness.clock.now);
    expect(await outcome(enableTotp(harness.auth, { userId, sessionId, code, password: "not the password" }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect(await outcome(enableTotp(harness.auth, { userId, sessionId, code: wrongCodeAt(secret, harness.clock.now) }))).toBe(
      ErrorCode.SecondFactorFailed,
    );
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(false);
  });

  it("TOTP-7, STUP-3: nothing else is relaxed: with an old sign-in, turning TOTP off, new recovery codes, the password, ending sessions and a passkey still need re-authentication", async () => {
    const harness = makePasskeyAuth(unsafe);
    const { userId, sessionId } = await signedInUser(harness, "still-gated");
    harness.clock.advance(minutes(10));
    const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
    const secret = decodeBase32(setup.secret);
    await enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) });
    const code = codeAt(secret, harness.clock.advance(30_000));

    const refused = async (promise: Promise<unknown>) => (await authError(promise)).code;
    expect(await refused(disableTotp(harness.auth, { userId, sessionId, code }))).toBe(ErrorCode.MissingParameter);
    expect(await refused(regenerateRecoveryCodes(harness.auth, { userId, sessionId, code }))).toBe(ErrorCode.MissingParameter);
    expect(
      await refused(
        changePassword(harness.auth, {
          userId,
          sessionId,
          currentPassword: goodPassword,
          newPassword: "another long passphrase",
        }),
      ),
    ).toBe(ErrorCode.MissingParameter);
    expect(await refused(endOtherSessions(harness.auth, { userId, sessionId, password: goodPassword }))).toBe(
      ErrorCode.MissingParameter,
    );
    expect(await refused(webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "Laptop" }))).toBe(
      ErrorCode.MissingParameter,
    );
    expect((await harness.storage.totp.get(userId))?.enabled).toBe(true);
  });
});

describe("TOTP-8: a password change with the current password alone (reauthentication.unsafeAllowPasswordChangeWithoutSecondFactor)", () => {
  const unsafe: AuthOverrides = {
    reauthentication: { unsafeAllowPasswordChangeWithoutSecondFactor: true },
    throttle: generousThrottle,
  };
  const newPassword = "another long passphrase";

  /** A TOTP user signed in with both factors ten minutes ago: its id, session and secret. */
  async function totpUserSignedInLongAgo(harness: Harness, username: string) {
    const { userId, sessionId } = await signedInUser(harness, username);
    const setup = await beginTotpSetup(harness.auth, { userId, sessionId });
    const secret = decodeBase32(setup.secret);
    await enableTotp(harness.auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) });
    harness.clock.advance(minutes(10));
    return { userId, sessionId, secret };
  }

  it("TOTP-8, STUP-3: without the option, a TOTP user's change with the current password alone is 40001 and stores nothing", async () => {
    const harness = makeAuth({ throttle: generousThrottle });
    expect(harness.auth.config.reauthentication.unsafeAllowPasswordChangeWithoutSecondFactor).toBe(false);
    const { userId, sessionId } = await totpUserSignedInLongAgo(harness, "needs-code");
    const before = (await harness.storage.users.findById(userId))?.passwordHash;
    expect(await outcome(changePassword(harness.auth, { userId, sessionId, currentPassword: goodPassword, newPassword }))).toBe(
      ErrorCode.MissingParameter,
    );
    expect((await harness.storage.users.findById(userId))?.passwordHash).toBe(before);
  });

  it("TOTP-8: with the option, the current password alone changes a TOTP user's password however old the sign-in", async () => {
    const harness = makeAuth({
      ...unsafe,
      reauthentication: { ...unsafe.reauthentication, unsafeAllowTotpEnrolmentWithoutProof: true },
    });
    const { userId, sessionId } = await totpUserSignedInLongAgo(harness, "password-only");
    const result = await changePassword(harness.auth, { userId, sessionId, currentPassword: goodPassword, newPassword });
    expect(result.changed).toBe(true);
    expect(
      await harness.auth.passwords.verify((await harness.storage.users.findById(userId))?.passwordHash ?? null, newPassword),
    ).toBe(true);
  });

  it("TOTP-8: the current password is still checked, and a code that is sent must be right", async () => {
    const harness = makeAuth({
      ...unsafe,
      reauthentication: { ...unsafe.reauthentication, unsafeAllowTotpEnrolmentWithoutProof: true },
    });
    const { userId, sessionId, secret } = await totpUserSignedInLongAgo(harness, "still-checked");
    expect(
      await outcome(changePassword(harness.auth, { userId, sessionId, currentPassword: "not the password", newPassword })),
    ).toBe(ErrorCode.AuthenticationFailed);
    expect(
      await outcome(
        changePassword(harness.auth, {
          userId,
          sessionId,
          currentPassword: goodPassword,
          newPassword,
          totpCode: wrongCodeAt(secret, harness.clock.now),
        }),
      ),
    ).toBe(ErrorCode.SecondFactorFailed);
    expect(
      await harness.auth.passwords.verify((await harness.storage.users.findById(userId))?.passwordHash ?? null, goodPassword),
    ).toBe(true);
  });
});
