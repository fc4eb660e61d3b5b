import { describe, expect, it, vi } from "vitest";
import { addUser, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { signedInSession } from "../flows/sessions.test-support.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { testChannel } from "./revocation-channel.test-support.js";
import { endOtherSessions, revokeSession } from "./sessions.js";

describe("endOtherSessions", () => {
  it("SE-2: ends every live session of the user but the kept one, in one storage call; another user's sessions go on", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "many");
    await addUser(harness.auth, "bystander");
    const [kept, ...others] = await Promise.all([1, 2, 3].map(() => signedInSession(harness, "many")));
    const bystander = await signedInSession(harness, "bystander");
    const revoke = vi.spyOn(harness.storage.sessions, "revokeUserSessions");
    harness.events.length = 0;
    const ended = await endOtherSessions(harness.auth, { userId, keepSessionId: kept?.sessionId, reason: "password_changed" });
    expect(ended).toBe(2);
    expect(revoke.mock.calls).toEqual([[userId, harness.clock.now, kept?.sessionId]]);
    expect(harness.events).toEqual([
      {
        type: "sessions.ended",
        userId,
        keptSessionId: kept?.sessionId,
        count: 2,
        reason: "password_changed",
        at: harness.clock.now,
      },
    ]);
    for (const session of others) {
      expect((await harness.storage.sessions.findSession(session.sessionId))?.revokedAt).toBe(harness.clock.now);
    }
    await verifyAccessToken(harness.auth, { token: kept?.tokens.accessToken as string });
    await verifyAccessToken(harness.auth, { token: bystander.tokens.accessToken });
    expect((await harness.storage.users.findById(userId))?.tokenVersion).toBe(0);
  });

  it("SE-2: without a session to keep, every session ends; when none was live nothing is reported", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "all");
    const sessions = await Promise.all([1, 2].map(() => signedInSession(harness, "all")));
    expect(await endOtherSessions(harness.auth, { userId, reason: "totp_enabled" })).toBe(2);
    for (const { tokens } of sessions) {
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
    }
    expect(harness.events.at(-1)).toMatchObject({ type: "sessions.ended", keptSessionId: null, count: 2 });
    harness.events.length = 0;
    expect(await endOtherSessions(harness.auth, { userId, reason: "totp_enabled" })).toBe(0);
    expect(harness.events).toEqual([]);
  });

  it("SE-3, TV-2: with a token-state cache, an ended session's access token is refused here at once; the kept one and other users' are still served from it", async () => {
    const harness = makeAuth({ tokenStateCacheSeconds: 30 });
    const userId = await addUser(harness.auth, "cached");
    await addUser(harness.auth, "bystander");
    const kept = await signedInSession(harness, "cached");
    const ended = await signedInSession(harness, "cached");
    const bystander = await signedInSession(harness, "bystander");
    await verifyAccessToken(harness.auth, { token: ended.tokens.accessToken });
    await verifyAccessToken(harness.auth, { token: bystander.tokens.accessToken });
    expect(harness.auth.tokenStateCache.has(ended.sessionId)).toBe(true);
    expect(harness.auth.tokenStateCache.has(kept.sessionId)).toBe(true);
    await endOtherSessions(harness.auth, { userId, keepSessionId: kept.sessionId, reason: "passkey_revoked" });
    expect(harness.auth.tokenStateCache.has(kept.sessionId)).toBe(true);
    expect(await outcome(verifyAccessToken(harness.auth, { token: ended.tokens.accessToken }))).toBe(40101);
    const find = vi.spyOn(harness.storage.sessions, "findSession");
    await verifyAccessToken(harness.auth, { token: kept.tokens.accessToken });
    await verifyAccessToken(harness.auth, { token: bystander.tokens.accessToken });
    expect(find).not.toHaveBeenCalled();
  });
});

describe("revokeSession", () => {
  it("SE-3, TV-2, STUP-8: ends one session, reports it once, drops this process's cached state of it and tells the other instances; a second call changes and reports nothing", async () => {
    const channel = testChannel();
    const harness = makeAuth({ tokenStateCacheSeconds: 30, revocationChannel: channel });
    const userId = await addUser(harness.auth, "one-session");
    const ended = await signedInSession(harness, "one-session");
    const kept = await signedInSession(harness, "one-session");
    for (const { tokens } of [ended, kept]) await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    harness.events.length = 0;
    expect(await revokeSession(harness.auth, userId, ended.sessionId, "session_limit")).toBe(true);
    expect(harness.events).toEqual([
      { type: "session.revoked", userId, sessionId: ended.sessionId, reason: "session_limit", at: harness.clock.now },
    ]);
    expect(harness.auth.tokenStateCache.has(ended.sessionId)).toBe(false);
    expect(harness.auth.tokenStateCache.has(kept.sessionId)).toBe(true);
    expect(channel.published.map((message) => JSON.parse(message))).toEqual([
      expect.objectContaining({ kind: "session", sessionId: ended.sessionId }),
    ]);
    expect(await outcome(verifyAccessToken(harness.auth, { token: ended.tokens.accessToken }))).toBe(40101);

    await verifyAccessToken(harness.auth, { token: kept.tokens.accessToken });
    await harness.storage.sessions.revokeSession(kept.sessionId, harness.clock.now);
    expect(harness.auth.tokenStateCache.has(kept.sessionId)).toBe(true);
    expect(await revokeSession(harness.auth, userId, kept.sessionId, "logout")).toBe(false);
    expect(harness.auth.tokenStateCache.has(kept.sessionId)).toBe(false);
    expect(harness.events).toHaveLength(1);
    expect(channel.published).toHaveLength(1);
  });
});
