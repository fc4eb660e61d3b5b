import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { reauthenticateWithPasskeyBegin, reauthenticateWithPasskeyFinish } from "../step-up/reauthenticate-session.js";
import type { UserRecord } from "../storage/types.js";
import {
  type Harness,
  addUser,
  authError,
  codeAt,
  enrolTotp,
  goodPassword,
  makeAuth,
  makeClock,
  outcome,
  signIn,
  startTime,
  tokensOf,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { makeAuthenticator, makePasskeyAuth, passkeySignIn, registerPasskey } from "./passkeys.test-support.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";
import { verifyAccessToken } from "./verify-access-token.js";

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

const confirm = {
  code: ErrorCode.MissingParameter,
  message: "Confirm it is you: send the current password, or re-authenticate first",
};

/** A user signed in now on `harness`: the stored record and the session of the access token. */
async function signedIn(harness: Harness, username: string): Promise<{ user: UserRecord; sessionId: string }> {
  const userId = await addUser(harness.auth, username);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: (await signIn(harness, username)).accessToken });
  return { user: (await harness.storage.users.findById(userId)) as UserRecord, sessionId };
}

describe("requireRecentAuthentication", () => {
  it("PW-5: a proof field that is not a string is 40002 naming it", async () => {
    const harness = makeAuth();
    const { user } = await signedIn(harness, "typed-proof");
    for (const field of ["password", "totpCode"]) {
      for (const value of [{ $ne: "" }, ["123456"], 123456, true]) {
        const proof = { [field]: value } as unknown as ReauthenticationProof;
        expect(await answerOf(requireRecentAuthentication(harness.auth, user, proof)), `${field}: ${String(value)}`).toEqual({
          code: ErrorCode.MalformedParameter,
          message: `${field} must be a string`,
        });
      }
    }
  });

  it("PW-5: a session id that is not a string never reaches storage", async () => {
    const harness = makeAuth();
    const { user } = await signedIn(harness, "typed-session");
    const findSession = vi.spyOn(harness.storage.sessions, "findSession");
    for (const sessionId of [{ $ne: "" }, { $gt: "" }, ["session"], 42, undefined]) {
      const proof = { sessionId } as unknown as ReauthenticationProof;
      expect(await answerOf(requireRecentAuthentication(harness.auth, user, proof))).toEqual(confirm);
    }
    expect(findSession).not.toHaveBeenCalled();
  });

  it("TOTP-5: a wrong password is 40100 Invalid password", async () => {
    const harness = makeAuth();
    const { user, sessionId } = await signedIn(harness, "wrong-password");
    expect(await answerOf(requireRecentAuthentication(harness.auth, user, { sessionId, password: "not the password" }))).toEqual({
      code: ErrorCode.AuthenticationFailed,
      message: "Invalid password",
    });
    await requireRecentAuthentication(harness.auth, user, { password: goodPassword });
  });

  it("TOTP-5: a TOTP code while TOTP is off is 40900 TOTP is not enabled, and only a current code of an enabled factor is proof", async () => {
    const harness = makeAuth();
    const { user } = await signedIn(harness, "code-proof");
    expect(await answerOf(requireRecentAuthentication(harness.auth, user, { totpCode: "123456" }))).toEqual({
      code: ErrorCode.Conflict,
      message: "TOTP is not enabled",
    });
    const { secret } = await enrolTotp(harness.auth, user.id);
    const code = codeAt(secret, harness.clock.advance(30_000));
    await requireRecentAuthentication(harness.auth, user, { password: goodPassword, totpCode: code });
    expect(await outcome(requireRecentAuthentication(harness.auth, user, { password: goodPassword, totpCode: code }))).toBe(
      ErrorCode.SecondFactorFailed,
    );
  });

  it("RL-1: a right password or TOTP code clears the account's failures, so re-authenticating never locks the account", async () => {
    const harness = makeAuth({ throttle: { account: [{ limit: 2, window: "15m" }] } });
    const { user } = await signedIn(harness, "often");
    for (let round = 0; round < 4; round += 1) {
      await requireRecentAuthentication(harness.auth, user, { password: goodPassword });
    }
    const { secret } = await enrolTotp(harness.auth, user.id);
    const enrolled = (await harness.storage.users.findById(user.id)) as UserRecord;
    for (let round = 1; round <= 4; round += 1) {
      const totpCode = codeAt(secret, harness.clock.advance(30_000));
      await requireRecentAuthentication(harness.auth, enrolled, { password: goodPassword, totpCode });
    }
    expect((await login(harness.auth, { username: "often", password: goodPassword })).status).toBe("totp_required");
  });

  it("RL-5: a password proof from a live session spends the session's budget: a stranger's lockout of the account never stops it", async () => {
    const harness = makeAuth({ throttle: { account: [{ limit: 2, window: "15m" }], device: [{ limit: 3, window: "15m" }] } });
    const { user, sessionId } = await signedIn(harness, "owner");
    for (let attempt = 0; attempt < 3; attempt += 1) await outcome(login(harness.auth, { username: "owner", password: "wrong" }));
    expect(await outcome(login(harness.auth, { username: "owner", password: goodPassword }))).toBe(42900);
    await requireRecentAuthentication(harness.auth, user, { sessionId, password: goodPassword }, 0);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(await outcome(requireRecentAuthentication(harness.auth, user, { sessionId, password: "wrong" }, 0))).toBe(40100);
    }
    expect(await outcome(requireRecentAuthentication(harness.auth, user, { sessionId, password: goodPassword }, 0))).toBe(42900);
    // A session id that is not the user's live session is no budget of its own.
    const other = await signedIn(harness, "other");
    expect(
      await outcome(requireRecentAuthentication(harness.auth, user, { sessionId: other.sessionId, password: goodPassword }, 0)),
    ).toBe(42900);
  });

  it("RL-5: a revoked session, one expiring now and a session id that is no string are no budget of their own: their proofs spend the account's, and such an id reaches no store", async () => {
    const cases: Record<string, (harness: Harness, sessionId: string) => Promise<unknown>> = {
      revoked: async (harness, sessionId) => {
        await harness.storage.sessions.revokeSession(sessionId, harness.clock.now);
        return sessionId;
      },
      "expiring now": async (harness, sessionId) => {
        const { expiresAt } = (await harness.storage.sessions.findSession(sessionId)) as { expiresAt: number };
        harness.clock.now = expiresAt - 60_000;
        return sessionId;
      },
      "a number": async () => 42,
    };
    for (const [name, sessionFor] of Object.entries(cases)) {
      const harness = makeAuth({ throttle: { account: [{ limit: 2, window: "15m" }], device: [{ limit: 3, window: "15m" }] } });
      const { user, sessionId: own } = await signedIn(harness, "owner");
      const sessionId = await sessionFor(harness, own);
      for (let attempt = 0; attempt < 3; attempt += 1)
        await outcome(login(harness.auth, { username: "owner", password: "wrong" }));
      if (name === "expiring now") harness.clock.advance(60_000);
      const findSession = vi.spyOn(harness.storage.sessions, "findSession");
      const proof = { sessionId, password: goodPassword } as ReauthenticationProof;
      expect(await outcome(requireRecentAuthentication(harness.auth, user, proof, 0)), name).toBe(42900);
      if (typeof sessionId !== "string") expect(findSession, name).not.toHaveBeenCalled();
    }
  });

  it("TV-2: a session begun before the token version rose is no proof of a recent sign-in", async () => {
    const harness = makeAuth();
    const { user, sessionId } = await signedIn(harness, "stale");
    await harness.storage.users.incrementTokenVersion(user.id, harness.clock.now);
    const raised = (await harness.storage.users.findById(user.id)) as UserRecord;
    expect(await answerOf(requireRecentAuthentication(harness.auth, raised, { sessionId }))).toEqual(confirm);
  });

  it("TOTP-5: with recentSignIn false, no session is proof, not even one stamped ahead of this instance's clock", async () => {
    // Another instance whose clock runs 10 s ahead signs the user in; this one, set to ask for
    // the password every time, must not count the session as recent (its age looks negative).
    const ahead = makeAuth({ clock: makeClock(startTime + 10_000) });
    const strict = makeAuth({ storage: ahead.storage, reauthentication: { recentSignIn: false } });
    const lenient = makeAuth({ storage: ahead.storage });
    const { user, sessionId } = await signedIn(ahead, "skewed");
    const findSession = vi.spyOn(ahead.storage.sessions, "findSession");
    expect(await answerOf(requireRecentAuthentication(strict.auth, user, { sessionId }))).toEqual(confirm);
    expect(await answerOf(requireRecentAuthentication(strict.auth, user, { sessionId }, 0))).toEqual(confirm);
    expect(findSession).not.toHaveBeenCalled();
    await requireRecentAuthentication(lenient.auth, user, { sessionId });
  });
});

