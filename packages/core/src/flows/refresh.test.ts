import { describe, expect, it, vi } from "vitest";
import { sha256 } from "../crypto/random.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { RefreshTokenRecord } from "../storage/types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import {
  type Harness,
  addUser,
  authError,
  makeAuth,
  outcome,
  signIn,
  stepwiseMemoryStorage,
  tally,
} from "./fixtures.test-support.js";
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

const stores = [
  ["memory storage's rotateRefreshToken", memoryStorage],
  ["a store without rotateRefreshToken (its single operations)", stepwiseMemoryStorage],
] as const;

describe.each(stores)("refresh, through %s", (_, makeStorage) => {
  const harness = makeAuth({ storage: makeStorage() });
  const userId = addUser(harness.auth, "refresher");

  it("RT-1: the refresh token is 256 random bits, base64url; storage holds only its SHA-256", async () => {
    await userId;
    const insert = vi.spyOn(harness.storage.sessions, "insertRefreshToken");
    const tokens = await signIn(harness, "refresher");
    expect(tokens.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(tokens.refreshToken, "base64url")).toHaveLength(32);
    const record = insert.mock.calls[0]?.[0] as RefreshTokenRecord;
    expect(record.hash).toBe(sha256(tokens.refreshToken));
    expect(JSON.stringify(insert.mock.calls)).not.toContain(tokens.refreshToken);
    const session = await harness.storage.sessions.findSession(record.sessionId);
    expect(record).toEqual({
      hash: record.hash,
      sessionId: session?.id,
      userId: await userId,
      createdAt: harness.clock.now,
      expiresAt: harness.clock.now + 7 * day,
      spentAt: null,
    });
    expect(session?.expiresAt).toBe(harness.clock.now + 30 * day);
    const again = await signIn(harness, "refresher");
    expect(again.refreshToken).not.toBe(tokens.refreshToken);
    insert.mockRestore();
  });

  it("RT-2: every use rotates: the new token differs and the old one is spent", async () => {
    await userId;
    const first = await signIn(harness, "refresher");
    const second = await refresh(harness.auth, { refreshToken: first.refreshToken });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
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

  it("ST-2: a refresh token whose record names another user than its session is refused", async () => {
    const own = makeAuth({ storage: makeStorage() });
    await addUser(own.auth, "session-owner");
    const intruderId = await addUser(own.auth, "intruder");
    const owner = await signIn(own, "session-owner");
    const session = await sessionOf(own, owner.accessToken);
    const forged = "F".repeat(43);
    await own.storage.sessions.insertRefreshToken({
      hash: sha256(forged),
      sessionId: session.id,
      userId: intruderId,
      createdAt: own.clock.now,
      expiresAt: own.clock.now + day,
      spentAt: null,
    });
    // The intruder's own sessions would end (another token version): the owner's must not.
    await own.storage.users.incrementTokenVersion(intruderId, own.clock.now);
    expect(await outcome(refresh(own.auth, { refreshToken: forged }))).toBe(ErrorCode.InvalidToken);
    expect(own.events.filter((event) => event.type === "token.refreshed" || event.type === "session.revoked")).toEqual([]);
    await refresh(own.auth, { refreshToken: owner.refreshToken });
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
    // Memory storage cannot lose a user; a store without rotateRefreshToken reads it through findById.
    const own = makeAuth({ storage: stepwiseMemoryStorage() });
    const id = await addUser(own.auth, "deleted");
    const tokens = await signIn(own, "deleted");
    const session = await sessionOf(own, tokens.accessToken);
    const findById = own.storage.users.findById.bind(own.storage.users);
    vi.spyOn(own.storage.users, "findById").mockImplementation(async (userId) => (userId === id ? null : findById(userId)));
    own.events.length = 0;
    expect(await outcome(refresh(own.auth, { refreshToken: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(own.events).toEqual([expect.objectContaining({ type: "session.revoked", userId: id, sessionId: session.id })]);
    expect((await own.storage.sessions.findSession(session.id))?.revokedAt).toBe(own.clock.now);
  });
});
