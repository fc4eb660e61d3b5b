import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import type { SessionRecord } from "../storage/types.js";
import { addUser, authError, enrolTotp, goodPassword, makeAuth, nextCode, outcome } from "./fixtures.test-support.js";
import { login } from "./login.js";
import { setUserDisabled } from "./manage-users.js";
import { refresh } from "./refresh.js";
import { endOtherSessions, endSession, listSessions, sessionListLimit } from "./sessions.js";
import { signedInSession } from "./sessions.test-support.js";
import { verifyAccessToken } from "./verify-access-token.js";

const minute = 60_000;
const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const confirm = {
  code: ErrorCode.MissingParameter,
  message: "Confirm it is you: send the current password, or re-authenticate first",
};

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

/** Signs in with a password from a client; returns the tokens and the session id. */
async function signInFrom(harness: ReturnType<typeof makeAuth>, username: string, client: { ip?: string; userAgent?: string }) {
  const result = await login(harness.auth, { username, password: goodPassword, ...client });
  if (result.status !== "authenticated") throw new Error(result.status);
  const { sessionId } = await verifyAccessToken(harness.auth, { token: result.tokens.accessToken });
  return { tokens: result.tokens, sessionId };
}

describe("listSessions", () => {
  it("SE-1: the user's live sessions, newest first, this one marked, with the user agent and the network they were used from; never a token", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "lister");
    await addUser(harness.auth, "stranger");
    const laptop = await signInFrom(harness, "lister", { ip: "203.0.113.77", userAgent: firefox });
    harness.clock.advance(minute);
    const phone = await signInFrom(harness, "lister", { ip: "2001:db8:1:2:3::4", userAgent: "Phone\u0000 app\u202e 1.0" });
    harness.clock.advance(minute);
    const ended = await signInFrom(harness, "lister", {});
    await endSession(harness.auth, { userId, sessionId: ended.sessionId, id: ended.sessionId });
    await signInFrom(harness, "stranger", { ip: "198.51.100.1" });
    const listed = await listSessions(harness.auth, { userId, sessionId: phone.sessionId });
    const lifetime = harness.auth.config.ttl.refresh * 1000;
    expect(listed).toEqual([
      {
        id: phone.sessionId,
        current: true,
        createdAt: harness.clock.now - minute,
        lastUsedAt: harness.clock.now - minute,
        expiresAt: harness.clock.now - minute + lifetime,
        amr: ["pwd"],
        userAgent: "Phone app 1.0",
        address: "2001:db8:1::/48",
        impersonatedBy: null,
      },
      {
        id: laptop.sessionId,
        current: false,
        createdAt: harness.clock.now - 2 * minute,
        lastUsedAt: harness.clock.now - 2 * minute,
        expiresAt: harness.clock.now - 2 * minute + lifetime,
        amr: ["pwd"],
        userAgent: firefox,
        address: "203.0.113.0/24",
        impersonatedBy: null,
      },
    ]);
    const text = JSON.stringify(listed);
    for (const token of [laptop.tokens.accessToken, laptop.tokens.refreshToken, phone.tokens.refreshToken]) {
      expect(text).not.toContain(token);
    }
    expect((await listSessions(harness.auth, { userId })).map((session) => session.current)).toEqual([false, false]);
  });

  it("SE-1: a refresh records when and where the session was last used; access-token checks write nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "mover");
    const { tokens, sessionId } = await signInFrom(harness, "mover", { ip: "192.0.2.10", userAgent: "First/1" });
    const writes = (["rotateRefresh", "createSession", "revokeSession"] as const).map((name) =>
      vi.spyOn(harness.storage.sessions, name),
    );
    harness.clock.advance(10 * minute);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    for (const write of writes) expect(write).not.toHaveBeenCalled();
    expect((await listSessions(harness.auth, { userId }))[0]?.lastUsedAt).toBe(harness.clock.now - 10 * minute);
    await refresh(harness.auth, { refreshToken: tokens.refreshToken, ip: "198.51.100.200", userAgent: "Second/2" });
    expect(await listSessions(harness.auth, { userId, sessionId })).toEqual([
      expect.objectContaining({
        id: sessionId,
        current: true,
        createdAt: harness.clock.now - 10 * minute,
        lastUsedAt: harness.clock.now,
        userAgent: "Second/2",
        address: "198.51.100.0/24",
        impersonatedBy: null,
      }),
    ]);
  });

  it("SE-1: with sessions.keepFullAddress the whole address is kept", async () => {
    const harness = makeAuth({ sessions: { keepFullAddress: true } });
    const userId = await addUser(harness.auth, "whole");
    await signInFrom(harness, "whole", { ip: "203.0.113.77" });
    expect((await listSessions(harness.auth, { userId }))[0]?.address).toBe("203.0.113.77");
  });

  it(`SE-1: at most ${sessionListLimit} sessions are listed, the newest`, async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "hoarder");
    const now = harness.clock.now;
    for (let index = 0; index <= sessionListLimit; index += 1) {
      const session: SessionRecord = {
        id: `session-${String(index).padStart(3, "0")}`,
        userId,
        tokenVersion: 0,
        amr: ["pwd"],
        authTime: now - index * minute,
        createdAt: now - index * minute,
        expiresAt: now + 60 * minute,
        revokedAt: null,
        lastUsedAt: now - index * minute,
        refreshHash: null,
        refreshGeneration: 0,
        refreshExpiresAt: now + 60 * minute,
        userAgent: null,
        address: null,
      };
      await harness.storage.sessions.createSession(session);
    }
    const listed = await listSessions(harness.auth, { userId });
    expect(listed).toHaveLength(sessionListLimit);
    expect(listed[0]?.id).toBe("session-000");
    expect(listed.at(-1)?.id).toBe(`session-0${sessionListLimit - 1}`);
  });

  it("a user gone or disabled is 40101; a missing or non-string user id is 40001 or 40002", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "leaving");
    await setUserDisabled(harness.auth, { userId, disabled: true });
    expect(await outcome(listSessions(harness.auth, { userId }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(listSessions(harness.auth, { userId: "nobody" }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(listSessions(harness.auth, {} as never))).toBe(ErrorCode.MissingParameter);
    expect(await outcome(listSessions(harness.auth, { userId: { $ne: "" } } as never))).toBe(ErrorCode.MalformedParameter);
  });
});

