import { describe, expect, it } from "vitest";
import { sha256 } from "../crypto/random.js";
import { emailDeliveriesSettled } from "../email/deliver.js";
import { type EmailHarness, addUserWithEmail, makeEmailAuth, sentTo, tokenOf } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { ChallengeRecord, Storage } from "../storage/types.js";
import { changeEmail } from "./change-email.js";
import { changePassword } from "./change-password.js";
import {
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  slowStorage,
  tally,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { forgotPassword } from "./forgot-password.js";
import { login } from "./login.js";
import { refresh } from "./refresh.js";
import { resetPassword } from "./reset-password.js";
import { signedInSession } from "./sessions.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

const newPassword = "a brand new passphrase";

/** Asks for a reset link for `username` and returns the token of the newest one sent. */
async function requestReset(harness: EmailHarness, username: string): Promise<string> {
  await forgotPassword(harness.auth, { username });
  await emailDeliveriesSettled(harness.auth);
  const links = harness.outbox.filter((message) => message.kind === "password_reset");
  return tokenOf(links[links.length - 1]);
}

/** A user with a verified address and a reset link asked for. */
async function userWithLink(harness: EmailHarness, username = "alice") {
  const userId = await addUserWithEmail(harness.auth, username, `${username}@example.com`);
  return { userId, token: await requestReset(harness, username) };
}

const passwordHashOf = async (harness: EmailHarness, userId: string) =>
  (await harness.storage.users.findById(userId))?.passwordHash;

/** Memory storage that keeps a copy of every challenge put. */
function recordingStorage(): { storage: Storage; puts: ChallengeRecord[] } {
  const storage = memoryStorage();
  const puts: ChallengeRecord[] = [];
  const { challenges } = storage;
  const put = (challenge: ChallengeRecord) => {
    puts.push(structuredClone(challenge));
    return challenges.put(challenge);
  };
  return { storage: { ...storage, challenges: { ...challenges, put } }, puts };
}

describe("resetPassword", () => {
  it("PR-2: a token is 256 random bits (base64url of 32 bytes) and storage holds only its SHA-256", async () => {
    const { storage, puts } = recordingStorage();
    const harness = makeEmailAuth({ storage });
    const { token } = await userWithLink(harness);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, "base64url")).toHaveLength(32);
    const stored = JSON.stringify(puts);
    expect(stored).not.toContain(token);
    expect(puts.filter((challenge) => challenge.kind === "password_reset").map((challenge) => challenge.id)).toEqual([
      sha256(token),
    ]);
    const now = harness.clock.now;
    expect(await harness.storage.challenges.find(sha256(token), "password_reset", now)).not.toBeNull();
    expect(await harness.storage.challenges.find(token, "password_reset", now)).toBeNull();
    const other = await requestReset(harness, "alice");
    expect(other).not.toBe(token);
  });

  it("PR-2: a token works once", async () => {
    const harness = makeEmailAuth();
    const { userId, token } = await userWithLink(harness);
    expect(await resetPassword(harness.auth, { token, newPassword })).toEqual({ reset: true });
    const hash = await passwordHashOf(harness, userId);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword: "yet another passphrase" }))).toBe(
      ErrorCode.InvalidToken,
    );
    expect(await passwordHashOf(harness, userId)).toBe(hash);
    expect((await login(harness.auth, { username: "alice", password: newPassword })).status).toBe("authenticated");
  });

  it("PR-2: 20 concurrent resets with one token give exactly one {reset: true}", async () => {
    const harness = makeEmailAuth({ storage: slowStorage(memoryStorage()), password: { maxQueuedHashes: 100 } });
    const { token } = await userWithLink(harness);
    const attempts = Array.from({ length: 20 }, (_, index) =>
      resetPassword(harness.auth, { token, newPassword: `${newPassword} number ${index}` }),
    );
    expect(await tally(attempts)).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [ErrorCode.InvalidToken, 19],
      ]),
    );
    expect(harness.events.filter((event) => event.type === "password.reset")).toHaveLength(1);
  });

  it("PR-2: a token expires after 30 minutes by default, after email.tokenLifetime when set", async () => {
    const harness = makeEmailAuth();
    const { token } = await userWithLink(harness);
    harness.clock.advance(30 * 60_000);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword }))).toBe(ErrorCode.InvalidToken);
    const fresh = await requestReset(harness, "alice");
    harness.clock.advance(30 * 60_000 - 1);
    expect(await resetPassword(harness.auth, { token: fresh, newPassword })).toEqual({ reset: true });

    const longer = makeEmailAuth({}, { tokenLifetime: "2h" });
    const { token: lasting } = await userWithLink(longer, "bob");
    longer.clock.advance(90 * 60_000);
    expect(await resetPassword(longer.auth, { token: lasting, newPassword })).toEqual({ reset: true });
  });

  it("PR-2: a newer token voids the older one", async () => {
    const harness = makeEmailAuth();
    const { token: older } = await userWithLink(harness);
    const newer = await requestReset(harness, "alice");
    expect(await outcome(resetPassword(harness.auth, { token: older, newPassword }))).toBe(ErrorCode.InvalidToken);
    expect(await resetPassword(harness.auth, { token: newer, newPassword })).toEqual({ reset: true });
  });

  it("PR-2: a password change voids the token", async () => {
    const harness = makeEmailAuth();
    const { userId, token } = await userWithLink(harness);
    await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "changed in the meantime" });
    expect(await outcome(resetPassword(harness.auth, { token, newPassword }))).toBe(ErrorCode.InvalidToken);
    expect((await login(harness.auth, { username: "alice", password: "changed in the meantime" })).status).toBe("authenticated");
  });

  it("PR-2: a token of another kind (an address verification link's) is refused", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    await changeEmail(harness.auth, { userId, email: "new@example.com", password: goodPassword });
    const verification = tokenOf(sentTo(harness, "new@example.com", "email_verification")[0]);
    expect(await outcome(resetPassword(harness.auth, { token: verification, newPassword }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(resetPassword(harness.auth, { token: "made-up-token", newPassword }))).toBe(ErrorCode.InvalidToken);
    expect((await login(harness.auth, { username: "alice", password: goodPassword })).status).toBe("authenticated");
  });

  it("PR-3: a TOTP user without a code gets 40103 and nothing changes: the password stays and the token still works", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { secret } = await enrolTotp(harness.auth, userId);
    const token = await requestReset(harness, "alice");
    const hash = await passwordHashOf(harness, userId);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword }))).toBe(ErrorCode.SecondFactorFailed);
    expect(await passwordHashOf(harness, userId)).toBe(hash);
    expect(harness.events.filter((event) => event.type === "password.reset")).toEqual([]);
    const totpCode = nextCode(harness, secret);
    expect(await resetPassword(harness.auth, { token, newPassword, totpCode })).toEqual({ reset: true });
    expect(await passwordHashOf(harness, userId)).not.toBe(hash);
    // The step it used is spent (TOTP-4): the same code cannot sign in.
    const pending = await login(harness.auth, { username: "alice", password: newPassword });
    if (pending.status !== "totp_required") throw new Error(pending.status);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: pending.tempToken, code: totpCode }))).toBe(
      ErrorCode.SecondFactorFailed,
    );
  });

  it("PR-3, RL-1: a wrong code is 40103, changes nothing and counts toward the account's budget", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
    const token = await requestReset(harness, "alice");
    const hash = await passwordHashOf(harness, userId);
    for (let attempt = 0; attempt < 4; attempt += 1) {
      const totpCode = wrongCodeAt(secret, harness.clock.now);
      expect(await outcome(resetPassword(harness.auth, { token, newPassword, totpCode }))).toBe(ErrorCode.SecondFactorFailed);
    }
    const recoveryCode = "AAAA-BBBB-CCCC";
    expect(await outcome(resetPassword(harness.auth, { token, newPassword, recoveryCode }))).toBe(ErrorCode.SecondFactorFailed);
    const totpCode = nextCode(harness, secret);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword, totpCode }))).toBe(ErrorCode.TooManyAttempts);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword, recoveryCode: recoveryCodes[0] }))).toBe(
      ErrorCode.TooManyAttempts,
    );
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword }))).toBe(ErrorCode.TooManyAttempts);
    expect(await passwordHashOf(harness, userId)).toBe(hash);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
  });

  it("PR-3: a recovery code works instead of a TOTP code, and is spent", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { recoveryCodes } = await enrolTotp(harness.auth, userId);
    const recoveryCode = recoveryCodes[0] as string;
    const token = await requestReset(harness, "alice");
    expect(await resetPassword(harness.auth, { token, newPassword, recoveryCode })).toEqual({ reset: true });
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(9);
    const again = await requestReset(harness, "alice");
    expect(await outcome(resetPassword(harness.auth, { token: again, newPassword: "third passphrase here", recoveryCode }))).toBe(
      ErrorCode.SecondFactorFailed,
    );
  });

  it("PR-4, TV-1: a reset ends every session and temporary token, and a notice goes to the verified address", async () => {
    const harness = makeEmailAuth();
    const userId = await addUserWithEmail(harness.auth, "alice", "alice@example.com");
    const { secret } = await enrolTotp(harness.auth, userId);
    const sessions = [
      await signedInSession(harness, "alice", { totpSecret: secret }),
      await signedInSession(harness, "alice", { totpSecret: secret }),
    ];
    const pending = await login(harness.auth, { username: "alice", password: goodPassword });
    if (pending.status !== "totp_required") throw new Error(pending.status);
    const token = await requestReset(harness, "alice");
    const version = (await harness.storage.users.findById(userId))?.tokenVersion as number;
    expect(await resetPassword(harness.auth, { token, newPassword, totpCode: nextCode(harness, secret) })).toEqual({
      reset: true,
    });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBeGreaterThan(version);
    for (const { sessionId } of sessions) {
      expect((await harness.storage.sessions.findSession(sessionId))?.revokedAt).toBe(harness.clock.now);
    }
    for (const { tokens } of sessions) {
      expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
    }
    const code = nextCode(harness, secret);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: pending.tempToken, code }))).toBe(ErrorCode.AuthenticationFailed);
    expect(harness.events.filter((event) => event.type === "password.reset")).toEqual([
      expect.objectContaining({ userId, sessionsEnded: 2 }),
    ]);
    await emailDeliveriesSettled(harness.auth);
    expect(sentTo(harness, "alice@example.com", "notice")).toEqual([
      expect.objectContaining({ kind: "notice", notice: "password_reset" }),
    ]);
    expect(await outcome(login(harness.auth, { username: "alice", password: goodPassword }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    expect((await login(harness.auth, { username: "alice", password: newPassword })).status).toBe("totp_required");
  });

  it("PW-3: a refused new password is 42200 with the reason, and leaves the token usable", async () => {
    const harness = makeEmailAuth();
    const { token } = await userWithLink(harness);
    for (const weak of ["password1", "short"]) {
      expect(await outcome(resetPassword(harness.auth, { token, newPassword: weak }))).toBe(ErrorCode.ValidationFailed);
    }
    expect(await resetPassword(harness.auth, { token, newPassword })).toEqual({ reset: true });
  });

  it("a user disabled after the link was sent: 40101, and nothing changes", async () => {
    const harness = makeEmailAuth();
    const { userId, token } = await userWithLink(harness);
    await harness.storage.users.update(userId, { disabled: true }, harness.clock.now);
    const hash = await passwordHashOf(harness, userId);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword }))).toBe(ErrorCode.InvalidToken);
    expect(await passwordHashOf(harness, userId)).toBe(hash);
    await harness.storage.users.update(userId, { disabled: false }, harness.clock.now);
    expect(await resetPassword(harness.auth, { token, newPassword })).toEqual({ reset: true });
  });

  it("a missing field is 40001; without email configured, 40400", async () => {
    const harness = makeEmailAuth();
    const { token } = await userWithLink(harness);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword: "" }))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(resetPassword(harness.auth, { token: "", newPassword }))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(resetPassword(harness.auth, { token, newPassword, totpCode: 123456 } as never))).toBe(
      ErrorCode.MalformedParameter,
    );
    expect(await outcome(resetPassword(makeAuth().auth, { token, newPassword }))).toBe(ErrorCode.NotFound);
  });
});

