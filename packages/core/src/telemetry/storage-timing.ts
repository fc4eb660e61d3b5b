import type { Storage } from "../storage/types.js";

/** Records how long one storage call took, in seconds; `errorType` when it threw or rejected. */
export type StorageTimer = (attributes: StorageCallAttributes, seconds: number, errorType: string | undefined) => void;

/** The attributes of one storage operation, made once per operation rather than per call (a type, so it is assignable to OpenTelemetry's `Attributes`). */
export type StorageCallAttributes = {
  readonly "portcullis.storage.store": string;
  readonly "portcullis.storage.operation": string;
};

/**
 * Every method of every store, so that a method added to an interface must be added here too
 * (the type checker refuses a missing one). `findLegacyRefreshToken` and `findTokenState` are optional: timed when present.
 */
const storeMethods = {
  users: {
    create: true,
    createAccount: true,
    findById: true,
    findByUsernameKey: true,
    findByVerifiedEmail: true,
    setEmail: true,
    update: true,
    replacePasswordHash: true,
    incrementTokenVersion: true,
    incrementTokenVersionsBySource: true,
    list: true,
  },
  totp: { get: true, putPending: true, enable: true, remove: true, advanceStep: true, replaceSecret: true },
  recoveryCodes: { replace: true, has: true, consume: true, count: true, removeAll: true },
  sessions: {
    createSession: true,
    findSession: true,
    findTokenState: true,
    revokeSession: true,
    setTokenVersion: true,
    revokeUserSessions: true,
    revokeAll: true,
    listByUser: true,
    rotateRefresh: true,
    findLegacyRefreshToken: true,
  },
  challenges: { put: true, find: true, consume: true, takeAttempt: true, deleteExpired: true },
  counters: { hit: true, peek: true, reset: true },
  passkeys: {
    create: true,
    findById: true,
    listByUser: true,
    updateCounter: true,
    rename: true,
    delete: true,
    deleteUnlessLast: true,
  },
  identities: { link: true, find: true, listByUser: true, findByVerifiedEmail: true, unlink: true },
  settings: { get: true, set: true, replace: true },
} satisfies { [S in keyof Storage]: Record<keyof Storage[S], true> };

/** The name `error.type` gets for a failed storage call: the error's class, never its message (which may quote a row). */
function errorTypeOf(error: unknown): string {
  return error instanceof Error ? error.name : "_OTHER";
}

/**
 * A view of `storage` whose every store method reports its duration to `timer`, made once when
 * telemetry turns on; the stores themselves are not changed. Anything else on the storage object
 * or its stores (a memory storage's sizes) is reached through the prototype.
 */
export function timedStorage(storage: Storage, timer: StorageTimer): Storage {
  const timed = Object.create(storage) as Record<string, unknown>;
  for (const [storeName, methods] of Object.entries(storeMethods)) {
    const store = (storage as unknown as Record<string, Record<string, unknown>>)[storeName];
    if (store === undefined) continue;
    const timedStore = Object.create(store) as Record<string, unknown>;
    for (const operation of Object.keys(methods)) {
      if (typeof store[operation] !== "function") continue;
      const attributes: StorageCallAttributes = {
        "portcullis.storage.store": storeName,
        "portcullis.storage.operation": operation,
      };
      timedStore[operation] = async (...args: unknown[]) => {
        const started = performance.now();
        let errorType: string | undefined;
        try {
          // Looked up at each call, as a caller of the store itself would.
          return await (store[operation] as (...args: unknown[]) => Promise<unknown>).apply(store, args);
        } catch (error) {
          errorType = errorTypeOf(error);
          throw error;
        } finally {
          timer(attributes, (performance.now() - started) / 1000, errorType);
        }
      };
    }
    timed[storeName] = timedStore;
  }
  return timed as unknown as Storage;
}
