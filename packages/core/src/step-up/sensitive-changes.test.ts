import { describe, expect, it } from "vitest";
import { addUserWithEmail, makeEmailAuth } from "../email/email.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { changeEmail } from "../flows/change-email.js";
import { changePassword } from "../flows/change-password.js";
import {
  type Harness,
  authError,
  codeAt,
  decodeBase32,
  enrolTotp,
  goodPassword,
  nextCode,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { revokePasskey } from "../flows/passkey-management.js";
import { makeAuthenticator, passkeySignIn, registerPasskey } from "../flows/passkeys.test-support.js";
import { beginTotpSetup, disableTotp, enableTotp, regenerateRecoveryCodes } from "../flows/totp-enrolment.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnRegisterBegin } from "../flows/webauthn-register.js";
import type { TokenSet } from "../tokens/issue-tokens.js";

const minute = 60_000;
const totpMissing = {
  code: ErrorCode.MissingParameter,
  message: "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
};
const passwordMissing = {
  code: ErrorCode.MissingParameter,
  message: "Confirm it is you: send the current password, or re-authenticate first",
};

/** The code and message a rejected promise carries. */
async function refusal(promise: Promise<unknown>) {
  const { code, message } = await authError(promise);
  return { code, message };
}

/** A user with a password, TOTP and a passkey, signed in with the password and a code: its session and secret. */
async function totpUserSignedIn(harness: Harness, username: string) {
  const userId = await addUserWithEmail(harness.auth, username, `${username}@example.com`);
  await registerPasskey(harness.auth, userId, makeAuthenticator());
  const { secret } = await enrolTotp(harness.auth, userId);
  const first = await login(harness.auth, { username, password: goodPassword });
  if (first.status !== "totp_required") throw new Error("expected a second-factor request");
  const tokens = await verifyTotp(harness.auth, { tempToken: first.tempToken, code: nextCode(harness, secret) });
  return { userId, secret, sessionId: await sessionOf(harness, tokens) };
}

async function sessionOf(harness: Harness, tokens: TokenSet): Promise<string> {
  return (await verifyAccessToken(harness.auth, { token: tokens.accessToken })).sessionId;
}

describe("STUP-3, ASVS 7.5.1, 6.4.3: sensitive changes need every factor the account has", () => {
  const harnessWithEverything = (): Harness => {
    const passkeys = { rpId: "example.com", rpName: "Example", origins: ["https://app.example.com"] };
    return makeEmailAuth({ passkeys });
  };

  it("STUP-3, ASVS 6.4.3: a hijacked session with the password (its sign-in older than recentSignIn) cannot turn TOTP off, make recovery codes, change the password or address, or add or remove a passkey", async () => {
    const harness = harnessWithEverything();
    const { userId, secret, sessionId } = await totpUserSignedIn(harness, "victim");
    harness.clock.advance(6 * minute);
    const { auth } = harness;
    const [passkey] = await auth.storage.passkeys.listByUser(userId);
    const withPassword = { userId, sessionId, password: goodPassword };
    expect(await refusal(disableTotp(auth, withPassword))).toEqual(totpMissing);
    expect(await refusal(regenerateRecoveryCodes(auth, withPassword))).toEqual(totpMissing);
    expect(
      await refusal(changePassword(auth, { userId, sessionId, currentPassword: goodPassword, newPassword: "a new pass phrase" })),
    ).toEqual(totpMissing);
    expect(await refusal(changeEmail(auth, { ...withPassword, email: "thief@example.com" }))).toEqual(totpMissing);
    expect(await refusal(webauthnRegisterBegin(auth, { ...withPassword, label: "Thief's key" }))).toEqual(totpMissing);
    expect(await refusal(revokePasskey(auth, { ...withPassword, id: passkey?.id as string }))).toEqual(totpMissing);
    // With the code alone (the password unknown), the same.
    const withCode = { userId, sessionId, code: codeAt(secret, harness.clock.now) };
    expect(await refusal(disableTotp(auth, withCode))).toEqual(passwordMissing);
    expect(await refusal(regenerateRecoveryCodes(auth, withCode))).toEqual(passwordMissing);
    // Nothing changed.
    expect((await auth.storage.totp.get(userId))?.enabled).toBe(true);
    expect(await auth.storage.passkeys.listByUser(userId)).toHaveLength(1);
    expect((await login(auth, { username: "victim", password: goodPassword })).status).toBe("totp_required");
  });

  it("STUP-3, ASVS 7.5.1: the password and a code together make each change", async () => {
    const harness = harnessWithEverything();
    const { userId, secret, sessionId } = await totpUserSignedIn(harness, "owner");
    harness.clock.advance(6 * minute);
    const { auth } = harness;
    const both = () => ({ userId, sessionId, password: goodPassword, totpCode: codeAt(secret, harness.clock.advance(30_000)) });
    expect(await changeEmail(auth, { ...both(), email: "owner.new@example.com" })).toEqual({ pending: true });
    expect((await webauthnRegisterBegin(auth, { ...both(), label: "Second key" })).ceremonyId).toEqual(expect.any(String));
    const [passkey] = await auth.storage.passkeys.listByUser(userId);
    await revokePasskey(auth, { ...both(), id: passkey?.id as string });
    const { password, totpCode } = both();
    expect((await regenerateRecoveryCodes(auth, { userId, sessionId, password, code: totpCode })).recoveryCodes).toHaveLength(10);
    expect(
      (await changePassword(auth, { ...both(), currentPassword: goodPassword, newPassword: "a new pass phrase" })).changed,
    ).toBe(true);
    const last = both();
    await disableTotp(auth, { userId, sessionId, password: "a new pass phrase", code: last.totpCode });
    expect(await auth.storage.totp.get(userId)).toBeNull();
  });

  it("STUP-3, ASVS 7.5.1: a recent sign-in counts only for what it proved: the password and a code in the last 5 minutes stand for both", async () => {
    const harness = harnessWithEverything();
    const { userId, sessionId } = await totpUserSignedIn(harness, "fresh");
    harness.clock.advance(4 * minute);
    await disableTotp(harness.auth, { userId, sessionId });
    expect(await harness.auth.storage.totp.get(userId)).toBeNull();
  });

  it("STUP-3, ASVS 7.5.1: a recent session whose amr lacks otp (TOTP turned on after its sign-in) needs a code, even with the password", async () => {
    const harness = harnessWithEverything();
    const { auth } = harness;
    const userId = await addUserWithEmail(auth, "late", "late@example.com");
    const signedIn = await login(auth, { username: "late", password: goodPassword });
    if (signedIn.status !== "authenticated") throw new Error("expected a session");
    const sessionId = await sessionOf(harness, signedIn.tokens);
    // TOTP turned on from this session, which goes on (SE-2) with the amr of its sign-in.
    const setup = await beginTotpSetup(auth, { userId, sessionId });
    const secret = decodeBase32(setup.secret);
    await enableTotp(auth, { userId, sessionId, code: codeAt(secret, harness.clock.now) });
    harness.clock.advance(minute);
    expect(await refusal(disableTotp(auth, { userId, sessionId }))).toEqual(totpMissing);
    expect(await refusal(disableTotp(auth, { userId, sessionId, password: goodPassword }))).toEqual(totpMissing);
    expect(await refusal(regenerateRecoveryCodes(auth, { userId, sessionId }))).toEqual(totpMissing);
    // The recent sign-in stands for the password: a code completes it.
    await disableTotp(auth, { userId, sessionId, code: codeAt(secret, harness.clock.advance(30_000)) });
    expect(await auth.storage.totp.get(userId)).toBeNull();
  });

  it("STUP-3, ASVS 7.5.1: a recent user-verified passkey sign-in proves both factors; 6 minutes later both must be sent", async () => {
    const harness = harnessWithEverything();
    const { auth } = harness;
    const userId = await addUserWithEmail(auth, "keyholder", "keyholder@example.com");
    const authenticator = makeAuthenticator();
    await registerPasskey(auth, userId, authenticator, "First");
    await registerPasskey(auth, userId, makeAuthenticator(), "Second");
    const { secret } = await enrolTotp(auth, userId);
    const signedIn = await passkeySignIn(auth, authenticator, "keyholder");
    if (signedIn.status !== "authenticated") throw new Error("expected a session");
    const sessionId = await sessionOf(harness, signedIn.tokens);
    const [first, second] = await auth.storage.passkeys.listByUser(userId);
    await revokePasskey(auth, { userId, sessionId, id: first?.id as string });
    harness.clock.advance(6 * minute);
    expect(await refusal(revokePasskey(auth, { userId, sessionId, id: second?.id as string }))).toEqual({
      code: ErrorCode.MissingParameter,
      message: "Confirm it is you: send the current password and a current TOTP code, or re-authenticate first",
    });
    await revokePasskey(auth, {
      userId,
      sessionId,
      id: second?.id as string,
      password: goodPassword,
      totpCode: codeAt(secret, harness.clock.now),
    });
    expect(await auth.storage.passkeys.listByUser(userId)).toEqual([]);
  });
});