describe("the ways a 40001 names (PL-15)", () => {
  it("PL-15: a refusal names how the account can re-authenticate; an account without a password is told to use what it has", async () => {
    const harness = makePasskeyAuth();
    const { user, sessionId } = await signedIn(harness, "ways");
    harness.clock.advance(6 * 60_000);
    const withPassword = await authError(requireRecentAuthentication(harness.auth, user, { sessionId }));
    expect(withPassword).toMatchObject({ ...confirm, data: { reauthenticateWith: ["password"] } });

    const authenticator = makeAuthenticator();
    await registerPasskey(harness.auth, user.id, authenticator);
    const both = await authError(requireRecentAuthentication(harness.auth, user, { sessionId }));
    expect(both.data).toEqual({ reauthenticateWith: ["password", "passkey"] });

    const passkeyOnly = (await harness.storage.users.update(user.id, { passwordHash: null }, harness.clock.now)) as UserRecord;
    const refused = await authError(requireRecentAuthentication(harness.auth, passkeyOnly, {}));
    expect(refused).toMatchObject({
      code: ErrorCode.MissingParameter,
      message: "Confirm it is you: this account has no password, so re-authenticate first with a passkey or its provider",
      data: { reauthenticateWith: ["passkey"] },
    });
    // A password offered by an account that has none is simply wrong, never a way in.
    expect(await outcome(requireRecentAuthentication(harness.auth, passkeyOnly, { password: goodPassword }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
  });

  it("PL-15: an account that signs in only through a provider is told so (provider), and one with both a password and a link hears both", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "linked");
    await harness.storage.identities.link({
      provider: "corp",
      subject: "s-1",
      userId,
      email: null,
      emailVerified: false,
      createdAt: harness.clock.now,
      lastUsedAt: null,
    });
    const withPassword = (await harness.storage.users.findById(userId)) as UserRecord;
    expect((await authError(requireRecentAuthentication(harness.auth, withPassword, {}))).data).toEqual({
      reauthenticateWith: ["password", "provider"],
    });
    const providerOnly = (await harness.storage.users.update(userId, { passwordHash: null }, harness.clock.now)) as UserRecord;
    expect(await authError(requireRecentAuthentication(harness.auth, providerOnly, {}))).toMatchObject({
      message: "Confirm it is you: this account has no password, so re-authenticate first with a passkey or its provider",
      data: { reauthenticateWith: ["provider"] },
    });
  });

  it("PL-15: a passkey re-authentication makes the session recent, and the change then goes on with no proof", async () => {
    const harness = makePasskeyAuth();
    const userId = await addUser(harness.auth, "passkey-only");
    const authenticator = makeAuthenticator();
    await registerPasskey(harness.auth, userId, authenticator);
    await harness.storage.users.update(userId, { passwordHash: null }, harness.clock.now);
    const tokens = tokensOf(await passkeySignIn(harness.auth, authenticator));
    const { sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    harness.clock.advance(6 * 60_000);
    const user = (await harness.storage.users.findById(userId)) as UserRecord;
    expect(await outcome(requireRecentAuthentication(harness.auth, user, { sessionId }))).toBe(ErrorCode.MissingParameter);

    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const renewed = await reauthenticateWithPasskeyFinish(harness.auth, {
      userId,
      sessionId,
      ceremonyId: begun.ceremonyId,
      response: authenticator.authenticate(begun.options),
    });
    const fresh = await verifyAccessToken(harness.auth, { token: renewed.accessToken });
    expect(await outcome(requireRecentAuthentication(harness.auth, user, { sessionId: fresh.sessionId }))).toBe("fulfilled");
  });
});
