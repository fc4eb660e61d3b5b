import { type IndexedDbFactory, indexedDbRecord } from "./indexed-db.js";
import type { AuthUser } from "./types.js";

/** What a {@link TokenStore} keeps for a signed-in client. */
export interface StoredTokens {
  accessToken: string;
  /** Empty in cookie mode (`tokens: "cookie"`): the browser holds the refresh token in an HttpOnly cookie. */
  refreshToken: string;
  /** When the access token expires, in epoch milliseconds by the client's clock. */
  expiresAt: number;
  user: AuthUser;
}

/**
 * Where the client keeps its tokens. `load` is called before every request, so a store that
 * several clients share (tabs sharing `localStorage`) gives each the newest tokens. Every method
 * may be synchronous or return a promise.
 *
 * `runExclusive`, when present, runs a refresh exclusively among every client of the store: a
 * store shared across tabs must offer it, or two tabs refreshing with the same refresh token make
 * the server see reuse and end the session (RT-2). Inside it the client reads the store again, with
 * `loadLatest` when there is one, and uses tokens another holder has just renewed instead of
 * refreshing twice.
 *
 * @example
 * ```ts
 * const store: TokenStore = {
 *   load: () => keychain.read("portcullis"),
 *   save: (tokens) => (tokens ? keychain.write("portcullis", tokens) : keychain.delete("portcullis")),
 * };
 * ```
 */
export interface TokenStore {
  /** The tokens kept, or null when the client is signed out. */
  load(): StoredTokens | null | Promise<StoredTokens | null>;
  /** Keeps `tokens`, or forgets them on `null`. */
  save(tokens: StoredTokens | null): void | Promise<void>;
  /** Runs `task` while no other client of the store runs one, and returns what it returns. */
  runExclusive?<T>(task: () => Promise<T>): Promise<T>;
  /**
   * Reads the tokens as the last `save` of any client left it, for the read under `runExclusive`.
   * A store whose `load` may lag behind another client's `save` must offer it: a client that read
   * tokens already spent would refresh with them, and the server would end the session (RT-2).
   * Without it the client calls `load`.
   */
  loadLatest?(): Promise<StoredTokens | null>;
  /**
   * Calls `listener`, for as long as the client lives, whenever another client of the store may
   * have saved or forgotten the tokens: the client then reads the store, and emits `signedOut`
   * at once if the session it knew is gone.
   */
  subscribe?(listener: () => void): void;
}

/**
 * Keeps the tokens in a variable of this client: the default. Nothing script-readable outlives the
 * page, and a reload signs the user out.
 *
 * @example
 * ```ts
 * const client = createAuthClient({ baseUrl: "/api/v1", store: memoryTokenStore() });
 * ```
 */
export function memoryTokenStore(): TokenStore {
  let kept: StoredTokens | null = null;
  return {
    load: () => kept,
    save(tokens) {
      kept = tokens;
    },
  };
}

/** The part of the Web Storage API (`sessionStorage`, `localStorage`) a store uses. */
export interface KeyValueStorage {
  /** The value under `key`, or null when there is none. */
  getItem(key: string): string | null;
  /** Keeps `value` under `key`, replacing the value before. */
  setItem(key: string, value: string): void;
  /** Forgets the value under `key`. */
  removeItem(key: string): void;
}

