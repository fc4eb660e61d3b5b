import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, vi } from "vitest";
import { createAuth } from "../auth.js";
import { workingPolicy } from "../directory/directory.test-support.js";
import { saveDirectoryPolicy } from "../flows/directory-policy.js";
import {
  type Harness,
  addUser,
  audience,
  encryptionKey,
  issuer,
  makeAuth,
  makeClock,
  outcome,
  signIn,
  signingSecret,
} from "../flows/fixtures.test-support.js";
import { logout } from "../flows/logout.js";
import { setUserDisabled, setUserRoles, signOutEverywhere } from "../flows/manage-users.js";
import { refresh } from "../flows/refresh.js";
import { endSession } from "../flows/sessions.js";
import { verifyAccessToken } from "../flows/verify-access-token.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { encodeRevocation } from "./revocation-channel.js";
import { type TestChannel, testChannel } from "./revocation-channel.test-support.js";
import { endOtherSessions } from "./sessions.js";
import { revocationChannelErrorId, revocationChannelStatus } from "./token-state.js";

const refused = 40101;

/** Lets the instances made just before subscribe to their channel (they do in a microtask). */
const subscribed = () => new Promise((resolve) => setImmediate(resolve));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Two instances, A and B, sharing a storage, a frozen clock and (unless `channel: null`) a channel; a 60 s token-state cache. */
function twoInstances(channel: TestChannel | null = testChannel(), storage: Storage = memoryStorage()) {
  const clock = makeClock();
  const revocationChannel = channel ?? undefined;
  // What the channel reports (a cut's error) is kept here rather than printed by the default reporter.
  const reported: unknown[] = [];
  const onInternalError = (error: unknown) => reported.push(error);
  const a = makeAuth({ storage, clock, tokenStateCacheSeconds: 60, revocationChannel, onInternalError });
  const b = makeAuth({ storage, clock, tokenStateCacheSeconds: 60, revocationChannel, onInternalError });
  return { a, b, clock, storage, reported };
}

/** A user signed in on A whose access token B has checked once, so B has its state cached. */
async function cachedOnB(
  a: Harness,
  b: Harness,
  username: string,
): Promise<{ userId: string; tokens: TokenSet; sessionId: string }> {
  const userId = await addUser(a.auth, username);
  const tokens = await signIn(a, username);
  const { sessionId } = await verifyAccessToken(b.auth, { token: tokens.accessToken });
  expect(b.auth.tokenStateCache.has(sessionId)).toBe(true);
  return { userId, tokens, sessionId };
}

const checkOn = (harness: Harness, tokens: TokenSet) => outcome(verifyAccessToken(harness.auth, { token: tokens.accessToken }));

