import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import { signAccessToken } from "../tokens/access-token.js";
import { changePassword } from "./change-password.js";
import {
  type Harness,
  addUser,
  authError,
  codeAt,
  enrolTotp,
  goodPassword,
  makeAuth,
  outcome,
  signIn,
  stepwiseMemoryStorage,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { logout } from "./logout.js";
import { setUserRoles, signOutEverywhere } from "./manage-users.js";
import { refresh } from "./refresh.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

/** Two instances sharing storage and clock, as two processes of one service would. */
function twoInstances(tokenStateCacheSeconds: number): [Harness, Harness] {
  const first = makeAuth({ tokenStateCacheSeconds });
  return [first, makeAuth({ tokenStateCacheSeconds, storage: first.storage, clock: first.clock })];
}

/** The business code and message a rejected promise carries. */
async function answerOf(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const { code, message } = await authError(promise);
  return { code, message };
}

/** Makes storage answer as after one user's row was deleted: no such user, by id or as a session's. */
function forgetUser(harness: Harness, userId: string): void {
  const { users, sessions } = harness.storage;
  const findById = users.findById.bind(users);
  vi.spyOn(users, "findById").mockImplementation(async (id) => (id === userId ? null : findById(id)));
  const findTokenState = sessions.findTokenState?.bind(sessions);
  if (findTokenState === undefined) return;
  vi.spyOn(sessions, "findTokenState").mockImplementation(async (id) => {
    const state = await findTokenState(id);
    return state?.session.userId === userId ? { ...state, user: null } : state;
  });
}

describe("verifyAccessToken", () => {
  it("a live access token gives the user, session, roles, amr and token version", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "verified", goodPassword, ["reader"]);
    const tokens = await signIn(harness, "verified");
    const context = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    expect(context).toMatchObject({ userId, roles: ["reader"], amr: ["pwd"], tokenVersion: 0 });
    expect(context.claims.exp - context.claims.iat).toBe(900);
    expect(await harness.storage.sessions.findSession(context.sessionId)).toMatchObject({ userId, revokedAt: null });
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const harness = makeAuth();
    for (const missing of [undefined, null, ""]) {
      expect(await answerOf(verifyAccessToken(harness.auth, { token: missing as never }))).toEqual({
        code: ErrorCode.MissingParameter,
        message: "token is required",
      });
    }
    for (const malformed of [{ $ne: "" }, ["token"], 42]) {
      expect(await answerOf(verifyAccessToken(harness.auth, { token: malformed as never }))).toEqual({
        code: ErrorCode.MalformedParameter,
        message: "token must be a string",
      });
    }
  });

  it("AT-3: the access token stops working after its lifetime (15 min) and the tolerance", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "expiring");
    const tokens = await signIn(harness, "expiring");
    harness.clock.advance(900_000 + 4_000);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
    harness.clock.advance(2_000);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
  });

  it("TMP-2: a temporary token or a refresh token is refused as an access token", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "kinds");
    const tokens = await signIn(harness, "kinds");
    await enrolTotp(harness.auth, userId);
    const result = await login(harness.auth, { username: "kinds", password: goodPassword });
    if (result.status !== "totp_required") throw new Error("expected a second-factor request");
    expect(await outcome(verifyAccessToken(harness.auth, { token: result.tempToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.refreshToken }))).toBe(ErrorCode.InvalidToken);
    expect(await outcome(verifyAccessToken(harness.auth, { token: `Bearer ${tokens.accessToken}` }))).toBe(
      ErrorCode.InvalidToken,
    );
  });

  describe("TV-2: stale tokens", () => {
    it("TV-2: with the default (no cache), a stale access token is refused at the next request, in every instance", async () => {
      const [first, second] = twoInstances(0);
      const userId = await addUser(first.auth, "stale");
      const tokens = await signIn(first, "stale");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      await setUserRoles(first.auth, { userId, roles: ["admin"] });
      expect(await outcome(verifyAccessToken(first.auth, { token: tokens.accessToken }))).toBe(40101);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: with tokenStateCacheSeconds 10, another instance accepts a stale token for at most 10 s", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "cached");
      const tokens = await signIn(first, "cached");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      const checkedAt = second.clock.now;
      await changePassword(first.auth, { userId, currentPassword: goodPassword, newPassword: "a different passphrase" });
      expect(await outcome(verifyAccessToken(first.auth, { token: tokens.accessToken }))).toBe(40101);
      second.clock.now = checkedAt + 9_999;
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      second.clock.now = checkedAt + 10_000;
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
      second.clock.now = checkedAt + 10_500;
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: a cached check from the future (the clock stepped back) is not trusted: the delay stays at most the setting", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "clock-back");
      const tokens = await signIn(first, "clock-back");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      const checkedAt = second.clock.now;
      await changePassword(first.auth, { userId, currentPassword: goodPassword, newPassword: "a different passphrase" });
      second.clock.now = checkedAt - 60_000;
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: the instance that raised the version or revoked the session refuses at once, despite its cache", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10 });
      const userId = await addUser(harness.auth, "local-cache");
      const roles = await signIn(harness, "local-cache");
      await verifyAccessToken(harness.auth, { token: roles.accessToken });
      await setUserRoles(harness.auth, { userId, roles: ["admin"] });
      expect(await outcome(verifyAccessToken(harness.auth, { token: roles.accessToken }))).toBe(40101);

      const loggedOut = await signIn(harness, "local-cache");
      await verifyAccessToken(harness.auth, { token: loggedOut.accessToken });
      await logout(harness.auth, { refreshToken: loggedOut.refreshToken });
      expect(await outcome(verifyAccessToken(harness.auth, { token: loggedOut.accessToken }))).toBe(40101);
    });

    it("TV-2: a session revoked in another instance is refused there within the cache delay", async () => {
      const [first, second] = twoInstances(10);
      await addUser(first.auth, "revoked-elsewhere");
      const tokens = await signIn(first, "revoked-elsewhere");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      await logout(first.auth, { refreshToken: tokens.refreshToken });
      second.clock.advance(10_000);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("TV-2: stale refresh and temporary tokens are refused at once, whatever the cache", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "stale-others");
      const tokens = await signIn(first, "stale-others");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      const { secret } = await enrolTotp(first.auth, userId);
      first.clock.advance(30_000);
      expect(await outcome(refresh(second.auth, { refreshToken: tokens.refreshToken }))).toBe(40101);
      const result = await login(second.auth, { username: "stale-others", password: goodPassword });
      if (result.status !== "totp_required") throw new Error("expected a second-factor request");
      await setUserRoles(first.auth, { userId, roles: ["admin"] });
      const code = codeAt(secret, second.clock.now);
      expect(await outcome(verifyTotp(second.auth, { tempToken: result.tempToken, code }))).toBe(40100);
    });
  });

  describe.each([
    ["memory storage (findTokenState)", memoryStorage],
    ["a store without findTokenState (its two reads)", stepwiseMemoryStorage],
  ])("TV-2: what the token state check compares, on %s", (_name, makeStorage) => {
    it("TV-2: a user gone from storage, or disabled there without a token version change, ends the user's access tokens", async () => {
      const harness = makeAuth({ storage: makeStorage() });
      const goneId = await addUser(harness.auth, "gone");
      const disabledId = await addUser(harness.auth, "disabled-in-storage");
      const gone = await signIn(harness, "gone");
      const disabled = await signIn(harness, "disabled-in-storage");
      forgetUser(harness, goneId);
      expect(await outcome(verifyAccessToken(harness.auth, { token: gone.accessToken }))).toBe(ErrorCode.InvalidToken);
      await verifyAccessToken(harness.auth, { token: disabled.accessToken });
      await harness.storage.users.update(disabledId, { disabled: true }, harness.clock.now);
      expect(await outcome(verifyAccessToken(harness.auth, { token: disabled.accessToken }))).toBe(ErrorCode.InvalidToken);
    });

    it("TV-2: a signed token is live only with a session that exists and belongs to its user", async () => {
      // Tokens signed with the instance's own key: only the state check can refuse them.
      const harness = makeAuth({ storage: makeStorage() });
      const ownerId = await addUser(harness.auth, "owner");
      const otherId = await addUser(harness.auth, "other");
      const { claims } = await verifyAccessToken(harness.auth, { token: (await signIn(harness, "owner")).accessToken });
      await signIn(harness, "other");
      const sign = (changes: Partial<typeof claims>) => signAccessToken(harness.auth.keys, { ...claims, ...changes });
      expect(await outcome(verifyAccessToken(harness.auth, { token: await sign({ sid: "no-such-session" }) }))).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await outcome(verifyAccessToken(harness.auth, { token: await sign({ sub: otherId }) }))).toBe(
        ErrorCode.InvalidToken,
      );
      expect((await verifyAccessToken(harness.auth, { token: await sign({ jti: "another-jti" }) })).userId).toBe(ownerId);
    });

    it("TV-2: a cached check answers only for the user and token version it checked", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10, storage: makeStorage() });
      await addUser(harness.auth, "cached-owner");
      const otherId = await addUser(harness.auth, "cached-other");
      const { claims } = await verifyAccessToken(harness.auth, {
        token: (await signIn(harness, "cached-owner")).accessToken,
      });
      await signIn(harness, "cached-other");
      const sign = (changes: Partial<typeof claims>) => signAccessToken(harness.auth.keys, { ...claims, ...changes });
      expect(await outcome(verifyAccessToken(harness.auth, { token: await sign({ sub: otherId }) }))).toBe(
        ErrorCode.InvalidToken,
      );
      expect(await outcome(verifyAccessToken(harness.auth, { token: await sign({ tv: claims.tv + 1 }) }))).toBe(
        ErrorCode.InvalidToken,
      );
      await verifyAccessToken(harness.auth, { token: await sign({ jti: "another-jti" }) });
    });
  });

  describe("TV-2: the token state cache (tokenStateCacheSeconds)", () => {
    it("TV-2: with the default (no cache), nothing is kept, and a revoked token is refused even after the clock steps back", async () => {
      const first = makeAuth();
      const second = makeAuth({ storage: first.storage });
      const userId = await addUser(first.auth, "uncached");
      const tokens = await signIn(first, "uncached");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      expect(second.auth.tokenStateCache.size).toBe(0);
      await signOutEverywhere(first.auth, { userId });
      second.clock.advance(-1_000);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(ErrorCode.InvalidToken);
    });

    it("TV-2: within the cache delay, each session's state is read from storage once, however many sessions are checked", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10 });
      await addUser(harness.auth, "many-sessions");
      const sessions = [await signIn(harness, "many-sessions"), await signIn(harness, "many-sessions")];
      const findTokenState = vi.spyOn(harness.storage.sessions, "findTokenState");
      for (let round = 0; round < 3; round += 1) {
        for (const tokens of sessions) await verifyAccessToken(harness.auth, { token: tokens.accessToken });
        harness.clock.advance(1_000);
      }
      expect(findTokenState).toHaveBeenCalledTimes(2);
      expect(harness.auth.tokenStateCache.size).toBe(2);
    });

    it("TV-2: a check cached this very millisecond answers without storage", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10 });
      await addUser(harness.auth, "same-instant");
      const tokens = await signIn(harness, "same-instant");
      const findTokenState = vi.spyOn(harness.storage.sessions, "findTokenState");
      await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      expect(findTokenState).toHaveBeenCalledTimes(1);
    });

    it("TV-2: the cache holds at most 10,000 sessions; when it is full, the oldest check leaves first", async () => {
      const harness = makeAuth({ tokenStateCacheSeconds: 10 });
      await addUser(harness.auth, "cache-limit");
      const [first, second] = [await signIn(harness, "cache-limit"), await signIn(harness, "cache-limit")];
      const cache = harness.auth.tokenStateCache;
      for (let index = 0; cache.size < 9_999; index += 1) {
        cache.set(`filler-${index}`, {
          userId: "filler",
          tokenVersion: 0,
          org: undefined,
          checkedAt: harness.clock.now,
          sessionExpiresAt: Number.POSITIVE_INFINITY,
        });
      }
      const { sessionId: firstSession } = await verifyAccessToken(harness.auth, { token: first.accessToken });
      expect(cache.size).toBe(10_000);
      expect(cache.has(firstSession)).toBe(true);
      const { sessionId: secondSession } = await verifyAccessToken(harness.auth, { token: second.accessToken });
      expect(cache.size).toBe(10_000);
      expect(cache.has("filler-0")).toBe(false);
      expect(cache.has("filler-1")).toBe(true);
      expect([...cache.keys()].slice(-2)).toEqual([firstSession, secondSession]);
    });
  });

  describe("the verified-token cache (verifiedTokenCacheSize)", () => {
    it("a token presented again is answered from the cache: the same frozen context, no second signature check", async () => {
      const harness = makeAuth();
      await addUser(harness.auth, "cached", goodPassword, ["reader"]);
      const tokens = await signIn(harness, "cached");
      const first = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      expect(harness.auth.verifiedTokens.size).toBe(1);
      const again = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      expect(again).toBe(first);
      expect(Object.isFrozen(again) && Object.isFrozen(again.roles) && Object.isFrozen(again.claims)).toBe(true);
      expect(() => (again.roles as string[]).push("admin")).toThrow(TypeError);
      expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).roles).toEqual(["reader"]);
    });

    it("TV-2: a cached token is refused at the next request once its version is raised or its session revoked", async () => {
      const harness = makeAuth();
      const userId = await addUser(harness.auth, "cached-stale");
      const [raised, revoked] = [await signIn(harness, "cached-stale"), await signIn(harness, "cached-stale")];
      await verifyAccessToken(harness.auth, { token: raised.accessToken });
      await verifyAccessToken(harness.auth, { token: revoked.accessToken });
      expect(harness.auth.verifiedTokens.size).toBe(2);
      await logout(harness.auth, { refreshToken: revoked.refreshToken });
      expect(await outcome(verifyAccessToken(harness.auth, { token: revoked.accessToken }))).toBe(40101);
      await verifyAccessToken(harness.auth, { token: raised.accessToken });
      await setUserRoles(harness.auth, { userId, roles: ["admin"] });
      expect(await outcome(verifyAccessToken(harness.auth, { token: raised.accessToken }))).toBe(40101);
    });

    it("TV-2: with tokenStateCacheSeconds 10, a cached token revoked in another instance is refused there within 10 s", async () => {
      const [first, second] = twoInstances(10);
      const userId = await addUser(first.auth, "cached-delay");
      const tokens = await signIn(first, "cached-delay");
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      await signOutEverywhere(first.auth, { userId });
      first.clock.advance(9_999);
      await verifyAccessToken(second.auth, { token: tokens.accessToken });
      first.clock.advance(1);
      expect(await outcome(verifyAccessToken(second.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("AT-3: a cached token is never served from the cache from its exp on, and refused after the tolerance", async () => {
      const harness = makeAuth();
      await addUser(harness.auth, "cached-expiry");
      const tokens = await signIn(harness, "cached-expiry");
      const first = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      const exp = first.claims.exp * 1000;
      harness.clock.advance(exp - 1 - harness.clock.now);
      expect(await verifyAccessToken(harness.auth, { token: tokens.accessToken })).toBe(first);
      harness.clock.advance(1);
      const atExp = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      expect(atExp).not.toBe(first);
      expect(atExp.claims.jti).toBe(first.claims.jti);
      expect(harness.auth.verifiedTokens.size).toBe(0);
      harness.clock.advance(5_000);
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
      expect(harness.auth.verifiedTokens.size).toBe(0);
    });

    it("AT-3: with no clock tolerance, a cached token is refused at its exp", async () => {
      const harness = makeAuth({ clockToleranceSeconds: 0 });
      await addUser(harness.auth, "cached-strict");
      const tokens = await signIn(harness, "cached-strict");
      const { claims } = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      harness.clock.advance(claims.exp * 1000 - harness.clock.now);
      expect(await outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }))).toBe(40101);
    });

    it("a token that fails verification is never kept, nor one whose state check fails", async () => {
      const harness = makeAuth();
      await addUser(harness.auth, "cached-bad");
      const tokens = await signIn(harness, "cached-bad");
      const [header, payload, signature] = tokens.accessToken.split(".") as [string, string, string];
      const tampered = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith("AA") ? "AB" : "AA"}`;
      expect(await outcome(verifyAccessToken(harness.auth, { token: tampered }))).toBe(40101);
      expect(harness.auth.verifiedTokens.size).toBe(0);
      expect(await outcome(verifyAccessToken(harness.auth, { token: tampered }))).toBe(40101);
      expect((await verifyAccessToken(harness.auth, { token: tokens.accessToken })).userId).toBeTruthy();
    });

    it("the cache stays within verifiedTokenCacheSize under a stream of distinct tokens; the oldest leave first", async () => {
      const harness = makeAuth({ verifiedTokenCacheSize: 5 });
      await addUser(harness.auth, "cached-stream");
      const stream = [];
      for (let index = 0; index < 20; index += 1) stream.push((await signIn(harness, "cached-stream")).accessToken);
      const contexts = [];
      for (const token of stream) {
        contexts.push(await verifyAccessToken(harness.auth, { token }));
        expect(harness.auth.verifiedTokens.size).toBeLessThanOrEqual(5);
      }
      expect(harness.auth.verifiedTokens.size).toBe(5);
      expect(await verifyAccessToken(harness.auth, { token: stream[19] as string })).toBe(contexts[19]);
      expect(await verifyAccessToken(harness.auth, { token: stream[14] as string })).not.toBe(contexts[14]);
    });

    it("verifiedTokenCacheSize 0 keeps nothing: every request checks the signature", async () => {
      const harness = makeAuth({ verifiedTokenCacheSize: 0 });
      await addUser(harness.auth, "uncached");
      const tokens = await signIn(harness, "uncached");
      const first = await verifyAccessToken(harness.auth, { token: tokens.accessToken });
      expect(await verifyAccessToken(harness.auth, { token: tokens.accessToken })).not.toBe(first);
      expect(harness.auth.verifiedTokens.size).toBe(0);
    });
  });
});
