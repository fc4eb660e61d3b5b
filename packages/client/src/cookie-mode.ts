import { type LockManagerLike, type TokenStore, memoryTokenStore } from "./token-store.js";

/** The Web Lock every page of the origin takes around a refresh by cookie. */
export const cookieRefreshLock = "portcullis.refresh-cookie";

/** `navigator.locks` where the page has it. */
function pageLocks(): LockManagerLike | undefined {
  return (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
}

/**
 * The token store of cookie mode: the access token and the user in a variable of this client,
 * and no refresh token at all (the browser holds it in the HttpOnly refresh cookie). Where the page
 * has Web Locks, `runExclusive` takes one lock of the origin, so that two tabs never refresh with
 * the same cookie at once: the second waits, then sends the cookie the first one's answer set
 * (without it the server would see the spent cookie again and end the session, RT-2).
 *
 * @example
 * ```ts
 * const store = cookieModeTokenStore(navigator.locks);
 * ```
 */
export function cookieModeTokenStore(locks: LockManagerLike | undefined = pageLocks()): TokenStore {
  const store = memoryTokenStore();
  if (locks === undefined) return store;
  return { ...store, runExclusive: (task) => locks.request(cookieRefreshLock, task) };
}
