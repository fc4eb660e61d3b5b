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
  slowStorage,
  startTime,
  tally,
  tokensOf,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { makeAuthenticator, makePasskeyAuth, registerPasskey } from "../flows/passkeys.test-support.js";
import { refresh } from "../flows/refresh.js";
import { beginTotpSetup, enableTotp } from "../flows/totp-enrolment.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { webauthnRegisterBegin } from "../flows/webauthn-register.js";
import { memoryStorage } from "../storage/memory.js";
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

/** What the stored session says of its sign-in, and whether it ended. */
async function provenOf(harness: Harness, sessionId: string) {
  const session = await harness.storage.sessions.findSession(sessionId);
  return { authTime: session?.authTime, amr: session?.amr, revokedAt: session?.revokedAt };
}

/** A passkey user signed in with the password, passkeys' user verification `"preferred"`. */
async function passkeyUser(harness: Harness, username: string, authenticator: SoftwareAuthenticator = makeAuthenticator()) {
  const userId = await addUser(harness.auth, username);
  await registerPasskey(harness.auth, userId, authenticator);
  const sessionId = await sessionOf(harness, await signIn(harness, username));
  return { userId, sessionId, authenticator };
}

const preferred = { userVerification: "preferred" as const, registrationCeremonyLimit: 20 };

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Signs `username` (made now, with the password) in from an old browser: the user id, the tokens and the session. */
async function signedInFromOldBrowser(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const result = await login(harness.auth, { username, password: goodPassword, userAgent: "Old browser", ip: "198.51.100.7" });
  if (result.status !== "authenticated") throw new Error(result.status);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
  return { userId, tokens: result.tokens, sessionId };
}

describe("reauthenticate (STUP-2, ASVS 7.5.3)", () => {
  it("STUP-2, ASVS 7.5.3: the password re-authenticates: the new session's tokens carry auth_time now and amr pwd alone, stored and announced; the old session ended", async () => {
    const harness = makeAuth();
    const { userId, sessionId } = await signedIn(harness, "riley");
    harness.clock.advance(10 * minute);
    const raised = await reauthenticate(harness.auth, { userId, sessionId, password: goodPassword, ip: "203.0.113.9" });
    expect(raised.tokenType).toBe("Bearer");
    expect(raised.expiresIn).toBe(harness.auth.config.ttl.access);
    expect(raised.user.id).toBe(userId);
    const access = await verifyAccessToken(harness.auth, { token: raised.accessToken });
    expect(access).toMatchObject({ authTime: Math.floor(harness.clock.now / 1000), amr: ["pwd"] });
    expect(access.sessionId).not.toBe(sessionId);
    expect(await provenOf(harness, access.sessionId)).toEqual({ authTime: harness.clock.now, amr: ["pwd"], revokedAt: null });
    expect((await provenOf(harness, sessionId)).revokedAt).toBe(harness.clock.now);
    expect(harness.events.filter((event) => event.type === "session.reauthenticated")).toEqual([
      {
        type: "session.reauthenticated",
        userId,
        sessionId: access.sessionId,
        replacedSessionId: sessionId,
        amr: ["pwd"],
        at: harness.clock.now,
        ip: "203.0.113.9",
      },
    ]);
  });

  it("STUP-2: a session that is not the user's live one at its token version is not re-authenticated (40101): it stays as it was, and no session begins", async () => {
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
      const sessions = await harness.storage.sessions.listByUser(userId, startTime, 10);
      expect(await outcome(reauthenticate(harness.auth, { userId, sessionId, password: goodPassword })), name).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await provenOf(harness, sessionId), name).toEqual(before);
      expect(await harness.storage.sessions.listByUser(userId, startTime, 10), name).toEqual(sessions);
      expect(harness.events.some((event) => event.type === "session.reauthenticated" || event.type === "session.revoked")).toBe(
        false,
      );
    }
  });

  it("STUP-2: a session revoked between its check and the write (the store's conditional write refuses) is 40101: no event, and no session begins", async () => {
    const harness = makeAuth();
    const { userId, sessionId } = await signedIn(harness, "racer");
    const createSession = vi.spyOn(harness.storage.sessions, "createSession");
    vi.spyOn(harness.storage.sessions, "revokeSession").mockResolvedValueOnce(false);
    expect(await outcome(reauthenticate(harness.auth, { userId, sessionId, password: goodPassword }))).toBe(
      ErrorCode.InvalidToken,
    );
    expect(createSession).not.toHaveBeenCalled();
    expect(harness.events.some((event) => event.type === "session.reauthenticated" || event.type === "session.revoked")).toBe(
      false,
    );
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
    const renewed = await reauthenticate(harness.auth, { userId, sessionId, password: "dana directory password" });
    expect(await provenOf(harness, await sessionOf(harness, renewed))).toEqual({
      authTime: harness.clock.now,
      amr: ["pwd"],
      revokedAt: null,
    });
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

  it("STUP-2, STUP-3: without TOTP a passkey without user verification re-authenticates to hwk alone", async () => {
    const harness = makePasskeyAuth({}, preferred);
    const { userId, sessionId, authenticator } = await passkeyUser(harness, "plain");
    harness.clock.advance(10 * minute);
    const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
    const response = authenticator.authenticate(begun.options, { flags: { uv: false } });
    const renewed = await reauthenticateWithPasskeyFinish(harness.auth, {
      userId,
      sessionId,
      ceremonyId: begun.ceremonyId,
      response,
      ip: "203.0.113.44",
      userAgent: "Passkey Browser/2",
    });
    const renewedId = await sessionOf(harness, renewed);
    expect(await provenOf(harness, renewedId)).toEqual({
      authTime: harness.clock.now,
      amr: ["hwk"],
      revokedAt: null,
    });
    // The new session records the request that began it, as a sign-in's does.
    expect(await harness.storage.sessions.findSession(renewedId)).toMatchObject({
      userAgent: "Passkey Browser/2",
      address: expect.stringMatching(/^203\.0\.113\./),
    });
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
    const { userId, sessionId: first, authenticator } = await passkeyUser(harness, "travelling");
    // Each re-authentication ends the session it proves: the next goes on from the new one.
    let sessionId = first;
    const finish = async (ip?: string) => {
      const begun = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId });
      const response = authenticator.authenticate(begun.options);
      const finished = reauthenticateWithPasskeyFinish(harness.auth, {
        userId,
        sessionId,
        ceremonyId: begun.ceremonyId,
        response,
        ip,
      });
      const result = await outcome(finished);
      if (result === "fulfilled") sessionId = await sessionOf(harness, await finished);
      return result;
    };
    for (let round = 0; round < 3; round += 1) expect(await finish()).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe("fulfilled");
    expect(await finish("203.0.113.5")).toBe(ErrorCode.TooManyAttempts);
    expect(await finish("203.0.113.6")).toBe("fulfilled");
  });
});

