import type { Auth } from "../auth.js";
import { setBounded } from "../bounded-cache.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { isAdministrator } from "../organizations/organization-access.js";
import { organizationStoreOf } from "../organizations/session-organization.js";
import type { ApiKeyState } from "../storage/types.js";
import { hitTiers } from "../throttle/throttle.js";
import { isWellFormedApiKey } from "./api-key-format.js";
import { apiKeyCacheId, apiKeysOf } from "./manage-api-keys.js";

/**
 * Who a verified API key speaks for: what `requireAuth` puts on the request for a key (AK-2). It
 * is frozen, lists included.
 */
export interface ApiKeyContext {
  readonly kind: "api_key";
  readonly keyId: string;
  readonly userId: string;
  /** The user's roles now (read with the key), not as they were when it was made. */
  readonly roles: readonly string[];
  /** The key's scopes: `requireAuth`'s `scopes` option reads them. */
  readonly scopes: readonly string[];
  /** The organization the key belongs to, or null for a user's own key. */
  readonly orgId: string | null;
  readonly tokenVersion: number;
}

/** How often a key's `lastUsedAt` is written at most: once a minute (AK-4). */
export const lastUsedIntervalMs = 60_000;

const invalidKey = () => new AuthError(ErrorCode.InvalidToken, "The API key is invalid, expired or revoked");
const cacheLimit = 10_000;

/** Per instance: each key's context while its state is cached, and when this instance last recorded its use. */
const instances = new WeakMap<Auth, { contexts: Map<string, ApiKeyContext>; recorded: Map<string, number> }>();
function instanceOf(auth: Auth) {
  let state = instances.get(auth);
  if (state === undefined) {
    state = { contexts: new Map(), recorded: new Map() };
    instances.set(auth, state);
  }
  return state;
}

/**
 * Verifies an API key (AK-2, AK-3): its form and checksum first (a malformed key, or one of another
 * environment, is refused with no storage read), then one read of the key by its SHA-256 with its
 * user: not revoked, not expired, the user present, enabled and at the key's token version (TV-2);
 * for an organization's key, its maker still one of the organization's administrators (AK-6).
 * With `tokenStateCacheSeconds` the state is cached per key as an access token's is, and dropped
 * at once by a revocation here or on the revocation channel. With `apiKeys.rateLimit`, each
 * request takes one from the key's budget (42900 with `Retry-After`, AK-5). Its use is recorded
 * (`lastUsedAt`) at most once a minute per key, after the answer, never failing it (AK-4).
 *
 * @throws {AuthError} 40101 for any key that is not a live key, 42900 past its rate limit.
 * @example
 * ```ts
 * const { userId, scopes } = await verifyApiKey(auth, { key: "pc_live_…" });
 * ```
 */
export async function verifyApiKey(auth: Auth, input: { key: string }): Promise<ApiKeyContext> {
  const key = requiredString(input.key, "key");
  if (!auth.config.apiKeys.enabled || !isWellFormedApiKey(key, auth.config.apiKeys.environment)) throw invalidKey();
  const hash = sha256(key);
  const now = auth.now();
  const context = cachedContext(auth, hash, now) ?? (await readContext(auth, hash, now));
  const { rateLimit } = auth.config.apiKeys;
  if (rateLimit.length > 0) {
    const retryAt = await hitTiers(auth, `apikey:${context.keyId}`, rateLimit, now);
    if (retryAt !== 0) {
      throw new AuthError(ErrorCode.TooManyAttempts, "This API key's rate limit is spent; try again later", {
        retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now) / 1000)),
      });
    }
  }
  recordUse(auth, context.keyId, now);
  return context;
}

function cachedContext(auth: Auth, hash: string, now: number): ApiKeyContext | undefined {
  const cacheMs = auth.config.tokenStateCacheSeconds * 1000;
  if (cacheMs === 0) return undefined;
  const entry = auth.tokenStateCache.get(apiKeyCacheId(hash));
  const age = entry === undefined ? Number.NaN : now - entry.checkedAt;
  if (entry === undefined || !(age >= 0 && age < cacheMs) || now >= entry.sessionExpiresAt) return undefined;
  return instanceOf(auth).contexts.get(hash);
}

async function readContext(auth: Auth, hash: string, now: number): Promise<ApiKeyContext> {
  const generation = auth.revocations.generation;
  const state = await apiKeysOf(auth).findApiKeyByHash(hash);
  if (state === null || !isLive(state, now)) throw invalidKey();
  const { key, user } = state;
  if (key.orgId !== null && !(await makerHoldsKeyAuthority(auth, key.orgId, key.userId))) throw invalidKey();
  const context: ApiKeyContext = Object.freeze({
    kind: "api_key",
    keyId: key.id,
    userId: key.userId,
    roles: Object.freeze([...(user?.roles ?? [])]),
    scopes: Object.freeze([...key.scopes]),
    orgId: key.orgId,
    tokenVersion: key.tokenVersion,
  });
  const last = instanceOf(auth).recorded.get(key.id) ?? 0;
  if (key.lastUsedAt !== null && key.lastUsedAt > last) setBounded(instanceOf(auth).recorded, key.id, key.lastUsedAt, cacheLimit);
  if (auth.config.tokenStateCacheSeconds > 0 && auth.revocations.generation === generation) {
    const entry = {
      userId: key.userId,
      tokenVersion: key.tokenVersion,
      org: undefined,
      checkedAt: now,
      sessionExpiresAt: key.expiresAt,
    };
    setBounded(auth.tokenStateCache, apiKeyCacheId(hash), entry, cacheLimit);
    setBounded(instanceOf(auth).contexts, hash, context, cacheLimit);
  }
  return context;
}

/** Whether the maker of an organization's key is still one of its administrators (AK-6): read with organizations on, else false. */
async function makerHoldsKeyAuthority(auth: Auth, orgId: string, userId: string): Promise<boolean> {
  const store = organizationStoreOf(auth);
  return store !== null && isAdministrator(auth, await store.findMembership(orgId, userId));
}

/** A key not revoked nor expired, whose user is present, enabled and at its token version. */
function isLive({ key, user }: ApiKeyState, now: number): boolean {
  return (
    key.revokedAt === null && key.expiresAt > now && user !== null && !user.disabled && user.tokenVersion === key.tokenVersion
  );
}

/** Records the key's use unless this instance, or the store as read, has it within the minute (AK-4); failures go to `onInternalError`. */
function recordUse(auth: Auth, keyId: string, now: number): void {
  const { recorded } = instanceOf(auth);
  const last = recorded.get(keyId);
  if (last !== undefined && now - last < lastUsedIntervalMs) return;
  setBounded(recorded, keyId, now, cacheLimit);
  apiKeysOf(auth)
    .recordApiKeyUse([{ id: keyId, at: now }], lastUsedIntervalMs)
    .catch((error: unknown) => {
      try {
        auth.onInternalError(error, "api-key-use");
      } catch {
        // Nobody is left to tell: the request's answer must not change for it.
      }
    });
}
