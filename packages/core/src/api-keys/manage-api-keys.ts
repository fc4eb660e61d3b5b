import type { Auth } from "../auth.js";
import { durationSeconds } from "../config-values.js";
import { randomId } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { readVisibleText, requiredString } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type { ApiKeyRecord, ApiKeyStore, UserRecord } from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { revoked } from "../users/token-state.js";
import { scopePattern } from "./api-key-config.js";
import { newApiKey, startOfApiKey } from "./api-key-format.js";

/** An API key as its owner and administrators see it: never its secret. Times are epoch milliseconds. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  /** The key's first characters (`pc_live_AbCd`), to tell keys apart. */
  start: string;
  scopes: string[];
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** The organization the key belongs to, or null for a user's own key. */
  orgId: string | null;
}

/** The view of a stored key. */
export function apiKeyInfo({
  id,
  name,
  start,
  scopes,
  createdAt,
  expiresAt,
  lastUsedAt,
  revokedAt,
  orgId,
}: ApiKeyRecord): ApiKeyInfo {
  return { id, name, start, scopes: [...scopes], createdAt, expiresAt, lastUsedAt, revokedAt, orgId };
}

/** The API key store, or 40400 when API keys are off: their routes answer as unknown ones. */
export function apiKeysOf(auth: Auth): ApiKeyStore {
  const store = auth.config.apiKeys.enabled ? auth.storage.apiKeys : undefined;
  if (store === undefined) throw new AuthError(ErrorCode.NotFound, "API keys are not enabled");
  return store;
}

/** The longest key name, in characters. */
export const maxApiKeyNameLength = 64;

/** The most scopes one key may hold. */
export const maxScopes = 50;

/**
 * Reads a key's or a service account's scopes: a list of at most 50 distinct scopes of 1 to 128
 * visible ASCII characters, each of `allowed` when the host defines them (not null).
 *
 * @throws {AuthError} 40002 not a list of strings, 42200 a scope of the wrong form, too many, or not defined.
 */
export function readScopes(value: unknown, allowed: readonly string[] | null): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((scope) => typeof scope === "string")) {
    throw new AuthError(ErrorCode.MalformedParameter, "scopes must be a list of strings");
  }
  const scopes = [...new Set(value as string[])];
  if (scopes.length > maxScopes || !scopes.every((scope) => scopePattern.test(scope))) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      `scopes must be at most ${maxScopes} scopes of 1 to 128 visible ASCII characters`,
    );
  }
  const unknown = allowed === null ? undefined : scopes.find((scope) => !allowed.includes(scope));
  if (unknown !== undefined) throw new AuthError(ErrorCode.ValidationFailed, `scopes may hold only ${allowed?.join(", ")}`);
  return scopes;
}

/** The lifetime a request asks, in seconds: the default when absent, at most `apiKeys.maxTtl`. */
function lifetimeOf(auth: Auth, value: unknown): number {
  const { defaultTtlSeconds, maxTtlSeconds } = auth.config.apiKeys;
  if (value === undefined || value === null) return defaultTtlSeconds;
  let seconds: number;
  try {
    seconds = durationSeconds(value as never, "expiresIn");
  } catch {
    throw new AuthError(ErrorCode.ValidationFailed, 'expiresIn must be whole seconds or a string such as "30d"');
  }
  if (seconds > maxTtlSeconds)
    throw new AuthError(ErrorCode.ValidationFailed, `expiresIn must be at most ${maxTtlSeconds} seconds`);
  return seconds;
}

/** The input of {@link createApiKey}. */
export interface CreateApiKeyInput extends ReauthenticationProof {
  userId: string;
  name: string;
  scopes?: string[];
  /** Its lifetime: whole seconds or a string such as `"30d"`; default `apiKeys.defaultTtl`, at most `apiKeys.maxTtl`. */
  expiresIn?: number | string;
}

/** What {@link createApiKey} answers: the key itself, shown this once (AK-2), and its view. */
export interface CreatedApiKey extends ApiKeyInfo {
  /** The secret: `pc_<environment>_…`. Stored only as its SHA-256; it cannot be shown again. */
  key: string;
}

/**
 * Makes an API key for the signed-in user (`POST /auth/api-keys`), who re-authenticates first
 * (STUP-3): a name, scopes (strings the host defines), a lifetime (`apiKeys.defaultTtl`, at most
 * `apiKeys.maxTtl`). The key is answered once and stored only as its SHA-256 (AK-2); it acts for
 * the user at their token version, so a password change, a disabled account or "sign out
 * everywhere" ends it (TV-2). At most `apiKeys.maxPerUser` live keys per user.
 *
 * @throws {AuthError} 40400 API keys off, 40001/40100/40103 re-authentication, 42200 a bad name, scope or lifetime, 40900 too many keys.
 * @example
 * ```ts
 * const { key } = await createApiKey(auth, { userId, sessionId, name: "CI", scopes: ["deploy"] });
 * ```
 */
export async function createApiKey(auth: Auth, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  return makeApiKey(auth, user, input, null);
}

/**
 * Checks a new key's name, scopes and lifetime, the re-authentication, and the user's live keys
 * (`apiKeys.maxPerUser`, organization keys they made counted too); stores the key, of `orgId` when
 * not null, and answers it once.
 */
