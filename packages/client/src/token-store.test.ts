import { IDBFactory } from "fake-indexeddb";
import { afterEach, describe, expect, it, vi } from "vitest";
import { indexedDbRecord } from "./indexed-db.js";
import { scriptedUser } from "./scripted-server.test-support.js";
import {
  type KeyValueStorage,
  type StoredTokens,
  localStorageTokenStore,
  sessionStorageTokenStore,
  webStorageTokenStore,
} from "./token-store.js";

const tokens: StoredTokens = { accessToken: "access-1", refreshToken: "refresh-1", expiresAt: 900_000, user: scriptedUser };

function storageOf(entries = new Map<string, string>()): KeyValueStorage & { entries: Map<string, string> } {
  return {
    entries,
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => {
      entries.set(key, value);
    },
    removeItem: (key) => {
      entries.delete(key);
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("webStorageTokenStore", () => {
  it("keeps the tokens as JSON under its key, and forgets them on null", async () => {
    const storage = storageOf();
    const store = webStorageTokenStore(storage, { key: "app.tokens" });
    await store.save(tokens);
    expect(JSON.parse(storage.entries.get("app.tokens") ?? "null")).toEqual(tokens);
    expect(await store.load()).toEqual(tokens);
    await store.save(null);
    expect(storage.entries.has("app.tokens")).toBe(false);
    expect(await store.load()).toBeNull();
  });

  it("an entry that is not whole tokens reads as signed out (null), never as tokens and never as an error", async () => {
    const { user: _, ...withoutUser } = tokens;
    const entries = [
      "not json",
      "null",
      '"access-1"',
      "42",
      "[]",
      JSON.stringify({ ...tokens, accessToken: 1 }),
      JSON.stringify({ ...tokens, refreshToken: null }),
      JSON.stringify({ ...tokens, expiresAt: "900000" }),
      JSON.stringify(withoutUser),
      JSON.stringify({ ...tokens, user: null }),
      JSON.stringify({ ...tokens, user: "alice" }),
      JSON.stringify({ ...tokens, user: { ...scriptedUser, id: 7 } }),
    ];
    for (const entry of entries) {
      const store = webStorageTokenStore(storageOf(new Map([["portcullis.tokens", entry]])));
      expect(await store.load(), entry).toBeNull();
    }
  });

  it("with locks, refreshes run under the lock named after the key, so stores of other keys do not wait for it", async () => {
    const names: string[] = [];
    const locks = {
      request<T>(name: string, task: () => Promise<T>) {
        names.push(name);
        return task();
      },
    };
    const store = webStorageTokenStore(storageOf(), { key: "app.tokens", locks });
    expect(await store.runExclusive?.(async () => "done")).toBe("done");
    expect(names).toEqual(["app.tokens.refresh"]);
    expect(webStorageTokenStore(storageOf()).runExclusive).toBeUndefined();
  });
});

describe("webStorageTokenStore with an IndexedDB copy", () => {
  const renewed: StoredTokens = { ...tokens, accessToken: "access-2", refreshToken: "refresh-2" };

  it("loadLatest reads the copy another tab saved while this tab's storage still shows the tokens it replaced", async () => {
    const origin = new IDBFactory();
    // Two tabs: one IndexedDB for the origin, and the second tab's copy of localStorage not yet updated.
    const [firstTab, secondTab] = [storageOf(), storageOf()];
    const first = webStorageTokenStore(firstTab, { indexedDB: origin });
    const second = webStorageTokenStore(secondTab, { indexedDB: origin });
    await first.save(tokens);
    secondTab.setItem("portcullis.tokens", JSON.stringify(tokens));
    await first.save(renewed);

    expect(await second.load()).toEqual(tokens);
    expect(await second.loadLatest?.()).toEqual(renewed);
    expect(await indexedDbRecord(origin, "portcullis.tokens").read()).toEqual(renewed);
    await first.save(null);
    expect(await second.loadLatest?.()).toBeNull();
    expect(firstTab.entries.size).toBe(0);
  });

  it("loadLatest reads the storage while the copy was never written (tokens saved before there was one), and a copy that is not tokens as signed out", async () => {
    const origin = new IDBFactory();
    const storage = storageOf(new Map([["portcullis.tokens", JSON.stringify(tokens)]]));
    const store = webStorageTokenStore(storage, { indexedDB: origin });
    expect(await store.loadLatest?.()).toEqual(tokens);
    await indexedDbRecord(origin, "portcullis.tokens").write({ ...tokens, refreshToken: 7 });
    expect(await store.loadLatest?.()).toBeNull();
    expect(await webStorageTokenStore(storage).loadLatest?.()).toEqual(tokens);
  });

  it("a save whose copy cannot be written rejects and leaves the storage as it was", async () => {
    const storage = storageOf();
    const store = webStorageTokenStore(storage, { indexedDB: new IDBFactory() });
    await store.save(tokens);
    const notCloneable = { ...renewed, user: { ...scriptedUser, toString: () => "alice" } };
    expect(
      await Promise.resolve(store.save(notCloneable)).then(
        () => "saved",
        (error: Error) => error.name,
      ),
    ).toBe("DataCloneError");
    expect(await store.load()).toEqual(tokens);
    expect(await store.loadLatest?.()).toEqual(tokens);
  });
});

describe("the browser's stores", () => {
  it("sessionStorageTokenStore and localStorageTokenStore where there is no such storage (Node) throw a TypeError that says what to use", () => {
    vi.stubGlobal("sessionStorage", undefined);
    vi.stubGlobal("localStorage", undefined);
    expect(() => sessionStorageTokenStore()).toThrow(/^sessionStorage is not available here; use memoryTokenStore\(\)/);
    expect(() => localStorageTokenStore()).toThrow(/^localStorage is not available here; use memoryTokenStore\(\)/);
  });

  it("localStorageTokenStore serialises refreshes with navigator.locks where there are any, and works without (no navigator at all)", async () => {
    const storage = storageOf();
    vi.stubGlobal("localStorage", storage);
    vi.stubGlobal("navigator", undefined);
    const unlocked = localStorageTokenStore();
    expect(unlocked.runExclusive).toBeUndefined();
    await unlocked.save(tokens);
    expect(storage.entries.has("portcullis.tokens")).toBe(true);

    const names: string[] = [];
    vi.stubGlobal("navigator", {
      locks: {
        request(name: string, task: () => Promise<unknown>) {
          names.push(name);
          return task();
        },
      },
    });
    const locked = localStorageTokenStore({ key: "tab.tokens" });
    await locked.runExclusive?.(async () => undefined);
    expect(names).toEqual(["tab.tokens.refresh"]);
  });

  it("localStorageTokenStore keeps the IndexedDB copy in indexedDB where there is one, and reads localStorage under the lock where there is none", async () => {
    const storage = storageOf();
    vi.stubGlobal("localStorage", storage);
    const origin = new IDBFactory();
    vi.stubGlobal("indexedDB", origin);
    await localStorageTokenStore({ key: "tab.tokens" }).save(tokens);
    expect(await indexedDbRecord(origin, "tab.tokens").read()).toEqual(tokens);

    vi.stubGlobal("indexedDB", undefined);
    const withoutCopy = localStorageTokenStore({ key: "tab.tokens" });
    storage.setItem("tab.tokens", JSON.stringify({ ...tokens, accessToken: "access-2" }));
    expect((await withoutCopy.loadLatest?.())?.accessToken).toBe("access-2");
  });

  it("localStorageTokenStore tells its client of every storage event for its key or for a cleared localStorage, and of no other key", () => {
    vi.stubGlobal("localStorage", storageOf());
    vi.stubGlobal("addEventListener", undefined);
    expect(localStorageTokenStore().subscribe).toBeUndefined();

    const listeners: [string, (event: { key: string | null }) => void][] = [];
    vi.stubGlobal("addEventListener", function (this: unknown, type: string, listener: (event: { key: string | null }) => void) {
      expect(this).toBe(globalThis);
      listeners.push([type, listener]);
    });
    let told = 0;
    localStorageTokenStore({ key: "tab.tokens" }).subscribe?.(() => {
      told += 1;
    });
    expect(listeners.map(([type]) => type)).toEqual(["storage"]);
    const [[, onStorage]] = listeners as [[string, (event: { key: string | null }) => void]];
    const toldAfter = (key: string | null) => {
      onStorage({ key });
      return told;
    };
    expect([toldAfter("tab.tokens"), toldAfter(null), toldAfter("portcullis.tokens"), toldAfter("tab.tokens.other")]).toEqual([
      1, 2, 2, 2,
    ]);
  });
});