/** The part of the Web Locks API (`navigator.locks`) a store uses. */
export interface LockManagerLike {
  /** Runs `callback` once it holds the exclusive lock `name`, releases it when the promise settles, and returns its result. */
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

/** Options of {@link webStorageTokenStore}. */
export interface WebStorageTokenStoreOptions {
  /** The storage key. Default `"portcullis.tokens"`. */
  key?: string;
  /**
   * Locks that serialise refreshes among every page of the origin. Default: none. A store in
   * `localStorage` should pass `navigator.locks`, as {@link localStorageTokenStore} does.
   */
  locks?: LockManagerLike;
  /**
   * IndexedDB (`indexedDB`), where the store keeps a copy of the tokens for the refresh to read
   * under `locks` (`loadLatest`). Default: none, and that read is of `storage`. Pass it with `locks`
   * when `storage` is `localStorage`: Chromium gives each tab its own copy of `localStorage`, updated
   * a little after another tab writes, and may hand a tab the lock before its copy holds the tokens
   * the last holder saved; the tab would refresh with the spent token and the session would end.
   */
  indexedDB?: IndexedDbFactory;
}

const defaultStorageKey = "portcullis.tokens";

function isStoredTokens(value: unknown): value is StoredTokens {
  const { accessToken, refreshToken, expiresAt, user } = (value ?? {}) as Partial<Record<keyof StoredTokens, unknown>>;
  return (
    typeof accessToken === "string" &&
    typeof refreshToken === "string" &&
    typeof expiresAt === "number" &&
    typeof (user as { id?: unknown } | null | undefined)?.id === "string"
  );
}

/**
 * Keeps the tokens as JSON in a Web Storage area (or anything with `getItem`, `setItem` and
 * `removeItem`). An entry that is not tokens reads as signed out. With `indexedDB`, every save
 * writes the IndexedDB copy first (and fails if that fails), and the refresh under `locks` reads the
 * copy: `storage` where the copy was never written (tokens saved before the copy existed).
 *
 * @example
 * ```ts
 * const store = webStorageTokenStore(window.localStorage, { key: "my-app.tokens", locks: navigator.locks, indexedDB });
 * ```
 */
export function webStorageTokenStore(storage: KeyValueStorage, options: WebStorageTokenStoreOptions = {}): TokenStore {
  const key = options.key ?? defaultStorageKey;
  const { locks } = options;
  const copy = options.indexedDB && indexedDbRecord(options.indexedDB, key);
  const store: TokenStore = {
    load() {
      try {
        const parsed: unknown = JSON.parse(storage.getItem(key) ?? "null");
        return isStoredTokens(parsed) ? parsed : null;
      } catch {
        return null;
      }
    },
    async save(tokens) {
      await copy?.write(tokens);
      if (tokens === null) storage.removeItem(key);
      else storage.setItem(key, JSON.stringify(tokens));
    },
    async loadLatest() {
      const latest = await copy?.read();
      if (latest === undefined) return store.load();
      return isStoredTokens(latest) ? latest : null;
    },
  };
  if (locks) store.runExclusive = (task) => locks.request(`${key}.refresh`, task);
  return store;
}

/** The browser globals the ready-made stores read. */
interface BrowserStorageGlobals {
  sessionStorage?: KeyValueStorage;
  localStorage?: KeyValueStorage;
  navigator?: { locks?: LockManagerLike };
  indexedDB?: IndexedDbFactory;
  addEventListener?(type: "storage", listener: (event: { key: string | null }) => void): void;
}

function browserStorage(name: "sessionStorage" | "localStorage"): KeyValueStorage {
  const storage = (globalThis as BrowserStorageGlobals)[name];
  if (!storage) throw new TypeError(`${name} is not available here; use memoryTokenStore() or a TokenStore of your own`);
  return storage;
}

/**
 * Keeps the tokens in `sessionStorage`: they survive a reload of the tab, not its closing, and
 * each tab has its own. Any script on the page can read them (an XSS flaw leaks the refresh token),
 * and a duplicated tab starts with a copy of the same refresh token: the first of the two to
 * refresh wins and the other's refresh is reuse, which ends the session for both.
 *
 * @throws {TypeError} where there is no `sessionStorage` (Node).
 * @example
 * ```ts
 * const client = createAuthClient({ baseUrl: "/api/v1", store: sessionStorageTokenStore() });
 * ```
 */
export function sessionStorageTokenStore(options: Pick<WebStorageTokenStoreOptions, "key"> = {}): TokenStore {
  return webStorageTokenStore(browserStorage("sessionStorage"), options);
}

/**
 * Keeps the tokens in `localStorage`: every tab of the origin shares one session, which survives
 * closing the browser. Refreshes are serialised across tabs with the Web Locks API
 * (`navigator.locks`), so that two tabs never refresh with the same token, and the tab that takes
 * the lock reads the tokens from a copy in IndexedDB, since its `localStorage` may not show yet
 * what the last holder saved. A browser without Web Locks refreshes unserialised, and two tabs
 * refreshing at once end the session; one without IndexedDB reads `localStorage` under the lock.
 * The browser's `storage` event tells the client at once when another tab signs out.
 *
 * Any script on the page, and any page of the origin, can read the tokens: an XSS flaw anywhere on
 * the origin leaks a refresh token that lives for days.
 *
 * @throws {TypeError} where there is no `localStorage` (Node).
 * @example
 * ```ts
 * const client = createAuthClient({ baseUrl: "/api/v1", store: localStorageTokenStore() });
 * ```
 */
export function localStorageTokenStore(options: Pick<WebStorageTokenStoreOptions, "key"> = {}): TokenStore {
  const globals = globalThis as BrowserStorageGlobals;
  const store = webStorageTokenStore(browserStorage("localStorage"), {
    ...options,
    locks: globals.navigator?.locks,
    indexedDB: globals.indexedDB,
  });
  const key = options.key ?? defaultStorageKey;
  const listen = globals.addEventListener?.bind(globalThis);
  if (listen) {
    store.subscribe = (listener) =>
      listen("storage", (event) => {
        if (event.key === key || event.key === null) listener();
      });
  }
  return store;
}