export async function makeApiKey(
  auth: Auth,
  user: UserRecord,
  input: Omit<CreateApiKeyInput, "userId">,
  orgId: string | null,
): Promise<CreatedApiKey> {
  const store = apiKeysOf(auth);
  const name = readVisibleText(input.name, "name", maxApiKeyNameLength);
  const scopes = readScopes(input.scopes, auth.config.apiKeys.scopes);
  const lifetime = lifetimeOf(auth, input.expiresIn);
  await requireRecentAuthentication(auth, user, input);
  const now = auth.now();
  const live = (await store.listApiKeys(user.id)).filter((key) => key.revokedAt === null && key.expiresAt > now);
  if (live.length >= auth.config.apiKeys.maxPerUser) {
    throw new AuthError(
      ErrorCode.Conflict,
      `At most ${auth.config.apiKeys.maxPerUser} live API keys per account: revoke one first`,
    );
  }
  const key = newApiKey(auth.config.apiKeys.environment, auth.randomBytes);
  const record: ApiKeyRecord = {
    id: randomId(auth),
    userId: user.id,
    hash: sha256(key),
    start: startOfApiKey(key),
    name,
    scopes,
    tokenVersion: user.tokenVersion,
    orgId,
    createdAt: now,
    expiresAt: now + lifetime * 1000,
    lastUsedAt: null,
    revokedAt: null,
  };
  await store.createApiKey(record);
  auth.emit({ type: "api_key.created", userId: user.id, keyId: record.id, at: now, ...(orgId === null ? {} : { orgId }) });
  return { key, ...apiKeyInfo(record) };
}

/** The signed-in user's API keys (`GET /auth/api-keys`), revoked and expired ones included, newest first: never a secret. */
export async function listApiKeys(auth: Auth, input: { userId: string }): Promise<ApiKeyInfo[]> {
  const store = apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  return (await store.listApiKeys(user.id)).filter((key) => key.orgId === null).map(apiKeyInfo);
}

const noSuchKey = () => new AuthError(ErrorCode.NotFound, "No such API key");

/**
 * Renames one of the signed-in user's live keys (`PATCH /auth/api-keys/:id`).
 *
 * @throws {AuthError} 40400 no such live key of the user's, 42200 a bad name.
 */
export async function renameApiKey(auth: Auth, input: { userId: string; id: string; name: string }): Promise<{ renamed: true }> {
  const store = apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  const name = readVisibleText(input.name, "name", maxApiKeyNameLength);
  if (!(await store.renameApiKey(user.id, requiredString(input.id, "id"), name))) throw noSuchKey();
  return { renamed: true };
}

/**
 * Revokes one of the signed-in user's keys (`DELETE /auth/api-keys/:id`): refused from the next
 * request on, here at once and on other instances through the revocation channel or within
 * `tokenStateCacheSeconds` (AK-2).
 *
 * @throws {AuthError} 40400 no such unrevoked key of the user's (another user's id answers the same).
 */
export async function revokeApiKey(auth: Auth, input: { userId: string; id: string }): Promise<{ revoked: true }> {
  const store = apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  return revokeWith(auth, store, user.id, requiredString(input.id, "id"), user.id);
}

export async function revokeWith(
  auth: Auth,
  store: ApiKeyStore,
  owner: string | null,
  id: string,
  by: string,
): Promise<{ revoked: true }> {
  const record = await store.revokeApiKey(owner, id, auth.now());
  if (record === null) throw noSuchKey();
  revoked(auth, { kind: "session", sessionId: apiKeyCacheId(record.hash) });
  auth.emit({ type: "api_key.revoked", userId: record.userId, keyId: record.id, by, at: auth.now() });
  return { revoked: true };
}

/** The id a key's checked state is cached and revoked under, beside the sessions' (`tokenStateCacheSeconds`). */
export const apiKeyCacheId = (hash: string): string => `apikey:${hash}`;

/** Any user's API keys (`GET /auth/admin/users/:id/api-keys`), for holders of `adminRole`: never a secret. */
export async function listUserApiKeys(auth: Auth, input: { userId: string }): Promise<ApiKeyInfo[]> {
  const store = apiKeysOf(auth);
  return (await store.listApiKeys(requiredString(input.userId, "userId"))).map(apiKeyInfo);
}

/**
 * Revokes any user's key (`DELETE /auth/admin/users/:id/api-keys/:keyId`), by an administrator of
 * the instance (the route asks `adminRole`) who re-authenticates (STUP-3).
 *
 * @throws {AuthError} 40400 no such unrevoked key of that user, 40001/40100/40103 re-authentication.
 */
export async function revokeUserApiKey(
  auth: Auth,
  input: ReauthenticationProof & { adminUserId: string; userId: string; id: string },
): Promise<{ revoked: true }> {
  const store = apiKeysOf(auth);
  const admin = await signedInUser(auth, input.adminUserId);
  await requireRecentAuthentication(auth, admin, input);
  return revokeWith(auth, store, requiredString(input.userId, "userId"), requiredString(input.id, "id"), admin.id);
}
