import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { sha256 } from "../crypto/random.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { LegacyRefreshToken, SessionRecord, Storage } from "../storage/types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { type Harness, addUser, authError, makeAuth, outcome, signIn, tally } from "./fixtures.test-support.js";
import { setUserDisabled, setUserRoles } from "./manage-users.js";
import { refresh } from "./refresh.js";
import { verifyAccessToken } from "./verify-access-token.js";

const day = 86_400_000;

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

/** The session id an access token names, read without verifying it (it may have expired). */
function sessionIdOf(accessToken: string): string {
  return JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString()).sid as string;
}

/** The session of a token set, as storage holds it. */
async function sessionOf(harness: Harness, accessToken: string) {
  const { sessionId } = await verifyAccessToken(harness.auth, { token: accessToken });
  const session = await harness.storage.sessions.findSession(sessionId);
  if (!session) throw new Error("no session");
  return session;
}

const makeStorage = memoryStorage;

describe("refresh", () => {
  const harness = makeAuth({ storage: makeStorage() });
  const userId = addUser(harness.auth, "refresher");

  it("RT-1: the refresh token names its session, with 256 random bits; storage holds only its SHA-256, in the session", async () => {
    await userId;
    const create = vi.spyOn(harness.storage.sessions, "createSession");
    const tokens = await signIn(harness, "refresher");
    const sessionId = sessionIdOf(tokens.accessToken);
    expect(tokens.refreshToken).toMatch(new RegExp(`^${sessionId}\\.0\\.[A-Za-z0-9_-]{43}$`));
    expect(Buffer.from(tokens.refreshToken.split(".")[2] as string, "base64url")).toHaveLength(32);
    const record = create.mock.calls[0]?.[0] as SessionRecord;
    expect(JSON.stringify(create.mock.calls)).not.toContain(tokens.refreshToken.split(".")[2]);
    expect(await harness.storage.sessions.findSession(sessionId)).toEqual(record);
    expect(record).toMatchObject({
      id: sessionId,
      userId: await userId,
      refreshHash: sha256(tokens.refreshToken),
      refreshGeneration: 0,
      refreshExpiresAt: harness.clock.now + 7 * day,
      expiresAt: harness.clock.now + 30 * day,
    });
    const again = await signIn(harness, "refresher");
    expect(again.refreshToken).not.toBe(tokens.refreshToken);
    create.mockRestore();
  });

  it("RT-2: every use rotates: the new token is the next generation, and the session holds only it", async () => {
    await userId;
    const first = await signIn(harness, "refresher");
    const second = await refresh(harness.auth, { refreshToken: first.refreshToken });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.refreshToken).toMatch(new RegExp(`^${sessionIdOf(first.accessToken)}\\.1\\.[A-Za-z0-9_-]{43}$`));
    expect(await sessionOf(harness, second.accessToken)).toMatchObject({
      refreshHash: sha256(second.refreshToken),
      refreshGeneration: 1,
      lastUsedAt: harness.clock.now,
    });
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.user.id).toBe(await userId);
    const third = await refresh(harness.auth, { refreshToken: second.refreshToken });
    await verifyAccessToken(harness.auth, { token: third.accessToken });
  });

  it("RT-2: a spent token presented again revokes the whole session, newest token included, and emits an event", async () => {
    const id = await userId;
    const other = await signIn(harness, "refresher");
    const first = await signIn(harness, "refresher");
    const second = await refresh(harness.auth, { refreshToken: first.refreshToken });
    harness.events.length = 0;
    const reuse = await authError(refresh(harness.auth, { refreshToken: first.refreshToken }));
    expect(reuse.code).toBe(ErrorCode.InvalidToken);
    const sessionId = (await verifyAccessToken(harness.auth, { token: other.accessToken })).sessionId;
    const reused = harness.events.find((event) => event.type === "refresh_token.reused");
    expect(reused).toMatchObject({ userId: id });
    expect(reused).not.toMatchObject({ sessionId });
    expect(harness.events.find((event) => event.type === "session.revoked")).toMatchObject({
      reason: "refresh_token_reused",
      userId: id,
    });
    expect(await outcome(refresh(harness.auth, { refreshToken: second.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: second.accessToken }))).toBe(40101);
    await refresh(harness.auth, { refreshToken: other.refreshToken });
  });

  it("RT-3: 20 parallel refreshes with one token give exactly one success", async () => {
    await userId;
    const tokens = await signIn(harness, "refresher");
    const results = await tally(Array.from({ length: 20 }, () => refresh(harness.auth, { refreshToken: tokens.refreshToken })));
    expect(results).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [40101, 19],
      ]),
    );
  });

  it("RT-3, RT-2: a loser's reuse detection revoking the session before the winner reads it still leaves exactly one success, whose tokens die with the session", async () => {
    // Reading a session is slow (a database across a network): a loser's revocation lands meanwhile.
    const storage = makeStorage();
    const findSession = storage.sessions.findSession.bind(storage.sessions);
    storage.sessions.findSession = async (id) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return findSession(id);
    };
    const slow = makeAuth({ storage });
    await addUser(slow.auth, "raced");
    const tokens = await signIn(slow, "raced");
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => refresh(slow.auth, { refreshToken: tokens.refreshToken })),
    );
    const won = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    expect(won).toHaveLength(1);
    expect(await outcome(refresh(slow.auth, { refreshToken: (won[0] as TokenSet).refreshToken }))).toBe(ErrorCode.InvalidToken);
  });

  it("RT-1: an unknown, empty or malformed refresh token is refused", async () => {
    expect(await outcome(refresh(harness.auth, { refreshToken: "A".repeat(43) }))).toBe(40101);
    expect(await outcome(refresh(harness.auth, { refreshToken: "" }))).toBe(40001);
    expect(await outcome(refresh(harness.auth, { refreshToken: { $ne: "" } as never }))).toBe(40002);
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    for (const missing of [undefined, null, ""]) {
      expect(await answerOf(refresh(harness.auth, { refreshToken: missing as never }))).toEqual({
        code: ErrorCode.MissingParameter,
        message: "refreshToken is required",
      });
    }
    for (const malformed of [{ $ne: "" }, ["token"], 42]) {
      expect(await answerOf(refresh(harness.auth, { refreshToken: malformed as never }))).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "refreshToken must be a string",
      });
    }
  });

  it("RT-4: refresh never extends the absolute session lifetime", async () => {
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "long-lived");
    const start = own.clock.now;
    let tokens = await signIn(own, "long-lived");
    for (const at of [6, 12, 18, 24]) {
      own.clock.now = start + at * day;
      tokens = await refresh(own.auth, { refreshToken: tokens.refreshToken });
    }
    own.clock.now = start + 30 * day - 1000;
    tokens = await refresh(own.auth, { refreshToken: tokens.refreshToken });
    await verifyAccessToken(own.auth, { token: tokens.accessToken });
    own.clock.now = start + 30 * day;
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(own.auth, { token: tokens.accessToken }))).toBe(40101);
  });

  it("RT-4: a refresh token unused for the idle lifetime (7 days) is refused", async () => {
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "idle");
    const kept = await signIn(own, "idle");
    const dropped = await signIn(own, "idle");
    own.clock.advance(7 * day - 1000);
    const renewed = await refresh(own.auth, { refreshToken: kept.refreshToken });
    own.clock.advance(1000);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: dropped.refreshToken }))).toBe(40101);
    // Refused for the token itself: its session is left as it is, not ended.
    expect(own.events.filter((event) => event.type === "session.revoked")).toEqual([]);
    expect((await own.storage.sessions.findSession(sessionIdOf(dropped.accessToken)))?.revokedAt).toBeNull();
    own.clock.advance(7 * day - 2000);
    await refresh(own.auth, { refreshToken: renewed.refreshToken });
  });

  it("RT-4: disabling the user revokes the session; re-enabling does not bring it back", async () => {
    const own = makeAuth({ storage: makeStorage() });
    const id = await addUser(own.auth, "to-disable");
    const tokens = await signIn(own, "to-disable");
    await setUserDisabled(own.auth, { userId: id, disabled: true });
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(own.auth, { token: tokens.accessToken }))).toBe(40101);
    await setUserDisabled(own.auth, { userId: id, disabled: false });
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    await signIn(own, "to-disable");
  });

  it("TV-2: a refresh token older than the user's token version is refused at once, and its session ends", async () => {
    const own = makeAuth({ storage: makeStorage() });
    const id = await addUser(own.auth, "stale-refresh");
    const tokens = await signIn(own, "stale-refresh");
    await setUserRoles(own.auth, { userId: id, roles: ["admin"] });
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
    expect(own.events.find((event) => event.type === "session.revoked")).toMatchObject({ reason: "token_version_changed" });
    const fresh = await signIn(own, "stale-refresh");
    expect((await refresh(own.auth, { refreshToken: fresh.refreshToken })).user.roles).toEqual(["admin"]);
  });

  it("RT-4: the session's absolute expiry ends it, to the millisecond, even for a refresh token that would live longer", async () => {
    // Issuing caps a refresh token at its session's expiry; a session shortened in storage
    // afterwards (by an operator, or an adapter's own policy) must still end on time.
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "shortened");
    const [early, onTime] = [await signIn(own, "shortened"), await signIn(own, "shortened")];
    const endsAt = own.clock.now + 60_000;
    for (const tokens of [early, onTime]) {
      await own.storage.sessions.createSession({ ...(await sessionOf(own, tokens.accessToken)), expiresAt: endsAt });
    }
    own.clock.now = endsAt - 1;
    await refresh(own.auth, { refreshToken: early.refreshToken });
    own.clock.now = endsAt;
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: onTime.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events.map((event) => event.type)).toEqual([]);
    expect((await own.storage.sessions.findSession(sessionIdOf(onTime.accessToken)))?.revokedAt).toBeNull();
  });

  it("RT-4: a session past its absolute expiry is refused without being reported as ended, even when its user is disabled too", async () => {
    const own = makeAuth({ storage: makeStorage() });
    const id = await addUser(own.auth, "expired-and-disabled");
    const tokens = await signIn(own, "expired-and-disabled");
    const session = await sessionOf(own, tokens.accessToken);
    await own.storage.sessions.createSession({ ...session, expiresAt: own.clock.now + 1000 });
    await own.storage.users.update(id, { disabled: true }, own.clock.now);
    own.clock.advance(1000);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([]);
    expect((await own.storage.sessions.findSession(session.id))?.revokedAt).toBeNull();
  });

  it("RT-2: a token the session never held (made up from its id, another generation, another session's) is refused and ends nothing", async () => {
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "session-owner");
    const owner = await signIn(own, "session-owner");
    const renewed = await refresh(own.auth, { refreshToken: owner.refreshToken });
    const sessionId = sessionIdOf(owner.accessToken);
    const secret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    own.events.length = 0;
    for (const forged of [
      `${sessionId}.0.${secret()}`,
      `${sessionId}.1.${secret()}`,
      `${sessionId}.9.${secret()}`,
      `unknown-session.0.${secret()}`,
    ]) {
      expect(await outcome(refresh(own.auth, { refreshToken: forged }))).toBe(ErrorCode.InvalidToken);
    }
    expect(own.events).toEqual([]);
    await refresh(own.auth, { refreshToken: renewed.refreshToken });
  });

  it("RT-2: a spent token presented again and again ends its session once: one session.revoked, a refresh_token.reused each time", async () => {
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "reused");
    const tokens = await signIn(own, "reused");
    await refresh(own.auth, { refreshToken: tokens.refreshToken });
    own.events.length = 0;
    for (const _ of [1, 2, 3]) {
      expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    }
    expect(own.events.map((event) => event.type)).toEqual([
      "refresh_token.reused",
      "session.revoked",
      "refresh_token.reused",
      "refresh_token.reused",
    ]);
  });

  it("RT-4: a user disabled in storage without a token version change is refused at refresh, its session revoked as user_disabled", async () => {
    const own = makeAuth({ storage: makeStorage() });
    const id = await addUser(own.auth, "disabled-in-storage");
    const tokens = await signIn(own, "disabled-in-storage");
    const session = await sessionOf(own, tokens.accessToken);
    await own.storage.users.update(id, { disabled: true }, own.clock.now);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([
      { type: "session.revoked", userId: id, sessionId: session.id, reason: "user_disabled", at: own.clock.now },
    ]);
    expect((await own.storage.sessions.findSession(session.id))?.revokedAt).toBe(own.clock.now);
  });

  it("TV-2: a refresh for a user gone from storage is refused and its session ends", async () => {
    // Memory storage cannot lose a user: its rotation is refused, and the user read after it finds none, as a store that lost one would.
    const own = makeAuth({ storage: makeStorage() });
    const id = await addUser(own.auth, "deleted");
    const tokens = await signIn(own, "deleted");
    const session = await sessionOf(own, tokens.accessToken);
    const findById = own.storage.users.findById.bind(own.storage.users);
    vi.spyOn(own.storage.sessions, "rotateRefresh").mockResolvedValue({ outcome: "refused" });
    vi.spyOn(own.storage.users, "findById").mockImplementation(async (userId) => (userId === id ? null : findById(userId)));
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([expect.objectContaining({ type: "session.revoked", userId: id, sessionId: session.id })]);
    expect((await own.storage.sessions.findSession(session.id))?.revokedAt).toBe(own.clock.now);
  });
});