describe("endSession", () => {
  it("SE-1, SE-3: ends one of the user's sessions: its refresh token is refused at once, its access token at the next check; the others go on", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "ender");
    const here = await signedInSession(harness, "ender");
    const there = await signedInSession(harness, "ender");
    harness.events.length = 0;
    expect(await endSession(harness.auth, { userId, sessionId: here.sessionId, id: there.sessionId })).toEqual({ ended: true });
    expect(harness.events).toEqual([
      { type: "session.revoked", userId, sessionId: there.sessionId, reason: "ended_by_user", at: harness.clock.now },
    ]);
    expect(await outcome(refresh(harness.auth, { refreshToken: there.tokens.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: there.tokens.accessToken }))).toBe(40101);
    await verifyAccessToken(harness.auth, { token: here.tokens.accessToken });
    await refresh(harness.auth, { refreshToken: here.tokens.refreshToken });
    expect((await listSessions(harness.auth, { userId })).map((session) => session.id)).toEqual([here.sessionId]);
  });

  it("SE-1: another user's session, an unknown id and a session that already ended are the same 40400, and end nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "owner");
    await addUser(harness.auth, "neighbour");
    const mine = await signedInSession(harness, "owner");
    const theirs = await signedInSession(harness, "neighbour");
    const gone = await signedInSession(harness, "owner");
    await endSession(harness.auth, { userId, sessionId: mine.sessionId, id: gone.sessionId });
    const notFound = { code: ErrorCode.NotFound, message: "No such session" };
    for (const id of [theirs.sessionId, "no-such-session", gone.sessionId]) {
      expect(await answerOf(endSession(harness.auth, { userId, sessionId: mine.sessionId, id })), id).toEqual(notFound);
    }
    await verifyAccessToken(harness.auth, { token: theirs.tokens.accessToken });
    await refresh(harness.auth, { refreshToken: theirs.tokens.refreshToken });
  });

  it("SE-5: a session past its absolute lifetime is 40400 too", async () => {
    const harness = makeAuth({ ttl: { refresh: "1h", refreshIdle: "1h" } });
    const userId = await addUser(harness.auth, "expiring");
    const old = await signedInSession(harness, "expiring");
    harness.clock.advance(61 * minute);
    const fresh = await signedInSession(harness, "expiring");
    expect(await outcome(endSession(harness.auth, { userId, sessionId: fresh.sessionId, id: old.sessionId }))).toBe(40400);
  });

  it("SE-5: a session's absolute lifetime ends at its very millisecond: ended the one before, 40400 at it", async () => {
    const harness = makeAuth({ ttl: { refresh: "1h", refreshIdle: "1h" } });
    const userId = await addUser(harness.auth, "edge");
    const first = await signedInSession(harness, "edge");
    const second = await signedInSession(harness, "edge");
    harness.clock.advance(60 * minute - 1);
    const fresh = await signedInSession(harness, "edge");
    expect(await endSession(harness.auth, { userId, sessionId: fresh.sessionId, id: first.sessionId })).toEqual({ ended: true });
    harness.clock.advance(1);
    expect(await outcome(endSession(harness.auth, { userId, sessionId: fresh.sessionId, id: second.sessionId }))).toBe(40400);
  });

  it("SE-1: ending the request's own session is a sign-out", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "leaver");
    const { tokens, sessionId } = await signedInSession(harness, "leaver");
    await endSession(harness.auth, { userId, sessionId, id: sessionId });
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
    expect(await outcome(refresh(harness.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
  });

  it("SE-1, STUP-3: after the recent-sign-in window the password and a TOTP code are asked first; a wrong one is refused and ends nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "proving");
    const { secret } = await enrolTotp(harness.auth, userId);
    const here = await signedInSession(harness, "proving", { totpSecret: secret });
    harness.clock.advance(6 * minute);
    const there = await signedInSession(harness, "proving", { totpSecret: secret });
    const [sessionId, id] = [here.sessionId, there.sessionId];
    expect(await answerOf(endSession(harness.auth, { userId, sessionId, id }))).toEqual({
      code: ErrorCode.MissingParameter,
      message: "Confirm it is you: send the current password and a current TOTP code, or re-authenticate first",
    });
    const code = () => nextCode(harness, secret);
    const wrongPassword = { userId, sessionId, id, password: "not the password", totpCode: code() };
    expect(await outcome(endSession(harness.auth, wrongPassword))).toBe(40100);
    expect(await outcome(endSession(harness.auth, { userId, sessionId, id, password: goodPassword, totpCode: "000000" }))).toBe(
      40103,
    );
    await verifyAccessToken(harness.auth, { token: there.tokens.accessToken });
    expect(await endSession(harness.auth, { userId, sessionId, id, password: goodPassword, totpCode: code() })).toEqual({
      ended: true,
    });
    expect(await outcome(verifyAccessToken(harness.auth, { token: there.tokens.accessToken }))).toBe(40101);
  });

  it("PW-5: a missing id is 40001, a non-string one 40002, and neither reaches storage", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "typed");
    const { sessionId } = await signedInSession(harness, "typed");
    const find = vi.spyOn(harness.storage.sessions, "findSession");
    expect(await answerOf(endSession(harness.auth, { userId, sessionId } as never))).toEqual({
      code: ErrorCode.MissingParameter,
      message: "id is required",
    });
    expect(await answerOf(endSession(harness.auth, { userId, sessionId, id: ["x"] } as never))).toEqual({
      code: ErrorCode.MalformedParameter,
      message: "id must be a string",
    });
    expect(find).not.toHaveBeenCalled();
  });
});

