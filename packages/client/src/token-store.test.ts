import { afterEach, describe, expect, it, vi } from "vitest";
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
});
