import type { SoftwareAuthenticator } from "@portcullis/testing";
import { describe, expect, it, vi } from "vitest";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../directory/directory.test-support.js";
import { ErrorCode } from "../errors/codes.js";
import { saveDirectoryPolicy } from "../flows/directory-policy.js";
import {
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
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { makeAuthenticator, makePasskeyAuth, registerPasskey } from "../flows/passkeys.test-support.js";
import { beginTotpSetup, enableTotp } from "../flows/totp-enrolment.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { webauthnRegisterBegin } from "../flows/webauthn-register.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { reauthenticate, reauthenticateWithPasskeyBegin, reauthenticateWithPasskeyFinish } from "./reauthenticate-session.js";

const minute = 60_000;

async function sessionOf(harness: Harness, tokens: TokenSet): Promise<string> {
  return (await verifyAccessToken(harness.auth, { token: tokens.accessToken })).sessionId;
}

/** A user with a password signed in now: its id and session. */
async function signedIn(harness: Harness, username: string): Promise<{ userId: string; sessionId: string }> {
  const userId = await addUser(harness.auth, username);
  return { userId, sessionId: await sessionOf(harness, await signIn(harness, username)) };
}

/** Turns TOTP on from `sessionId`, which goes on (its sign-in is recent: no proof needed). */
async function enrolTotpFrom(harness: Harness, userId: string, sessionId: string): Promise<void> {
  const setup = await beginTotpSetup(harness.auth, { userId, sessionId, password: goodPassword });
  const code = codeAt(decodeBase32(setup.secret), harness.clock.now);
  await enableTotp(harness.auth, { userId, sessionId, password: goodPassword, code });
}

/** What the stored session says of its sign-in. */
async function provenOf(harness: Harness, sessionId: string) {
  const session = await harness.storage.sessions.findSession(sessionId);
  return { authTime: session?.authTime, amr: session?.amr };
}

/** A passkey user signed in with the password, passkeys' user verification `"preferred"`. */
async function passkeyUser(harness: Harness, username: string, authenticator: SoftwareAuthenticator = makeAuthenticator()) {
  const userId = await addUser(harness.auth, username);
  await registerPasskey(harness.auth, userId, authenticator);
  const sessionId = await sessionOf(harness, await signIn(harness, username));
  return { userId, sessionId, authenticator };
}

const preferred = { userVerification: "preferred" as const, registrationCeremonyLimit: 20 };

describe("reauthenticate (STUP-2, ASVS 7.5.3)", () => {
  it("STUP-2, ASVS 7.5.3: the password raises the session: auth_time now and amr pwd alone, stored and announced, in a new access token of the same session", async () => {
    const harness = makeAuth();
    const { userId, sessionId } = await signedIn(harness, "riley");
    harness.clock.advance(10 * minute);
    const raised = await reauthenticate(harness.auth, { userId, sessionId, password: goodPassword, ip: "203.0.113.9" });
    expect(raised.tokenType).toBe("Bearer");
    expect(raised.expiresIn).toBe(harness.auth.config.ttl.access);
    expect(raised.user.id).toBe(userId);
    const access = await verifyAccessToken(harness.auth, { token: raised.accessToken });
    expect(access).toMatchObject({ sessionId, authTime: Math.floor(harness.clock.now / 1000), amr: ["pwd"] });
    expect(await provenOf(harness, sessionId)).toEqual({ authTime: harness.clock.now, amr: ["pwd"] });
    expect(harness.events.filter((event) => event.type === "session.reauthenticated")).toEqual([
      { type: "session.reauthenticated", userId, sessionId, amr: ["pwd"], at: harness.clock.now, ip: "203.0.113.9" },
    ]);
  });

  it("STUP-2: a session that is not the user's live one at its token version is not raised (40101), and stays as it was", async () => {
    const cases: Record<string, (harness: Harness, userId: string, sessionId: string) => Promise<string>> = {
      unknown: async () => "no-such-session",
      "another user's": async (harness) => (await signedIn(harness, "someone-else")).sessionId,
      revoked: async (harness, _userId, sessionId) => {
        await harness.storage.sessions.revokeSession(sessionId, harness.clock.now);
        return sessionId;
      },
      "expiring now": async (harness, _userId, sessionId) => {
        harness.clock.now = (await harness.storage.sessions.findSession(sessionId))?.expiresAt as number;
        return sessionId;
      },
      "of an older token version": async (harness, userId, sessionId) => {
        await harness.storage.users.incrementTokenVersion(userId, harness.clock.now);
        return sessionId;
      },
    };
    for (const [name, sessionFor] of Object.entries(cases)) {
      const harness = makeAuth({ throttle: generousThrottle });
      const { userId, sessionId: own } = await signedIn(harness, "casey");
      harness.clock.advance(minute);
      const sessionId = await sessionFor(harness, userId, own);
      const before = await provenOf(harness, sessionId);
      expect(await outcome(reauthenticate(harness.auth, { userId, sessionId, password: goodPassword })), name).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await provenOf(harness, sessionId), name).toEqual(before);
      expect(harness.events.some((event) => event.type === "session.reauthenticated")).toBe(false);
    }
  });

  it("STUP-2: a session revoked between its check and the write (the store's conditional write refuses) is 40101, with no event", async () => {
    const harness = makeAuth();
    const { userId, sessionId } = await signedIn(harness, "racer");
    vi.spyOn(harness.storage.sessions, "recordAuthentication").mockResolvedValueOnce(false);
    expect(await outcome(reauthenticate(harness.auth, { userId, sessionId, password: goodPassword }))).toBe(
      ErrorCode.InvalidToken,
    );
    expect(harness.events.some((event) => event.type === "session.reauthenticated")).toBe(false);
  });

  it("STUP-2, LDAP: a directory user re-authenticates with the directory's password; a wrong one is 40100", async () => {
    const directory = fakeDirectory([person("dana", [groupsDn.engineers])]);
    const harness = makeAuth({ directory, throttle: generousThrottle });
    await saveDirectoryPolicy(harness.auth, workingPolicy);
    const tokens = tokensOf(
      await login(harness.auth, { username: "dana", password: "dana directory password", provider: "directory" }),
    );
    const { userId, sessionId } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    harness.clock.advance(10 * minute);
    expect(await outcome(reauthenticate(harness.auth, { userId, sessionId, password: "not dana's" }))).toBe(
      ErrorCode.AuthenticationFailed,
    );
    await reauthenticate(harness.auth, { userId, sessionId, password: "dana directory password" });
    expect(await provenOf(harness, sessionId)).toEqual({ authTime: harness.clock.now, amr: ["pwd"] });
  });

  it("STUP-2: a missing session id is 40001 naming sessionId, at each step", async () => {
    const harness = makePasskeyAuth({}, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "nameless");
    const missing = { code: ErrorCode.MissingParameter, message: "sessionId is required" };
    const answerOf = async (promise: Promise<unknown>) => {
      const { code, message } = await authError(promise);
      return { code, message };
    };
    expect(await answerOf(reauthenticate(harness.auth, { userId, sessionId: "", password: goodPassword }))).toEqual(missing);
    expect(await answerOf(reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId: "" }))).toEqual(missing);
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const response = authenticator.authenticate(begun.options);
    expect(
      await answerOf(
        reauthenticateWithPasskeyFinish(harness.auth, { userId, sessionId: "", ceremonyId: begun.ceremonyId, response }),
      ),
    ).toEqual(missing);
  });
});

