import { hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import { describe, expect, it, vi } from "vitest";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { changePassword, setPassword } from "./change-password.js";
import { createUser } from "./create-user.js";
import { saveDirectoryPolicy } from "./directory-policy.js";
import { addUser, authError, enrolTotp, goodPassword, makeAuth, nextCode, outcome, signIn } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { refresh } from "./refresh.js";
import { expectOnlyCurrentSessionLives, twoSessions } from "./sessions.test-support.js";
import { useRecoveryCode } from "./use-recovery-code.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

vi.mock("@node-rs/argon2", async (importOriginal) => {
  const argon2 = await importOriginal<typeof import("@node-rs/argon2")>();
  return { ...argon2, hash: vi.fn(argon2.hash), verify: vi.fn(argon2.verify) };
});

/** How many argon2id computations (hash or verify) ran so far. */
const argon2Runs = () => vi.mocked(argon2Hash).mock.calls.length + vi.mocked(argon2Verify).mock.calls.length;

const newPassword = "a brand new passphrase";

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

describe("changePassword", () => {
  it("PW-6: changing the password needs the current one", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "changer");
    const error = await authError(changePassword(harness.auth, { userId, currentPassword: "not my password", newPassword }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    await signIn(harness, "changer");
    expect(await outcome(login(harness.auth, { username: "changer", password: newPassword }))).toBe(40100);
    expect(await outcome(changePassword(harness.auth, { userId, newPassword } as never))).toBe(ErrorCode.MissingParameter);
  });

  it("PW-6, SE-2: with no session given, the change ends every session of the user; the token version stays", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "rotating");
    const before = await signIn(harness, "rotating");
    const version = (await harness.storage.users.findById(userId))?.tokenVersion as number;
    expect(await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword })).toEqual({
      changed: true,
      sessionsEnded: 1,
    });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(version);
    expect(await outcome(verifyAccessToken(harness.auth, { token: before.accessToken }))).toBe(40101);
    expect(await outcome(refresh(harness.auth, { refreshToken: before.refreshToken }))).toBe(40101);
    expect(await outcome(login(harness.auth, { username: "rotating", password: goodPassword }))).toBe(40100);
    const after = await signIn(harness, "rotating", newPassword);
    await verifyAccessToken(harness.auth, { token: after.accessToken });
    expect(harness.events.map((event) => event.type)).toEqual(expect.arrayContaining(["sessions.ended", "password.changed"]));
    expect(harness.events.map((event) => event.type)).not.toContain("token_version.raised");
  });

  it("SE-2, SE-4: a change from a session ends the user's other sessions; this one's access and refresh tokens go on working", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "se2-changer");
    const before = await twoSessions(harness, userId, "se2-changer");
    const sessionId = before.current.sessionId;
    const answer = await changePassword(harness.auth, { userId, sessionId, currentPassword: goodPassword, newPassword });
    expect(answer).toEqual({ changed: true, sessionsEnded: 1 });
    await expectOnlyCurrentSessionLives(harness, before, "password_changed");
    expect(harness.events.filter((event) => event.type === "password.changed")).toEqual([
      { type: "password.changed", userId, sessionsEnded: 1, at: harness.clock.now },
    ]);
    expect(await outcome(login(harness.auth, { username: "se2-changer", password: goodPassword }))).toBe(40100);
    await signIn(harness, "se2-changer", newPassword);
  });

  it("SE-4: an account without a local password (made by a provider sign-in) is 40900, and nothing is checked or stored", async () => {
    const harness = makeAuth();
    const { id: userId } = await createUser(harness.auth, { username: "provider-only" });
    const before = argon2Runs();
    expect(await answerOf(changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword }))).toEqual({
      code: ErrorCode.Conflict,
      message: "The account has no password to change",
    });
    expect(argon2Runs()).toBe(before);
    expect((await harness.storage.users.findById(userId))?.passwordHash).toBeNull();
  });

  it("SE-4, RL-5: a wrong current password from a session spends that session's budget, never the account's", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "budgeted");
    const { current } = await twoSessions(harness, userId, "budgeted");
    const sessionId = current.sessionId;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const wrong = { userId, sessionId, currentPassword: `guess number ${attempt}`, newPassword };
      expect(await outcome(changePassword(harness.auth, wrong))).toBe(40100);
    }
    expect(await outcome(changePassword(harness.auth, { userId, sessionId, currentPassword: goodPassword, newPassword }))).toBe(
      42900,
    );
    await signIn(harness, "budgeted");
    expect(await outcome(changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword }))).toBe("fulfilled");
  });

  it("TMP-4: a password change made from a session voids outstanding temporary tokens, though the token version stays", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "pending-own-change");
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
    const results = await Promise.all(
      [1, 2, 3].map(() => login(harness.auth, { username: "pending-own-change", password: goodPassword })),
    );
    const [byCode, byRecovery, forSession] = results.map((result) => (result.status === "totp_required" ? result.tempToken : ""));
    const session = await verifyTotp(harness.auth, { tempToken: forSession as string, code: nextCode(harness, secret) });
    const { sessionId } = await verifyAccessToken(harness.auth, { token: session.accessToken });
    await changePassword(harness.auth, { userId, sessionId, currentPassword: goodPassword, newPassword });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(0);
    const code = nextCode(harness, secret);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: byCode as string, code }))).toBe(40100);
    const recoveryCode = recoveryCodes[0] as string;
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: byRecovery as string, recoveryCode }))).toBe(40100);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
    const fresh = await login(harness.auth, { username: "pending-own-change", password: newPassword });
    if (fresh.status !== "totp_required") throw new Error(fresh.status);
    await verifyTotp(harness.auth, { tempToken: fresh.tempToken, code });
  });

  it("PW-3: the new password passes the policy, with the reason when it does not", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "policy");
    const common = await authError(
      changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "password1" }),
    );
    expect(common.code).toBe(ErrorCode.ValidationFailed);
    expect(common.message).toMatch(/too common/);
    const short = await authError(changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "short" }));
    expect(short.message).toMatch(/at least 8 characters/);
    await signIn(harness, "policy");
  });

  it("PW-4: a current password over the byte cap is refused without hashing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "oversized");
    const before = argon2Runs();
    const error = await authError(changePassword(harness.auth, { userId, currentPassword: "x".repeat(2048), newPassword }));
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    expect(argon2Runs()).toBe(before);
  });

  it("PW-4: the cap counts the NFKC form when proving the current password as when setting it", async () => {
    const harness = makeAuth();
    const typed = "e\u0301".repeat(400);
    const userId = await addUser(harness.auth, "accented", typed);
    await changePassword(harness.auth, { userId, currentPassword: typed, newPassword });
    await signIn(harness, "accented", newPassword);
  });

  it("PW-2: a new password that is not well-formed Unicode is refused with the reason, and the old one still works", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "surrogate");
    for (const change of [
      () => changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "lone \ud800 surrogate" }),
      () => setPassword(harness.auth, { userId, newPassword: "lone \udbff surrogate" }),
    ]) {
      const error = await authError(change());
      expect(error.code).toBe(ErrorCode.ValidationFailed);
      expect(error.message).toMatch(/not valid Unicode text/);
    }
    await signIn(harness, "surrogate");
  });

  it("PW-3: the new password goes through password.isBreached; a hook that fails refuses with 50300 (fail closed)", async () => {
    const outage = new Error("range API down");
    let failing = false;
    const isBreached = vi.fn(async (password: string) => {
      if (failing) throw outage;
      return password === "a leaked but long passphrase";
    });
    const harness = makeAuth({ password: { isBreached } });
    const userId = await addUser(harness.auth, "breached");
    const breached = await authError(
      changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "a leaked but long passphrase" }),
    );
    expect(breached.code).toBe(ErrorCode.ValidationFailed);
    expect(breached.message).toMatch(/data breach/);
    failing = true;
    const unavailable = await authError(setPassword(harness.auth, { userId, newPassword }));
    expect(unavailable.code).toBe(ErrorCode.Unavailable);
    expect(unavailable.cause).toBe(outage);
    await signIn(harness, "breached");
  });

  it("RL-1: wrong current passwords count toward the account throttle", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "guessed");
    for (let attempt = 0; attempt < 5; attempt += 1) {
      expect(
        await outcome(changePassword(harness.auth, { userId, currentPassword: `guess number ${attempt}`, newPassword })),
      ).toBe(40100);
    }
    expect(await outcome(changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword }))).toBe(42900);
    expect(await outcome(login(harness.auth, { username: "guessed", password: goodPassword }))).toBe(42900);
  });

  it("TMP-4: a password change voids outstanding temporary tokens", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "pending-change");
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
    const results = await Promise.all(
      [1, 2].map(() => login(harness.auth, { username: "pending-change", password: goodPassword })),
    );
    const [byCode, byRecovery] = results.map((result) => (result.status === "totp_required" ? result.tempToken : ""));
    await setPassword(harness.auth, { userId, newPassword });
    const code = nextCode(harness, secret);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: byCode as string, code }))).toBe(40100);
    const recoveryCode = recoveryCodes[0] as string;
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: byRecovery as string, recoveryCode }))).toBe(40100);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
  });

  it("TV-1: setPassword raises the token version too, and says password.changed", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "reset");
    const before = await signIn(harness, "reset");
    await setPassword(harness.auth, { userId, newPassword });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(1);
    expect(harness.events.filter((event) => event.type === "password.changed")).toEqual([
      { type: "password.changed", userId, at: harness.clock.now },
    ]);
    expect(await outcome(verifyAccessToken(harness.auth, { token: before.accessToken }))).toBe(40101);
    expect(await outcome(setPassword(harness.auth, { userId: "nobody", newPassword }))).toBe(ErrorCode.NotFound);
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "validated");
    const flows = {
      changePassword: {
        run: (input: Record<string, unknown>) => changePassword(harness.auth, input as never),
        valid: { userId, currentPassword: goodPassword, newPassword },
      },
      setPassword: {
        run: (input: Record<string, unknown>) => setPassword(harness.auth, input as never),
        valid: { userId, newPassword },
      },
    };
    for (const [name, { run, valid }] of Object.entries(flows)) {
      for (const field of Object.keys(valid)) {
        for (const missing of [undefined, null, ""]) {
          expect(await answerOf(run({ ...valid, [field]: missing })), `${name} ${field}: ${missing}`).toEqual({
            code: ErrorCode.MissingParameter,
            message: `${field} is required`,
          });
        }
        expect(await answerOf(run({ ...valid, [field]: { $ne: "" } })), `${name} ${field}`).toEqual({
          code: ErrorCode.MalformedParameter,
          message: `${field} must be a string`,
        });
      }
    }
    await signIn(harness, "validated");
  });

  it("PW-6: an unknown user is 40400 No such user, for changePassword and setPassword alike", async () => {
    const harness = makeAuth();
    expect(
      await answerOf(changePassword(harness.auth, { userId: "nobody", currentPassword: goodPassword, newPassword })),
    ).toEqual({
      code: ErrorCode.NotFound,
      message: "No such user",
    });
    expect(await answerOf(setPassword(harness.auth, { userId: "nobody", newPassword }))).toEqual({
      code: ErrorCode.NotFound,
      message: "No such user",
    });
  });

  it("a directory account's password is the directory's: changing or setting it here is 40900 and stores nothing", async () => {
    const directory = fakeDirectory([person("bob", [groupsDn.engineers])]);
    const harness = makeAuth({ directory });
    await saveDirectoryPolicy(harness.auth, workingPolicy);
    const result = await login(harness.auth, { username: "bob", password: "bob directory password", provider: "directory" });
    const userId = result.status === "authenticated" ? result.tokens.user.id : "";
    const refusal = { code: ErrorCode.Conflict, message: "The password of a directory account is kept by the directory" };
    const answer = async (promise: Promise<unknown>) => {
      const { code, message } = await authError(promise);
      return { code, message };
    };
    expect(await answer(setPassword(harness.auth, { userId, newPassword: goodPassword }))).toEqual(refusal);
    expect(
      await answer(
        changePassword(harness.auth, { userId, currentPassword: "bob directory password", newPassword: goodPassword }),
      ),
    ).toEqual(refusal);
    expect((await harness.storage.users.findById(userId))?.passwordHash).toBeNull();
  });
});