describe("resetPassword's refusals and events", () => {
  it("names the field it refuses, and asks a TOTP user for a code in words", async () => {
    const harness = makeEmailAuth();
    const { token, userId } = await userWithLink(harness);
    const refusal = async (input: object) => {
      try {
        await resetPassword(harness.auth, input as never);
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { code, message };
      }
      throw new Error("expected a refusal");
    };
    expect(await refusal({ newPassword })).toEqual({ code: 40001, message: "token is required" });
    expect(await refusal({ token })).toEqual({ code: 40001, message: "newPassword is required" });
    expect(await refusal({ token, newPassword, totpCode: 5 })).toEqual({ code: 40002, message: "totpCode must be a string" });
    expect(await refusal({ token, newPassword, recoveryCode: 5 })).toEqual({
      code: 40002,
      message: "recoveryCode must be a string",
    });
    await enrolTotp(harness.auth, userId);
    const fresh = await requestReset(harness, "alice");
    expect(await refusal({ token: fresh, newPassword })).toEqual({
      code: 40103,
      message: "This account has two-step sign-in: send totpCode or recoveryCode",
    });
  });

  it("PR-4: the token version rises and the sessions end with the reason password_reset", async () => {
    const harness = makeEmailAuth();
    const { token } = await userWithLink(harness);
    await signedInSession(harness, "alice");
    await resetPassword(harness.auth, { token, newPassword });
    const reasons = harness.events
      .filter((event) => event.type === "token_version.raised" || event.type === "sessions.ended")
      .map((event) => [event.type, (event as { reason: string }).reason]);
    expect(reasons).toEqual([
      ["token_version.raised", "password_reset"],
      ["sessions.ended", "password_reset"],
    ]);
  });
});