describe("STUP-2, ASVS 7.2.4: a re-authentication begins a new session in place of the one it raises", () => {
  it("STUP-2, ASVS 7.2.4: a re-authentication ends the session it raises and answers the tokens of a new one: the old refresh token and access tokens are refused, the new ones carry the proof", async () => {
    const harness = makeAuth();
    const { userId, tokens, sessionId } = await signedInFromOldBrowser(harness, "alice");
    const rotated = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    const before = await harness.storage.sessions.findSession(sessionId);
    harness.clock.advance(10 * minute);
    harness.events.length = 0;

    const renewed = await reauthenticate(harness.auth, {
      userId,
      sessionId,
      password: goodPassword,
      ip: "203.0.113.9",
      userAgent: "New browser",
    });

    expect(Object.keys(renewed).sort()).toEqual(["accessToken", "expiresIn", "refreshToken", "tokenType", "user"]);
    const access = await verifyAccessToken(harness.auth, { token: renewed.accessToken });
    expect(access.sessionId).not.toBe(sessionId);
    expect(access).toMatchObject({ userId, authTime: seconds(harness.clock.now), amr: ["pwd"] });
    for (const ended of [tokens.accessToken, rotated.accessToken]) {
      expect(await outcome(verifyAccessToken(harness.auth, { token: ended }))).toBe(40101);
    }
    expect(await outcome(refresh(harness.auth, { refreshToken: rotated.refreshToken }))).toBe(40101);
    expect(await harness.storage.sessions.findSession(sessionId)).toMatchObject({ revokedAt: harness.clock.now });
    expect(await harness.storage.sessions.findSession(access.sessionId)).toEqual({
      id: access.sessionId,
      userId,
      tokenVersion: before?.tokenVersion,
      amr: ["pwd"],
      authTime: harness.clock.now,
      createdAt: harness.clock.now,
      expiresAt: before?.expiresAt,
      revokedAt: null,
      lastUsedAt: harness.clock.now,
      userAgent: "New browser",
      address: "203.0.113.0/24",
      refreshHash: expect.any(String),
      refreshGeneration: 0,
      refreshExpiresAt: harness.clock.now + 7 * 86_400_000,
      activeOrgId: null,
      impersonatorId: null,
    });
    expect(harness.events).toEqual([
      expect.objectContaining({ type: "session.revoked", userId, sessionId, reason: "reauthenticated" }),
      {
        type: "session.reauthenticated",
        userId,
        sessionId: access.sessionId,
        replacedSessionId: sessionId,
        amr: ["pwd"],
        at: harness.clock.now,
        ip: "203.0.113.9",
      },
    ]);
    const next = await refresh(harness.auth, { refreshToken: renewed.refreshToken });
    expect(await verifyAccessToken(harness.auth, { token: next.accessToken })).toMatchObject({
      sessionId: access.sessionId,
      authTime: seconds(harness.clock.now),
      amr: ["pwd"],
    });
  });

  it("STUP-2, ASVS 7.2.4: a stolen copy of the old refresh token is refused (40101) after a re-authentication and ends nothing: the new session lives on", async () => {
    const harness = makeAuth();
    const { userId, tokens, sessionId } = await signedInFromOldBrowser(harness, "bob");
    // The hijacker copied the refresh token the owner still holds, and an older one the owner spent.
    const spentCopy = tokens.refreshToken;
    const owner = await refresh(harness.auth, { refreshToken: tokens.refreshToken });
    const liveCopy = owner.refreshToken;
    harness.clock.advance(10 * minute);
    const renewed = await reauthenticate(harness.auth, { userId, sessionId, password: goodPassword });
    const renewedSession = await sessionOf(harness, renewed);

    for (const copy of [liveCopy, spentCopy, liveCopy]) {
      expect(await outcome(refresh(harness.auth, { refreshToken: copy }))).toBe(40101);
    }
    expect(await sessionOf(harness, renewed)).toBe(renewedSession);
    expect(await harness.storage.sessions.findSession(renewedSession)).toMatchObject({ revokedAt: null });
    const next = await refresh(harness.auth, { refreshToken: renewed.refreshToken });
    expect(await sessionOf(harness, next)).toBe(renewedSession);
    expect(harness.events.filter((event) => event.type === "session.revoked").map((event) => event.sessionId)).toEqual([
      sessionId,
    ]);
  });

  it("RT-4, STUP-2, ASVS 7.2.4: the new session keeps the old one's absolute expiry: a re-authentication never extends a session's lifetime", async () => {
    const harness = makeAuth({ ttl: { refresh: "2h", refreshIdle: "2h" } });
    const { userId, sessionId } = await signedInFromOldBrowser(harness, "carol");
    const expiresAt = startTime + 2 * 60 * minute;
    harness.clock.advance(90 * minute);
    const renewed = await reauthenticate(harness.auth, { userId, sessionId, password: goodPassword });
    const renewedSession = await sessionOf(harness, renewed);
    expect(renewedSession).not.toBe(sessionId);
    expect(await harness.storage.sessions.findSession(renewedSession)).toMatchObject({ expiresAt, createdAt: harness.clock.now });
    harness.clock.advance(29 * minute);
    const refreshed = await refresh(harness.auth, { refreshToken: renewed.refreshToken });
    harness.clock.advance(2 * minute);
    expect(await outcome(refresh(harness.auth, { refreshToken: refreshed.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: refreshed.accessToken }))).toBe(40101);
  });

  it("STUP-2, ASVS 7.2.4: of two concurrent re-authentications of one session exactly one answers tokens, the other 40101; the user is left with one live session, the new one", async () => {
    const harness = makeAuth({ storage: slowStorage(memoryStorage()) });
    const { userId, sessionId } = await signedInFromOldBrowser(harness, "dave");
    harness.clock.advance(10 * minute);
    const attempts = [0, 1].map(() => reauthenticate(harness.auth, { userId, sessionId, password: goodPassword }));
    expect(await tally(attempts)).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [40101, 1],
      ]),
    );
    const renewed = (await Promise.allSettled(attempts)).flatMap((settled) =>
      settled.status === "fulfilled" ? [settled.value] : [],
    )[0] as TokenSet;
    const live = await harness.storage.sessions.listByUser(userId, harness.clock.now, 10);
    expect(live.map((session) => session.id)).toEqual([await sessionOf(harness, renewed)]);
    expect(harness.events.filter((event) => event.type === "session.reauthenticated")).toHaveLength(1);
  });

  it("STUP-2, ASVS 7.2.4: a passkey re-authentication, too, ends the session and answers the tokens of a new one (hwk, user)", async () => {
    const harness = makePasskeyAuth();
    const { userId, tokens, sessionId } = await signedInFromOldBrowser(harness, "heidi");
    const authenticator = makeAuthenticator();
    await registerPasskey(harness.auth, userId, authenticator);
    // Registering raised the token version: the session of a sign-in after it is the one raised.
    const fresh = await login(harness.auth, { username: "heidi", password: goodPassword });
    if (fresh.status !== "authenticated") throw new Error(fresh.status);
    const current = await sessionOf(harness, fresh.tokens);
    expect(current).not.toBe(sessionId);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
    harness.clock.advance(10 * minute);
    const { ceremonyId, options } = await reauthenticateWithPasskeyBegin(harness.auth, { userId, sessionId: current });
    const renewed = await reauthenticateWithPasskeyFinish(harness.auth, {
      userId,
      sessionId: current,
      ceremonyId,
      response: authenticator.authenticate(options),
    });
    const access = await verifyAccessToken(harness.auth, { token: renewed.accessToken });
    expect(access).toMatchObject({ userId, authTime: seconds(harness.clock.now), amr: ["hwk", "user", "mfa"] });
    expect(access.sessionId).not.toBe(current);
    expect(await outcome(verifyAccessToken(harness.auth, { token: fresh.tokens.accessToken }))).toBe(40101);
    expect(await outcome(refresh(harness.auth, { refreshToken: fresh.tokens.refreshToken }))).toBe(40101);
    expect(await sessionOf(harness, await refresh(harness.auth, { refreshToken: renewed.refreshToken }))).toBe(access.sessionId);
  });
});
