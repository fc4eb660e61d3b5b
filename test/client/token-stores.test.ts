import {
  type AuthClient,
  type FetchFunction,
  type KeyValueStorage,
  type TokenStore,
  localStorageTokenStore,
  sessionStorageTokenStore,
  webStorageTokenStore,
} from "@portcullis/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createTestUser, testPassword } from "../fixtures/auth.js";
import { inProcessLocks, mapStorage } from "./browser-storage.js";
import {
  type ClientTestServer,
  clientTargets,
  expireAccessTokens,
  recordEvents,
  rejection,
  servedPerTest,
  serverEvents,
} from "./client-servers.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

const mePath = "/auth/me";

/**
 * A fetch whose first `count` answers to `GET …/auth/me` are held until all of them have arrived,
 * then handed over together: tabs that meet the expired access token at the same moment.
 */
function meAnswersTogether(count: number): FetchFunction {
  let arrived = 0;
  let releaseAll: () => void = () => {};
  const allArrived = new Promise<void>((resolve) => {
    releaseAll = resolve;
  });
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    if (!new URL(request.url).pathname.endsWith(mePath) || arrived >= count) return response;
    arrived += 1;
    if (arrived === count) releaseAll();
    await allArrived;
    return response;
  };
}

/** The token store of one tab, made as the page would make it; `shared` is the origin's storage every tab sees. */
type TabStore = (shared: KeyValueStorage) => TokenStore;

const serialisedStores: [string, TabStore][] = [
  ["webStorageTokenStore with locks", (shared) => webStorageTokenStore(shared, { locks: sharedLocks() })],
  [
    "localStorageTokenStore with navigator.locks",
    (shared) => {
      vi.stubGlobal("localStorage", shared);
      vi.stubGlobal("navigator", { locks: sharedLocks() });
      return localStorageTokenStore();
    },
  ],
];

const unserialisedStores: [string, TabStore][] = [
  ["webStorageTokenStore without locks", (shared) => webStorageTokenStore(shared)],
  [
    "localStorageTokenStore in a browser without navigator.locks",
    (shared) => {
      vi.stubGlobal("localStorage", shared);
      vi.stubGlobal("navigator", {});
      return localStorageTokenStore();
    },
  ],
];

/** The origin's one lock manager, as `navigator.locks` is to every tab: made anew for each test. */
let originLocks = inProcessLocks();
const sharedLocks = () => originLocks;
afterEach(() => {
  originLocks = inProcessLocks();
});

/** Two tabs of one origin: clients over `shared` storage that meet the expiry together; the first signed in as `username`. */
async function twoTabs(harness: ClientTestServer, makeStore: TabStore, username: string) {
  const shared = mapStorage();
  const together = meAnswersTogether(2);
  const tabs = [0, 1].map(() => harness.client({ store: makeStore(shared), fetch: together })) as [AuthClient, AuthClient];
  await createTestUser(harness.auth, username);
  await tabs[0].login({ username, password: testPassword });
  expect((await tabs[1].currentUser())?.username).toBe(username);
  return { shared, tabs, events: tabs.map(recordEvents) };
}

