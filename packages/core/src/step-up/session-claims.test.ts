import { describe, expect, it } from "vitest";
import { type Harness, addUser, enrolTotp, goodPassword, makeAuth, nextCode, signIn } from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn } from "../flows/passkeys.test-support.js";
import { refresh } from "../flows/refresh.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "../flows/webauthn-register.js";
import type { TokenSet } from "../tokens/issue-tokens.js";

/** The claims of an access token, read without verifying it. */
const claimsOf = (accessToken: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString());

/** What a token says of its sign-in: its claims and what `verifyAccessToken` gives a route. */
async function signInOf(harness: Harness, tokens: TokenSet) {
  const { auth_time, amr, sid } = claimsOf(tokens.accessToken);
  const access = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  const session = await harness.storage.sessions.findSession(sid as string);
  return { claims: { auth_time, amr }, access: { authTime: access.authTime, amr: access.amr }, stored: session?.amr };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** A TOTP user whose first factor is proven: the temporary token and the secret. */
async function halfSignedIn(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
  const first = await login(harness.auth, { username, password: goodPassword });
  if (first.status !== "totp_required") throw new Error("expected a second-factor request");
  return { tempToken: first.tempToken, secret, recoveryCodes };
}

describe("STUP-1, ASVS 10.3.4: what the token knows about the sign-in", () => {
  it("STUP-1, ASVS 10.3.4: a password sign-in's token carries auth_time (the sign-in, epoch seconds) and amr [pwd], and so does req.auth", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "plain");
    harness.clock.advance(1234);
    const signedInAt = harness.clock.now;
    expect(await signInOf(harness, await signIn(harness, "plain"))).toEqual({
      claims: { auth_time: seconds(signedInAt), amr: ["pwd"] },
      access: { authTime: seconds(signedInAt), amr: ["pwd"] },
      stored: ["pwd"],
    });
  });

  it("STUP-1, ASVS 10.3.4: refreshed tokens keep the sign-in's auth_time and amr, however much later", async () => {
    const harness = makeAuth();
    const { tempToken, secret } = await halfSignedIn(harness, "refreshing");
    const tokens = await verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) });
    const signedInAt = harness.clock.now;
    harness.clock.advance(3 * 3600_000);
    const refreshed = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    const expected = { auth_time: seconds(signedInAt), amr: ["pwd", "otp", "mfa"] };
    expect((await signInOf(harness, refreshed)).claims).toEqual(expected);
    harness.clock.advance(3 * 3600_000);
    const again = await refresh(harness.auth, { refreshToken: refreshed.refreshToken });
    expect(await signInOf(harness, again)).toEqual({
      claims: expected,
      access: { authTime: expected.auth_time, amr: expected.amr },
      stored: ["pwd", "otp"],
    });
    expect(claimsOf(again.accessToken).iat).toBe(seconds(harness.clock.now));
  });

  it("STUP-1, ASVS 10.3.4: a recovery code reads as otp in the token (RFC 8176 has no value of its own), and the session keeps rc", async () => {
    const harness = makeAuth();
    const { tempToken, recoveryCodes } = await halfSignedIn(harness, "recovering");
    const tokens = await useRecoveryCode(harness.auth, { tempToken, recoveryCode: recoveryCodes[0] as string });
    expect(await signInOf(harness, tokens)).toMatchObject({
      claims: { amr: ["pwd", "otp", "mfa"] },
      access: { amr: ["pwd", "otp", "mfa"] },
      stored: ["pwd", "rc"],
    });
  });

  it("STUP-1, ASVS 10.3.4: a user-verified passkey is hwk, user and mfa; a synced (backup-eligible) one is swk; one without user verification is hwk alone", async () => {
    const harness = makePasskeyAuth({}, { userVerification: "preferred" });
    const cases = [
      ["bound", {}, ["hwk", "user", "mfa"]],
      ["synced", { be: true, bs: true }, ["swk", "user", "mfa"]],
      ["unverified", { uv: false }, ["hwk"]],
    ] as const;
    for (const [username, flags, amr] of cases) {
      const userId = await addUser(harness.auth, username);
      const authenticator = makeAuthenticator();
      const { ceremonyId, options } = await webauthnRegisterBegin(harness.auth, { userId, label: "Key", password: goodPassword });
      const response = authenticator.register(options, { flags });
      await webauthnRegisterFinish(harness.auth, { userId, ceremonyId, response });
      const result = await passkeySignIn(harness.auth, authenticator, username);
      if (result.status !== "authenticated") throw new Error(`${username}: expected a session`);
      expect((await signInOf(harness, result.tokens)).access.amr, username).toEqual(amr);
    }
  });
});