describe("refreshReuseInterval (RT-5)", () => {
  const reuseEvents = (harness: Harness) => harness.events.filter((event) => event.type === "refresh_token.reused");

  it("RT-5: within the interval, the token replaced last answers with the session's current refresh token and a new access token; nothing ends", async () => {
    const own = makeAuth({ refreshReuseInterval: "30s" });
    const id = await addUser(own.auth, "two-tabs");
    const first = await signIn(own, "two-tabs");
    const winner = await refresh(own.auth, { refreshToken: first.refreshToken });
    own.clock.advance(29_999);
    own.events.length = 0;
    const late = await refresh(own.auth, { refreshToken: first.refreshToken });
    expect(late.refreshToken).toBe(winner.refreshToken);
    expect(late.user).toEqual(winner.user);
    expect(late.accessToken).not.toBe(winner.accessToken);
    await verifyAccessToken(own.auth, { token: late.accessToken });
    expect(own.events).toEqual([
      expect.objectContaining({ type: "refresh_token.reused", userId: id, withinReuseInterval: true }),
    ]);
    // The shared token carries on, once.
    const next = await refresh(own.auth, { refreshToken: late.refreshToken });
    await verifyAccessToken(own.auth, { token: next.accessToken });
  });

  it("RT-5, RT-3: 20 parallel refreshes with one token all answer, with one and the same new refresh token; the session rotated once", async () => {
    const own = makeAuth({ refreshReuseInterval: 60 });
    await addUser(own.auth, "many-tabs");
    const first = await signIn(own, "many-tabs");
    const answers = await Promise.all(Array.from({ length: 20 }, () => refresh(own.auth, { refreshToken: first.refreshToken })));
    expect(new Set(answers.map((answer) => answer.refreshToken)).size).toBe(1);
    expect((await sessionOf(own, (answers[0] as TokenSet).accessToken)).refreshGeneration).toBe(1);
    expect(own.events.filter((event) => event.type === "token.refreshed")).toHaveLength(1);
    expect(reuseEvents(own)).toHaveLength(19);
  });

  it("RT-2, RT-5: at the interval's end the replaced token is reuse again: the session is revoked", async () => {
    const own = makeAuth({ refreshReuseInterval: "30s" });
    await addUser(own.auth, "too-late");
    const first = await signIn(own, "too-late");
    const winner = await refresh(own.auth, { refreshToken: first.refreshToken });
    own.clock.advance(30_000);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: first.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events.map((event) => event.type)).toEqual(["refresh_token.reused", "session.revoked"]);
    expect(reuseEvents(own)[0]).toMatchObject({ withinReuseInterval: false });
    expect(await outcome(refresh(own.auth, { refreshToken: winner.refreshToken }))).toBe(ErrorCode.InvalidToken);
  });

  it("RT-2, RT-5: a token replaced two rotations ago is reuse even within the interval", async () => {
    const own = makeAuth({ refreshReuseInterval: "60s" });
    await addUser(own.auth, "two-back");
    const first = await signIn(own, "two-back");
    const second = await refresh(own.auth, { refreshToken: first.refreshToken });
    const third = await refresh(own.auth, { refreshToken: second.refreshToken });
    expect(await outcome(refresh(own.auth, { refreshToken: first.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(refresh(own.auth, { refreshToken: third.refreshToken }))).toBe(ErrorCode.InvalidToken);
  });

  it("RT-5, TV-2: within the interval a session that may no longer refresh is not answered: a disabled user's session ends", async () => {
    const own = makeAuth({ refreshReuseInterval: "60s" });
    const id = await addUser(own.auth, "disabled-meanwhile");
    const first = await signIn(own, "disabled-meanwhile");
    await refresh(own.auth, { refreshToken: first.refreshToken });
    await own.storage.users.update(id, { disabled: true }, own.clock.now);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: first.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([expect.objectContaining({ type: "session.revoked", reason: "user_disabled" })]);
  });

  it("RT-5: without the option (default 0) the token replaced a millisecond ago is reuse", async () => {
    const own = makeAuth();
    await addUser(own.auth, "no-interval");
    const first = await signIn(own, "no-interval");
    await refresh(own.auth, { refreshToken: first.refreshToken });
    expect(await outcome(refresh(own.auth, { refreshToken: first.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(reuseEvents(own)).toEqual([expect.objectContaining({ withinReuseInterval: false })]);
  });

  it("RT-3, RT-5: without the option, a loser whose clock is behind the winner's (another instance) is reuse, not answered", async () => {
    const winner = makeAuth();
    const behind = makeAuth({ storage: winner.storage, clock: { now: winner.clock.now - 5, advance: () => 0 } });
    await addUser(winner.auth, "two-instances");
    const first = await signIn(winner, "two-instances");
    await refresh(winner.auth, { refreshToken: first.refreshToken });
    expect(await outcome(refresh(behind.auth, { refreshToken: first.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(behind.events.map((event) => event.type)).toEqual(["refresh_token.reused", "session.revoked"]);
  });

  it("refreshReuseInterval is at most 60 seconds, 0 or a duration", () => {
    expect(() => makeAuth({ refreshReuseInterval: 61 })).toThrow(/refreshReuseInterval must be at most 60 seconds/);
    expect(() => makeAuth({ refreshReuseInterval: "2m" })).toThrow(/refreshReuseInterval must be at most 60 seconds/);
    expect(() => makeAuth({ refreshReuseInterval: -1 })).toThrow(/refreshReuseInterval/);
    expect(makeAuth({ refreshReuseInterval: 0 }).auth.config.refreshReuseInterval).toBe(0);
    expect(makeAuth({ refreshReuseInterval: "1m" }).auth.config.refreshReuseInterval).toBe(60);
  });
});

describe("refresh tokens of an earlier release (kept in a table of their own)", () => {
  /** Memory storage whose sessions also answer findLegacyRefreshToken from `legacy`, as the SQL storage does after migration 5. */
  function upgradedStorage(legacy: Map<string, LegacyRefreshToken>): Storage {
    const storage = memoryStorage();
    return { ...storage, sessions: { ...storage.sessions, findLegacyRefreshToken: async (hash) => legacy.get(hash) ?? null } };
  }

  /** A session of the earlier release: its outstanding token `live` held as its current one (what the migration does), `spent` exchanged before. */
  async function earlierSession(own: Harness, userId: string, legacy: Map<string, LegacyRefreshToken>) {
    const [live, spent] = [randomBytes(32).toString("base64url"), randomBytes(32).toString("base64url")];
    const now = own.clock.now;
    const session: SessionRecord = {
      id: "earlier-session",
      userId,
      tokenVersion: 0,
      amr: ["pwd"],
      authTime: now,
      createdAt: now,
      expiresAt: now + 30 * day,
      revokedAt: null,
      lastUsedAt: now,
      userAgent: null,
      address: null,
      refreshHash: sha256(live),
      refreshGeneration: 0,
      refreshExpiresAt: now + 7 * day,
    };
    await own.storage.sessions.createSession(session);
    const row = { sessionId: session.id, userId, createdAt: now, expiresAt: now + 7 * day };
    legacy.set(sha256(live), { ...row, hash: sha256(live), spentAt: null });
    legacy.set(sha256(spent), { ...row, hash: sha256(spent), spentAt: now });
    return { session, live, spent };
  }

  it("RT-2: the outstanding token refreshes once into the session's chain; presented again, it is reuse", async () => {
    const legacy = new Map<string, LegacyRefreshToken>();
    const own = makeAuth({ storage: upgradedStorage(legacy) });
    const id = await addUser(own.auth, "upgraded");
    const { session, live } = await earlierSession(own, id, legacy);
    const renewed = await refresh(own.auth, { refreshToken: live });
    expect(renewed.refreshToken).toMatch(new RegExp(`^${session.id}\\.1\\.`));
    const again = await refresh(own.auth, { refreshToken: renewed.refreshToken });
    expect(await outcome(refresh(own.auth, { refreshToken: live }))).toBe(ErrorCode.InvalidToken);
    expect(own.events.filter((event) => event.type === "session.revoked")).toEqual([
      expect.objectContaining({ sessionId: session.id, reason: "refresh_token_reused" }),
    ]);
    expect(await outcome(refresh(own.auth, { refreshToken: again.refreshToken }))).toBe(ErrorCode.InvalidToken);
  });

  it("RT-2: a token exchanged before the upgrade whose session is gone is 40101, and nothing is emitted", async () => {
    const legacy = new Map<string, LegacyRefreshToken>();
    const own = makeAuth({ storage: upgradedStorage(legacy) });
    const spent = randomBytes(32).toString("base64url");
    const now = own.clock.now;
    legacy.set(sha256(spent), {
      hash: sha256(spent),
      sessionId: "gone",
      userId: "u",
      createdAt: now,
      expiresAt: now + day,
      spentAt: now,
    });
    expect(await outcome(refresh(own.auth, { refreshToken: spent }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([]);
  });

  it("RT-2: a token exchanged before the upgrade is reuse: the session ends", async () => {
    const legacy = new Map<string, LegacyRefreshToken>();
    const own = makeAuth({ storage: upgradedStorage(legacy) });
    const id = await addUser(own.auth, "upgraded-spent");
    const { session, live, spent } = await earlierSession(own, id, legacy);
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: spent }))).toBe(ErrorCode.InvalidToken);
    expect(own.events.map((event) => event.type)).toEqual(["refresh_token.reused", "session.revoked"]);
    expect((await own.storage.sessions.findSession(session.id))?.revokedAt).toBe(own.clock.now);
    expect(await outcome(refresh(own.auth, { refreshToken: live }))).toBe(ErrorCode.InvalidToken);
  });
});
