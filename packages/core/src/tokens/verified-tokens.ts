import { setBounded } from "../bounded-cache.js";

/**
 * What verifying access tokens found, served only for the exact token text that was verified,
 * so that a token presented again skips its signature check. An entry is served only before
 * the token's `exp` (checked on every hit, with no clock tolerance) and holds only what the
 * signature covered: the token version and session are still checked on every request. At most
 * `maxEntries` are kept (0 keeps none); the oldest leave first.
 */
export interface VerifiedTokenCache<V> {
  /** What `token` was found to say, if it was verified and `now` is before its `exp`; otherwise undefined. */
  get(token: string, now: number): V | undefined;
  /** Keeps what a token that has just been verified says, until `expiresAt` (its `exp`, in epoch ms). */
  remember(token: string, value: V, expiresAt: number, now: number): void;
  /** How many tokens are kept now. */
  readonly size: number;
}

/**
 * Where a token is filed: its last dot-separated part (a JWS's signature), so that a lookup
 * hashes a few dozen characters rather than the whole token. A hit still needs the whole text
 * to be equal; a token that shares only its signature part finds nothing.
 */
const entryKey = (token: string): string => token.slice(token.lastIndexOf(".") + 1);

/** Makes a {@link VerifiedTokenCache} of at most `maxEntries` tokens. */
export function createVerifiedTokenCache<V>(maxEntries: number): VerifiedTokenCache<V> {
  const entries = new Map<string, { token: string; value: V; expiresAt: number }>();
  return {
    get(token, now) {
      const key = entryKey(token);
      const entry = entries.get(key);
      if (entry === undefined || entry.token !== token) return undefined;
      if (now < entry.expiresAt) return entry.value;
      entries.delete(key);
      return undefined;
    },
    remember(token, value, expiresAt, now) {
      if (maxEntries > 0 && now < expiresAt) setBounded(entries, entryKey(token), { token, value, expiresAt }, maxEntries);
    },
    get size() {
      return entries.size;
    },
  };
}
