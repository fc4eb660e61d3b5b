import type { KeyValueStorage, LockManagerLike } from "@portcullis/client";

/**
 * A Web Storage area in a Map, as `localStorage` is to every page of an origin: for Node tests.
 *
 * @example
 * ```ts
 * const storage = mapStorage();
 * const store = webStorageTokenStore(storage, { locks: inProcessLocks() });
 * storage.entries.size; // 1 once signed in
 * ```
 */
export function mapStorage(): KeyValueStorage & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => {
      entries.set(key, String(value));
    },
    removeItem: (key) => {
      entries.delete(key);
    },
  };
}

/**
 * Exclusive locks by name within this process, with the semantics of `navigator.locks.request`:
 * a callback runs when every earlier request for the name has settled. `held` counts the
 * callbacks that ran.
 *
 * @example
 * ```ts
 * const locks = inProcessLocks();
 * vi.stubGlobal("navigator", { locks });
 * ```
 */
export function inProcessLocks(): LockManagerLike & { held: number } {
  const queues = new Map<string, Promise<unknown>>();
  const locks = {
    held: 0,
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const previous = queues.get(name) ?? Promise.resolve();
      const turn = previous.then(() => {
        locks.held += 1;
        return callback();
      });
      queues.set(
        name,
        turn.catch(() => undefined),
      );
      return turn;
    },
  };
  return locks;
}