describe.each(clientTargets)("token stores shared by two tabs, against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it.each(serialisedStores)(
    "%s: two tabs meeting an expired token refresh once between them, and both carry on",
    async (_store, makeStore) => {
      const harness = await serve();
      const reused = serverEvents(harness.auth, "refresh_token.reused");
      const { tabs, events } = await twoTabs(harness, makeStore, "alice");
      expireAccessTokens(harness);

      const users = await Promise.all(tabs.map((tab) => tab.me()));

      expect(users.map(({ username }) => username)).toEqual(["alice", "alice"]);
      expect(harness.refreshesSent()).toBe(1);
      expect(originLocks.held).toBe(2);
      expect(reused).toEqual([]);
      expect(await tabs[0].accessToken()).toBe(await tabs[1].accessToken());
      expect((await tabs[1].fetch("/api/v1/things")).status).toBe(200);
      expect((await tabs[0].refresh()).username).toBe("alice");
      expect(events).toEqual([[], []]);
    },
  );

  it.each(unserialisedStores)(
    "%s: the risk the docs name is real: both tabs refresh with one token, RT-2 sees reuse and the session ends",
    async (_store, makeStore) => {
      const harness = await serve();
      const reused = serverEvents(harness.auth, "refresh_token.reused");
      const { shared, tabs, events } = await twoTabs(harness, makeStore, "bob");
      expireAccessTokens(harness);

      const outcomes = await Promise.allSettled(tabs.map((tab) => tab.me()));

      expect(harness.refreshesSent()).toBe(2);
      expect(reused).toHaveLength(1);
      expect(outcomes.map(({ status }) => status)).toContain("rejected");
      // Whatever the tabs still hold belongs to the revoked session: the next request of each ends signed out.
      for (const tab of tabs) expect(await rejection(tab.me())).toMatchObject({ code: 40101 });
      expect(shared.entries.size).toBe(0);
      // Each tab announces the end once: the one whose refresh was refused as session_ended, the
      // other as session_ended too or, if it found the store emptied first, signed_out_elsewhere.
      expect(events.flat()).toContainEqual(["signedOut", { reason: "session_ended" }]);
      expect(events.map((tab) => tab.map(([name]) => name))).toEqual([["signedOut"], ["signedOut"]]);
      for (const [, detail] of events.flat()) {
        expect(["session_ended", "signed_out_elsewhere"]).toContain((detail as { reason: string }).reason);
      }
    },
  );

  it("sessionStorageTokenStore: a duplicated tab starts with a copy of the refresh token, and the second of the two to refresh ends the session for both", async () => {
    const harness = await serve();
    const reused = serverEvents(harness.auth, "refresh_token.reused");
    await createTestUser(harness.auth, "carol");
    const originalTab = mapStorage();
    vi.stubGlobal("sessionStorage", originalTab);
    const original = harness.client({ store: sessionStorageTokenStore() });
    await original.login({ username: "carol", password: testPassword });
    const duplicatedTab = mapStorage();
    for (const [key, value] of originalTab.entries) duplicatedTab.setItem(key, value);
    vi.stubGlobal("sessionStorage", duplicatedTab);
    const copy = harness.client({ store: sessionStorageTokenStore() });
    const copyEvents = recordEvents(copy);

    expect((await original.refresh()).username).toBe("carol");
    expect(await rejection(copy.refresh())).toMatchObject({ code: 40101 });
    expect(copyEvents).toEqual([["signedOut", { reason: "session_ended" }]]);
    expect(reused).toHaveLength(1);
    expect(await rejection(original.me())).toMatchObject({ code: 40101 });
    expect(await rejection(original.refresh())).toMatchObject({ code: 40101 });
    expect(await original.currentUser()).toBeNull();
  });
});

describe("token stores, whatever the server", () => {
  const [, start, statusMode] = clientTargets[0];
  const serve = servedPerTest(start, statusMode);

  it("memoryTokenStore is the default: the tokens stay in the client, out of Web Storage and out of every other client's reach", async () => {
    const harness = await serve();
    await createTestUser(harness.auth, "dave");
    const local = mapStorage();
    const session = mapStorage();
    vi.stubGlobal("localStorage", local);
    vi.stubGlobal("sessionStorage", session);

    const client = harness.client();
    await client.login({ username: "dave", password: testPassword });
    expect((await client.me()).username).toBe("dave");
    expect(await client.accessToken()).toEqual(expect.any(String));
    expect([local.entries.size, session.entries.size]).toEqual([0, 0]);
    expect(await harness.client().currentUser()).toBeNull();

    vi.unstubAllGlobals();
    expect(() => localStorageTokenStore()).toThrow(TypeError);
    expect(() => sessionStorageTokenStore()).toThrow(TypeError);
  });

  it.each([
    ["not JSON", "{not json"],
    ["JSON but not tokens", JSON.stringify({ accessToken: "a", refreshToken: 7 })],
    ["tokens without a user", JSON.stringify({ accessToken: "a", refreshToken: "r", expiresAt: 1, user: null })],
  ])("an entry that is %s reads as signed out: nothing is sent, and a sign-in replaces it", async (_what, entry) => {
    const harness = await serve();
    await createTestUser(harness.auth, "erin");
    const storage = mapStorage();
    storage.setItem("my-app.tokens", entry);
    const client = harness.client({ store: webStorageTokenStore(storage, { key: "my-app.tokens" }) });

    expect(await client.currentUser()).toBeNull();
    expect(await client.accessToken()).toBeNull();
    expect(await rejection(client.me())).toMatchObject({ kind: "not_signed_in" });
    expect(harness.sent).toEqual([]);

    await client.login({ username: "erin", password: testPassword });
    expect(JSON.parse(storage.getItem("my-app.tokens") ?? "null")).toMatchObject({ user: { username: "erin" } });
    expect((await client.me()).username).toBe("erin");
  });
});
