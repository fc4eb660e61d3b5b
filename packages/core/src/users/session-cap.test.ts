import { describe, expect, it, vi } from "vitest";
import type { AuthEvent } from "../events/types.js";
import {
  type Harness,
  addUser,
  enrolTotp,
  generousThrottle,
  makeAuth,
  outcome,
  slowStorage,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { refresh } from "../flows/refresh.js";
import { signedInSession } from "../flows/sessions.test-support.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { memoryStorage } from "../storage/memory.js";
import { sampleSession } from "../testing/conformance/samples.js";
import { resolveSessionConfig } from "./session-config.js";

const minute = 60_000;

/** The `session.revoked` events the cap sent, in order. */
const endedByCap = (events: AuthEvent[]) =>
  events.filter((event) => event.type === "session.revoked" && event.reason === "session_limit");

/** Signs `username` in `times` times, a minute apart; returns the sessions oldest first. */
async function signInTimes(harness: Harness, username: string, times: number) {
  const sessions = [];
  for (let index = 0; index < times; index += 1) {
    sessions.push(await signedInSession(harness, username));
    harness.clock.advance(minute);
  }
  return sessions;
}

const liveSessionIds = async (harness: Harness, userId: string) =>
  (await harness.storage.sessions.listByUser(userId, harness.clock.now, 1000)).map((session) => session.id);

describe("STUP-8, ASVS 7.1.2: sessions.maxPerUser", () => {
  it("STUP-8, ASVS 7.1.2: no cap by default; a whole number from 1 to 1000 sets one; anything else is refused, naming the option", () => {
    expect(resolveSessionConfig(undefined)).toEqual({ keepFullAddress: false, maxPerUser: null });
    expect(resolveSessionConfig({})).toEqual({ keepFullAddress: false, maxPerUser: null });
    expect(resolveSessionConfig({ maxPerUser: undefined })).toEqual({ keepFullAddress: false, maxPerUser: null });
    expect(resolveSessionConfig({ maxPerUser: 1 }).maxPerUser).toBe(1);
    expect(resolveSessionConfig({ maxPerUser: 1000, keepFullAddress: true })).toEqual({
      keepFullAddress: true,
      maxPerUser: 1000,
    });
    for (const bad of [0, -1, 1.5, 1001, Number.NaN, Number.POSITIVE_INFINITY, "5", null, false, true]) {
      expect(() => resolveSessionConfig({ maxPerUser: bad as number }), String(bad)).toThrow(
        `Portcullis configuration: sessions.maxPerUser must be a whole number from 1 to 1000, or left out for no cap; got ${JSON.stringify(bad)}`,
      );
    }
    expect(() => resolveSessionConfig({ maxPerUsers: 3 } as never)).toThrow(/did you mean sessions\.maxPerUser\?/);
  });

  it("STUP-8, ASVS 7.1.2: a sign-in past the cap ends the oldest live session, reported as session.revoked (session_limit); the newer ones go on", async () => {
    const harness = makeAuth({ sessions: { maxPerUser: 2 } });
    const userId = await addUser(harness.auth, "capped");
    const [first, second, third] = await signInTimes(harness, "capped", 3);
    if (!first || !second || !third) throw new Error("three sessions expected");
    expect(await liveSessionIds(harness, userId)).toEqual([third.sessionId, second.sessionId]);
    const endedAt = harness.clock.now - minute;
    expect(endedByCap(harness.events)).toEqual([
      { type: "session.revoked", userId, sessionId: first.sessionId, reason: "session_limit", at: endedAt },
    ]);
    const types = harness.events.map((event) => event.type);
    expect(types.lastIndexOf("login.succeeded")).toBeLessThan(types.lastIndexOf("session.revoked"));
    expect((await harness.storage.sessions.findSession(first.sessionId))?.revokedAt).toBe(endedAt);
    expect(await outcome(verifyAccessToken(harness.auth, { token: first.tokens.accessToken }))).toBe(40101);
    expect(await outcome(refresh(harness.auth, { refreshToken: first.tokens.refreshToken }))).toBe(40101);
    for (const kept of [second, third]) await verifyAccessToken(harness.auth, { token: kept.tokens.accessToken });
    await refresh(harness.auth, { refreshToken: second.tokens.refreshToken });
    expect(endedByCap(harness.events)).toHaveLength(1);
  });

  it("STUP-8, ASVS 7.1.2: at the cap and under it nothing ends; a cap of 1 keeps only the newest sign-in", async () => {
    const harness = makeAuth({ sessions: { maxPerUser: 3 } });
    const userId = await addUser(harness.auth, "at-cap");
    await signInTimes(harness, "at-cap", 3);
    expect(endedByCap(harness.events)).toEqual([]);
    expect(await liveSessionIds(harness, userId)).toHaveLength(3);

    const single = makeAuth({ sessions: { maxPerUser: 1 } });
    const singleId = await addUser(single.auth, "single");
    const sessions = await signInTimes(single, "single", 3);
    expect(await liveSessionIds(single, singleId)).toEqual([sessions[2]?.sessionId]);
    expect(endedByCap(single.events).map((event) => event.type === "session.revoked" && event.sessionId)).toEqual([
      sessions[0]?.sessionId,
      sessions[1]?.sessionId,
    ]);
  });

  it("STUP-8: without a cap a sign-in reads no session list and ends nothing", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "uncapped");
    const list = vi.spyOn(harness.storage.sessions, "listByUser");
    await signInTimes(harness, "uncapped", 4);
    expect(list).not.toHaveBeenCalled();
    list.mockRestore();
    expect(await liveSessionIds(harness, userId)).toHaveLength(4);
    expect(endedByCap(harness.events)).toEqual([]);
  });

  it("STUP-8: revoked and expired sessions and other users' sessions do not count, and are not touched", async () => {
    const harness = makeAuth({ sessions: { maxPerUser: 2 } });
    const userId = await addUser(harness.auth, "counted");
    const otherId = await addUser(harness.auth, "neighbour");
    const now = harness.clock.now;
    const revoked = sampleSession(userId, { createdAt: now - 3 * minute, expiresAt: now + 60 * minute, revokedAt: now - minute });
    const expired = sampleSession(userId, { createdAt: now - 90 * minute, expiresAt: now });
    const neighbours = [1, 2, 3].map((at) =>
      sampleSession(otherId, { createdAt: now - at * minute, expiresAt: now + 60 * minute }),
    );
    for (const session of [revoked, expired, ...neighbours]) await harness.storage.sessions.createSession(session);
    const [first, second] = await signInTimes(harness, "counted", 2);
    expect(endedByCap(harness.events)).toEqual([]);
    expect(await liveSessionIds(harness, userId)).toEqual([second?.sessionId, first?.sessionId]);
    expect(await harness.storage.sessions.findSession(revoked.id)).toEqual(revoked);
    expect(await harness.storage.sessions.findSession(expired.id)).toEqual(expired);
    for (const session of neighbours) expect(await harness.storage.sessions.findSession(session.id)).toEqual(session);
  });

  it("STUP-8: a cap set or lowered later ends, at the next sign-in, every session beyond it, oldest first, each reported once, past one page of the list", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage, sessions: { maxPerUser: 2 } });
    const userId = await addUser(harness.auth, "many-devices");
    const start = harness.clock.now;
    const old = Array.from({ length: 130 }, (_, index) =>
      sampleSession(userId, { createdAt: start - (130 - index) * minute, expiresAt: start + 24 * 60 * minute }),
    );
    for (const session of old) await storage.sessions.createSession(session);
    const list = vi.spyOn(storage.sessions, "listByUser");
    const newest = await signedInSession(harness, "many-devices");
    expect(list.mock.calls).toEqual([
      [userId, start, 102],
      [userId, start, 102],
    ]);
    list.mockRestore();
    expect(await liveSessionIds(harness, userId)).toEqual([newest.sessionId, old[129]?.id]);
    expect(endedByCap(harness.events).map((event) => event.type === "session.revoked" && event.sessionId)).toEqual([
      ...old.slice(29, 129).map((session) => session.id),
      ...old.slice(0, 29).map((session) => session.id),
    ]);
  });

  it("STUP-8: a full page whose sessions another sign-in ended first is left to that one: no second read, so a list that lags behind its writes cannot keep it going", async () => {
    const storage = memoryStorage();
    const harness = makeAuth({ storage, sessions: { maxPerUser: 1 } });
    const userId = await addUser(harness.auth, "raced");
    const start = harness.clock.now;
    const old = Array.from({ length: 101 }, (_, index) =>
      sampleSession(userId, { createdAt: start - (101 - index) * minute, expiresAt: start + 60 * minute }),
    );
    for (const session of old) await storage.sessions.createSession(session);
    // Another sign-in has just ended them all; this store's list has not caught up yet.
    const stale = await storage.sessions.listByUser(userId, start, 1000);
    for (const session of old) await storage.sessions.revokeSession(session.id, start);
    const list = vi.spyOn(storage.sessions, "listByUser").mockImplementation(async (_user, _now, limit) => stale.slice(0, limit));
    await signedInSession(harness, "raced");
    expect(list).toHaveBeenCalledTimes(1);
    list.mockRestore();
    expect(endedByCap(harness.events)).toEqual([]);
  });

  it("STUP-8: every sign-in that starts a session is capped: the second step with a TOTP code or a recovery code too", async () => {
    const harness = makeAuth({ sessions: { maxPerUser: 1 }, throttle: generousThrottle });
    const userId = await addUser(harness.auth, "two-steps");
    const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
    harness.clock.advance(minute);
    const withCode = await signedInSession(harness, "two-steps", { totpSecret: secret });
    harness.clock.advance(minute);
    const pending = await login(harness.auth, { username: "two-steps", password: "correct horse battery staple" });
    if (pending.status !== "totp_required") throw new Error("a second step expected");
    const withRecoveryCode = await useRecoveryCode(harness.auth, {
      tempToken: pending.tempToken,
      recoveryCode: recoveryCodes[0] as string,
    });
    const { sessionId } = await verifyAccessToken(harness.auth, { token: withRecoveryCode.accessToken });
    expect(await liveSessionIds(harness, userId)).toEqual([sessionId]);
    expect(await outcome(verifyAccessToken(harness.auth, { token: withCode.tokens.accessToken }))).toBe(40101);
  });

  it("STUP-8, ASVS 7.1.2: 12 concurrent sign-ins of one account with a cap of 3 leave exactly 3 sessions live, and each ended one is reported once", async () => {
    const harness = makeAuth({ storage: slowStorage(memoryStorage()), sessions: { maxPerUser: 3 }, throttle: generousThrottle });
    const userId = await addUser(harness.auth, "stampede");
    const before = await signInTimes(harness, "stampede", 2);
    const sessions = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const result = await login(harness.auth, { username: "stampede", password: "correct horse battery staple" });
        if (result.status !== "authenticated") throw new Error("a session expected");
        return result.tokens;
      }),
    );
    expect(sessions).toHaveLength(12);
    const live = await liveSessionIds(harness, userId);
    expect(live).toHaveLength(3);
    const ended = endedByCap(harness.events).map((event) => event.type === "session.revoked" && event.sessionId);
    expect(ended).toHaveLength(14 - 3);
    expect(new Set(ended).size).toBe(ended.length);
    for (const session of before) expect(ended).toContain(session.sessionId);
    for (const id of live) expect(ended).not.toContain(id);
  });
});