describe("re-authenticating with a passkey (STUP-2, STUP-3)", () => {
  it("STUP-2: begin is 40900 for an account without a passkey; it asks user verification when TOTP is on, else as configured; its timeout is the ceremony's", async () => {
    const harness = makePasskeyAuth({ throttle: generousThrottle }, { ...preferred, ceremonyTtl: "2m" });
    const bare = await signedIn(harness, "bare");
    expect(await authError(reauthenticateWithPasskeyBegin(harness.auth, bare))).toMatchObject({
      code: ErrorCode.Conflict,
      message: "The account has no passkey",
    });
    const { userId, sessionId } = await passkeyUser(harness, "keyed");
    const before = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    expect(before.options).toMatchObject({ userVerification: "preferred", timeout: 120_000 });
    await enrolTotpFrom(harness, userId, sessionId);
    const after = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    expect(after.options.userVerification).toBe("required");
  });

  it("STUP-2, RL-7: re-authentication ceremonies are counted per user under their own key, apart from registrations", async () => {
    const harness = makePasskeyAuth({ throttle: generousThrottle }, { registrationCeremonyLimit: 2 });
    const { userId, sessionId } = await passkeyUser(harness, "counted");
    const now = harness.clock.now;
    expect(await harness.storage.counters.peek(`webauthn-register:${userId}`, now)).toBe(1);
    await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    expect(await outcome(reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId }))).toBe(ErrorCode.TooManyAttempts);
    expect(await harness.storage.counters.peek(`webauthn-reauthenticate:${userId}`, now)).toBe(2);
    await webauthnRegisterBegin(harness.auth, { userId, sessionId, label: "Second" });
    expect(await harness.storage.counters.peek(`webauthn-register:${userId}`, now)).toBe(2);
  });

  it("STUP-2, STUP-3: without TOTP a passkey without user verification raises the session to hwk alone", async () => {
    const harness = makePasskeyAuth({}, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "plain");
    harness.clock.advance(10 * minute);
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const response = authenticator.authenticate(begun.options, { flags: { uv: false } });
    await reauthenticateWithPasskeyFinish(harness.auth, { userId, sessionId, ceremonyId: begun.ceremonyId, response });
    expect(await provenOf(harness, sessionId)).toEqual({ authTime: harness.clock.now, amr: ["hwk"] });
  });

  it("STUP-3, ASVS 6.4.3: with TOTP on, an assertion without user verification is refused by the check itself (40100, its cause kept), and counts as no use of the passkey", async () => {
    const harness = makePasskeyAuth({}, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "verified");
    await enrolTotpFrom(harness, userId, sessionId);
    const before = await provenOf(harness, sessionId);
    const [stored] = await harness.storage.passkeys.listByUser(userId);
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const response = authenticator.authenticate(begun.options, { flags: { uv: false } });
    const error = await authError(
      reauthenticateWithPasskeyFinish(harness.auth, { userId, sessionId, ceremonyId: begun.ceremonyId, response }),
    );
    expect(error).toMatchObject({ code: ErrorCode.AuthenticationFailed, message: "The passkey was not accepted" });
    expect(error.cause).toBeInstanceOf(Error);
    expect(await harness.storage.passkeys.findById(stored?.id as string)).toEqual(stored);
    expect(await provenOf(harness, sessionId)).toEqual(before);
  });

  it("STUP-3, ASVS 6.4.3: TOTP turned on after the ceremony began: a passkey without user verification proves one factor, and is refused", async () => {
    const harness = makePasskeyAuth({}, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "late-totp");
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    await enrolTotpFrom(harness, userId, sessionId);
    const before = await provenOf(harness, sessionId);
    const response = authenticator.authenticate(begun.options, { flags: { uv: false } });
    const error = await authError(
      reauthenticateWithPasskeyFinish(harness.auth, { userId, sessionId, ceremonyId: begun.ceremonyId, response }),
    );
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    expect((error.cause as Error).message).toBe("The passkey did not verify the user, and the account has a second factor");
    expect(await provenOf(harness, sessionId)).toEqual(before);
  });

  it("STUP-2, WA-4: another user's passkey (its user handle left out), an unknown credential and an assertion that does not verify are 40100, and raise nothing", async () => {
    const harness = makePasskeyAuth({ throttle: generousThrottle }, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "holder");
    const thief = await passkeyUser(harness, "thief");
    const [thiefKey] = await harness.storage.passkeys.listByUser(thief.userId);
    const before = await provenOf(harness, sessionId);
    const attempts: Record<string, (options: Parameters<SoftwareAuthenticator["authenticate"]>[0]) => unknown> = {
      "another user's passkey": (options) =>
        thief.authenticator.authenticate(options, { credentialId: thiefKey?.id as string, userHandle: null }),
      "an unknown credential": (options) => ({ ...authenticator.authenticate(options), id: "AAAA", rawId: "AAAA" }),
      "a wrong challenge": (options) => authenticator.authenticate(options, { challenge: "bm90LXRoZS1jaGFsbGVuZ2U" }),
    };
    for (const [name, assert] of Object.entries(attempts)) {
      const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
      const finish = reauthenticateWithPasskeyFinish(harness.auth, {
        userId,
        sessionId,
        ceremonyId: begun.ceremonyId,
        response: assert(begun.options),
      });
      expect(await outcome(finish), name).toBe(ErrorCode.AuthenticationFailed);
      expect(await provenOf(harness, sessionId), name).toEqual(before);
    }
  });

  it("STUP-2, RL-4: a finish from an address spends that address's attempts; one without an address spends none", async () => {
    const harness = makePasskeyAuth({ throttle: { ...generousThrottle, ip: [{ limit: 2, window: "15m" }] } }, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "travelling");
    const finish = async (ip?: string) => {
      const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
      const response = authenticator.authenticate(begun.options);
      return outcome(
        reauthenticateWithPasskeyFinish(harness.auth, { userId, sessionId, ceremonyId: begun.ceremonyId, response, ip }),
      );
    };
    for (let round = 0; round < 3; round += 1) expect(await finish()).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe(ErrorCode.TooManyAttempts);
    expect(await finish("203.0.113.6")).toBe("fulfilled");
  });
});