describe("endOtherSessions", () => {
  it("SE-2, SE-3: ends every other session of the user and keeps this one, its tokens working; the token version stays", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "tidy");
    const here = await signedInSession(harness, "tidy");
    const others = [await signedInSession(harness, "tidy"), await signedInSession(harness, "tidy")];
    harness.events.length = 0;
    expect(await endOtherSessions(harness.auth, { userId, sessionId: here.sessionId })).toEqual({ ended: 2 });
    expect(harness.events).toEqual([
      {
        type: "sessions.ended",
        userId,
        keptSessionId: here.sessionId,
        count: 2,
        reason: "ended_by_user",
        at: harness.clock.now,
      },
    ]);
    for (const other of others) {
      expect(await outcome(verifyAccessToken(harness.auth, { token: other.tokens.accessToken }))).toBe(40101);
      expect(await outcome(refresh(harness.auth, { refreshToken: other.tokens.refreshToken }))).toBe(40101);
    }
    await verifyAccessToken(harness.auth, { token: here.tokens.accessToken });
    await refresh(harness.auth, { refreshToken: here.tokens.refreshToken });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(0);
    expect(await endOtherSessions(harness.auth, { userId, sessionId: here.sessionId })).toEqual({ ended: 0 });
  });

  it("SE-2: after the recent-sign-in window the password is asked first; a wrong one ends nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "careful");
    const here = await signedInSession(harness, "careful");
    const there = await signedInSession(harness, "careful");
    harness.clock.advance(6 * minute);
    expect(await answerOf(endOtherSessions(harness.auth, { userId, sessionId: here.sessionId }))).toEqual(confirm);
    const wrong = { userId, sessionId: here.sessionId, password: "not the password" };
    expect(await outcome(endOtherSessions(harness.auth, wrong))).toBe(40100);
    await verifyAccessToken(harness.auth, { token: there.tokens.accessToken });
    const proven = { userId, sessionId: here.sessionId, password: goodPassword };
    expect(await endOtherSessions(harness.auth, proven)).toEqual({ ended: 1 });
  });
});