describe("the revocation channel (revocationChannel)", () => {
  const endings: [string, (a: Harness, user: { userId: string; tokens: TokenSet; sessionId: string }) => Promise<unknown>][] = [
    ["logout", (a, { tokens }) => logout(a.auth, { refreshToken: tokens.refreshToken })],
    ["endSession", (a, { userId, sessionId }) => endSession(a.auth, { userId, sessionId, id: sessionId })],
    ["endOtherSessions from no session", (a, { userId }) => endOtherSessions(a.auth, { userId, reason: "password_changed" })],
    ["signOutEverywhere", (a, { userId }) => signOutEverywhere(a.auth, { userId })],
    ["setUserDisabled", (a, { userId }) => setUserDisabled(a.auth, { userId, disabled: true })],
    ["setUserRoles (token version raised)", (a, { userId }) => setUserRoles(a.auth, { userId, roles: ["editor"] })],
  ];

  it.each(endings)(
    "SE-3, TV-2: %s on instance A is refused on instance B at once, with tokenStateCacheSeconds 60",
    async (_name, end) => {
      const { a, b } = twoInstances();
      const user = await cachedOnB(a, b, "ended-on-a");
      const findTokenState = vi.spyOn(b.storage.sessions, "findTokenState");
      expect(await checkOn(b, user.tokens)).toBe("fulfilled");
      expect(findTokenState).not.toHaveBeenCalled();
      await end(a, user);
      expect(b.auth.tokenStateCache.has(user.sessionId)).toBe(false);
      expect(await checkOn(b, user.tokens)).toBe(refused);
    },
  );

  it("SE-3: without a channel, B accepts the ended session from its cache until tokenStateCacheSeconds has passed on its clock", async () => {
    const { a, b, clock } = twoInstances(null);
    const user = await cachedOnB(a, b, "no-channel");
    await logout(a.auth, { refreshToken: user.tokens.refreshToken });
    expect(await checkOn(a, user.tokens)).toBe(refused);
    clock.advance(59_999);
    expect(await checkOn(b, user.tokens)).toBe("fulfilled");
    clock.advance(1);
    expect(await checkOn(b, user.tokens)).toBe(refused);
  });

  it("SE-2: sessions ended but one are dropped on B, the kept one and other users' stay cached", async () => {
    const { a, b } = twoInstances();
    const ended = await cachedOnB(a, b, "keeps-one");
    const kept = await signIn(a, "keeps-one");
    const { sessionId: keptId } = await verifyAccessToken(b.auth, { token: kept.accessToken });
    const bystander = await cachedOnB(a, b, "bystander");
    await endOtherSessions(a.auth, { userId: ended.userId, keepSessionId: keptId, reason: "passkey_registered" });
    expect([...b.auth.tokenStateCache.keys()].sort()).toEqual([keptId, bystander.sessionId].sort());
    expect(await checkOn(b, ended.tokens)).toBe(refused);
    expect(await checkOn(b, kept)).toBe("fulfilled");
  });

  it("TV-1: a user's token version raised on A drops that user's states on B, and no other user's", async () => {
    const { a, b } = twoInstances();
    const first = await cachedOnB(a, b, "raised");
    const second = await signIn(a, "raised");
    await verifyAccessToken(b.auth, { token: second.accessToken });
    const bystander = await cachedOnB(a, b, "bystander");
    await setUserRoles(a.auth, { userId: first.userId, roles: ["editor"] });
    expect([...b.auth.tokenStateCache.keys()]).toEqual([bystander.sessionId]);
    expect(await checkOn(b, first.tokens)).toBe(refused);
    expect(await checkOn(b, bystander.tokens)).toBe("fulfilled");
  });

  it("TV-1: a saved directory policy (many token versions raised) empties B's cache", async () => {
    const { a, b } = twoInstances();
    await cachedOnB(a, b, "first");
    await cachedOnB(a, b, "second");
    await saveDirectoryPolicy(a.auth, workingPolicy);
    expect(b.auth.tokenStateCache.size).toBe(0);
  });

  it("publishes ids only, after the storage write, and never a token", async () => {
    const channel = testChannel();
    const { a, b, storage } = twoInstances(channel);
    const user = await cachedOnB(a, b, "what-travels");
    const revokedWhenPublished: (number | null | undefined)[] = [];
    const publish = channel.publish;
    channel.publish = async (message) => {
      revokedWhenPublished.push((await storage.sessions.findSession(user.sessionId))?.revokedAt);
      return publish(message);
    };
    await logout(a.auth, { refreshToken: user.tokens.refreshToken });
    await signOutEverywhere(a.auth, { userId: user.userId });
    expect(channel.published.map((text) => JSON.parse(text))).toEqual([
      { v: 1, kind: "session", sessionId: user.sessionId },
      { v: 1, kind: "token_version", userId: user.userId },
    ]);
    expect(revokedWhenPublished).toEqual([a.clock.now, a.clock.now]);
    for (const text of channel.published) {
      expect(text).not.toContain(user.tokens.refreshToken);
      expect(text).not.toContain(user.tokens.accessToken);
    }
  });

  it("a revocation that ended nothing publishes nothing", async () => {
    const channel = testChannel();
    const { a, b } = twoInstances(channel);
    const user = await cachedOnB(a, b, "nothing-ended");
    await endOtherSessions(a.auth, { userId: user.userId, keepSessionId: user.sessionId, reason: "password_changed" });
    expect(channel.published).toEqual([]);
    expect(await checkOn(b, user.tokens)).toBe("fulfilled");
  });

  it("TV-2: a check reading storage while a revocation arrives answers as it read, but does not cache that answer", async () => {
    const shared = memoryStorage();
    const read = deferred();
    const held = deferred();
    let gate = false;
    const gated: Storage = {
      ...shared,
      sessions: {
        ...shared.sessions,
        async findTokenState(id) {
          const found = (await shared.sessions.findTokenState?.(id)) ?? null;
          if (gate) {
            gate = false;
            read.resolve();
            await held.promise;
          }
          return found;
        },
      },
    };
    const { a, b } = twoInstances(testChannel(), gated);
    const userId = await addUser(a.auth, "racing");
    const tokens = await signIn(a, "racing");
    gate = true;
    const check = checkOn(b, tokens);
    await read.promise;
    await signOutEverywhere(a.auth, { userId });
    held.resolve();
    expect(await check).toBe("fulfilled");
    expect(b.auth.tokenStateCache.size).toBe(0);
    expect(await checkOn(b, tokens)).toBe(refused);
  });

  it("TV-2: a cached check answers for no longer than its session lives, however long the cache", async () => {
    const clock = makeClock();
    const harness = makeAuth({ clock, tokenStateCacheSeconds: 60, ttl: { access: "2m", refresh: "3m", refreshIdle: "3m" } });
    await addUser(harness.auth, "ending-session");
    const first = await signIn(harness, "ending-session");
    clock.advance(150_000);
    const late = await refresh(harness.auth, { refreshToken: first.refreshToken });
    expect(await checkOn(harness, late)).toBe("fulfilled");
    clock.advance(29_999);
    expect(await checkOn(harness, late)).toBe("fulfilled");
    const findTokenState = vi.spyOn(harness.storage.sessions, "findTokenState");
    clock.advance(1);
    expect(await checkOn(harness, late)).toBe(refused);
    expect(findTokenState).toHaveBeenCalledTimes(1);
  });

  describe("a lost channel", () => {
    it("emits revocation_channel.lost once, with the delay that now applies, and reports the error", async () => {
      const reported: [unknown, string][] = [];
      const channel = testChannel();
      const { b } = twoInstances(channel);
      const harness = makeAuth({
        storage: b.storage,
        tokenStateCacheSeconds: 60,
        revocationChannel: channel,
        onInternalError: (error, id) => reported.push([error, id]),
      });
      expect(revocationChannelStatus(harness.auth)).toBe("connecting");
      await subscribed();
      expect(revocationChannelStatus(harness.auth)).toBe("connected");
      const cause = new Error("Socket closed unexpectedly");
      channel.cut(cause);
      channel.cut(cause);
      expect(revocationChannelStatus(harness.auth)).toBe("lost");
      expect(harness.events).toEqual([{ type: "revocation_channel.lost", maxRevocationDelaySeconds: 60, at: harness.clock.now }]);
      expect(reported).toEqual([[cause, revocationChannelErrorId]]);
      expect(b.events.filter((event) => event.type === "revocation_channel.lost")).toHaveLength(1);
    });

    it("a loss the channel gives no error for is emitted but reports nothing to onInternalError", async () => {
      const channel = testChannel();
      const { b, reported } = twoInstances(channel);
      await subscribed();
      channel.cut();
      expect(revocationChannelStatus(b.auth)).toBe("lost");
      expect(b.events.filter((event) => event.type === "revocation_channel.lost")).toHaveLength(1);
      expect(reported).toEqual([]);
    });

    it("SE-3: falls back to the cache delay: a state cached while connected is dropped within tokenStateCacheSeconds of its check, not of the loss", async () => {
      const channel = testChannel();
      const { a, b, clock } = twoInstances(channel);
      const user = await cachedOnB(a, b, "missed");
      clock.advance(30_000);
      channel.cut();
      await logout(a.auth, { refreshToken: user.tokens.refreshToken });
      clock.advance(29_999);
      expect(await checkOn(b, user.tokens)).toBe("fulfilled");
      clock.advance(1);
      expect(await checkOn(b, user.tokens)).toBe(refused);
    });

    it("on restore drops the whole cache (messages were missed) and emits revocation_channel.restored", async () => {
      const channel = testChannel();
      const { a, b } = twoInstances(channel);
      await subscribed();
      channel.cut();
      const missed = await cachedOnB(a, b, "missed-while-cut");
      const other = await cachedOnB(a, b, "untouched");
      await logout(a.auth, { refreshToken: missed.tokens.refreshToken });
      expect(await checkOn(b, missed.tokens)).toBe("fulfilled");
      channel.restore();
      expect(revocationChannelStatus(b.auth)).toBe("connected");
      expect(b.events.at(-1)).toEqual({ type: "revocation_channel.restored", at: b.clock.now });
      expect(b.auth.tokenStateCache.size).toBe(0);
      expect(await checkOn(b, missed.tokens)).toBe(refused);
      expect(await checkOn(b, other.tokens)).toBe("fulfilled");
      await logout(a.auth, { refreshToken: other.tokens.refreshToken });
      expect(await checkOn(b, other.tokens)).toBe(refused);
    });

    it("a channel that cannot start is lost from the start; its first connection drops what was cached before it", async () => {
      const channel = testChannel();
      channel.cut();
      const { a, b } = twoInstances(channel);
      await subscribed();
      expect(revocationChannelStatus(b.auth)).toBe("lost");
      expect(b.events).toEqual([{ type: "revocation_channel.lost", maxRevocationDelaySeconds: 60, at: b.clock.now }]);
      await cachedOnB(a, b, "before-connecting");
      channel.restore();
      expect(b.auth.tokenStateCache.size).toBe(0);
    });

    it("a channel whose subscribe throws is lost, and an onInternalError that throws reaches neither the channel nor the flow", async () => {
      const broken = new Error("cannot subscribe");
      const harness = makeAuth({
        tokenStateCacheSeconds: 60,
        revocationChannel: {
          publish: () => Promise.reject(new Error("cannot publish")),
          subscribe: () => {
            throw broken;
          },
        },
        onInternalError: () => {
          throw new Error("the reporter fails too");
        },
      });
      await subscribed();
      expect(revocationChannelStatus(harness.auth)).toBe("lost");
      expect(harness.events).toEqual([{ type: "revocation_channel.lost", maxRevocationDelaySeconds: 60, at: harness.clock.now }]);
      await addUser(harness.auth, "reporter-fails");
      const tokens = await signIn(harness, "reporter-fails");
      await logout(harness.auth, { refreshToken: tokens.refreshToken });
      await subscribed();
      expect(await checkOn(harness, tokens)).toBe(refused);
    });

    it("a publish that fails or throws fails no flow: the revocation holds, the error goes to onInternalError", async () => {
      const reported: [unknown, string][] = [];
      const failure = new Error("publish failed");
      const thrown = new Error("publish threw");
      const publishes = [
        () => Promise.reject(failure),
        () => {
          throw thrown;
        },
      ];
      for (const publish of publishes) {
        const storage = memoryStorage();
        const a = makeAuth({
          storage,
          revocationChannel: { publish, subscribe: () => {} },
          onInternalError: (error, id) => reported.push([error, id]),
        });
        await addUser(a.auth, "failing-publish");
        const tokens = await signIn(a, "failing-publish");
        await logout(a.auth, { refreshToken: tokens.refreshToken });
        expect(await checkOn(a, tokens)).toBe(refused);
        expect(revocationChannelStatus(a.auth)).toBe("connecting");
      }
      await vi.waitFor(() => expect(reported).toHaveLength(2));
      expect(reported).toEqual([
        [failure, revocationChannelErrorId],
        [thrown, revocationChannelErrorId],
      ]);
    });
  });

  it("without a channel a revocation publishes nowhere and reports nothing to onInternalError", async () => {
    const reported: unknown[] = [];
    const harness = makeAuth({ tokenStateCacheSeconds: 60, onInternalError: (error) => reported.push(error) });
    await addUser(harness.auth, "no-channel-reports");
    const tokens = await signIn(harness, "no-channel-reports");
    await logout(harness.auth, { refreshToken: tokens.refreshToken });
    await subscribed();
    expect(await checkOn(harness, tokens)).toBe(refused);
    expect(reported).toEqual([]);
  });

  it("the channel holds an instance weakly: once collected, the channel's messages, connections and losses reach nothing and throw nothing", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const channel = testChannel();
    const reported: unknown[] = [];
    const made = () => {
      const harness = makeAuth({
        tokenStateCacheSeconds: 60,
        revocationChannel: channel,
        onInternalError: (error) => reported.push(error),
      });
      return new WeakRef(harness.auth);
    };
    const instance = made();
    await subscribed();
    expect(instance.deref()).toBeDefined();
    for (let round = 0; round < 10 && instance.deref() !== undefined; round += 1) {
      await subscribed();
      gc();
    }
    expect(instance.deref()).toBeUndefined();
    channel.deliver(encodeRevocation({ kind: "all" }));
    channel.cut(new Error("after the instance went"));
    channel.restore();
    expect(reported).toEqual([]);
  });

  it("malformed messages are ignored: nothing dropped, nothing thrown", async () => {
    const channel = testChannel();
    const { a, b } = twoInstances(channel);
    const user = await cachedOnB(a, b, "garbage");
    const junk = [
      "",
      "not json",
      "null",
      "[]",
      '"session"',
      "{}",
      JSON.stringify({ kind: "session", sessionId: user.sessionId }),
      JSON.stringify({ v: 2, kind: "all" }),
      JSON.stringify({ v: 1, kind: "everything" }),
      JSON.stringify({ v: 1, kind: "session", sessionId: 7 }),
      JSON.stringify({ v: 1, kind: "session", sessionId: "" }),
      JSON.stringify({ v: 1, kind: "user_sessions", userId: user.userId }),
      JSON.stringify({ v: 1, kind: "token_version", userId: [user.userId] }),
      `{"__proto__":{"v":1,"kind":"all"}}`,
      encodeRevocation({ kind: "session", sessionId: user.sessionId }) + " ".repeat(3000),
      `{"v":1,"kind":"session","sessionId":"${"x".repeat(5000)}"}`,
      "{".repeat(100_000),
    ];
    for (const text of junk) channel.deliver(text);
    for (const value of [undefined, null, 42, { v: 1, kind: "all" }, Buffer.from("{}")])
      channel.deliver(value as unknown as string);
    expect(b.auth.tokenStateCache.has(user.sessionId)).toBe(true);
    channel.deliver(encodeRevocation({ kind: "session", sessionId: user.sessionId }));
    expect(b.auth.tokenStateCache.has(user.sessionId)).toBe(false);
  });

  it("createAuth refuses a revocationChannel without publish and subscribe; without one the status is none", () => {
    const base = { storage: memoryStorage(), issuer, audience, secrets: { signing: signingSecret, encryption: encryptionKey } };
    for (const revocationChannel of [null, {}, { publish: async () => {} }, "redis://localhost"]) {
      expect(() => createAuth({ ...base, revocationChannel } as never)).toThrow(/revocationChannel must have publish/);
    }
    expect(revocationChannelStatus(createAuth(base))).toBe("none");
  });
});
