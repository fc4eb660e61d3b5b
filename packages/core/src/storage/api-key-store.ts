import type { UserRecord } from "./user-store.js";

/**
 * An API key (a personal access token, AK-1): a long-lived secret a script presents as
 * `Authorization: Bearer pc_<environment>_<secret><checksum>`, stored only as the SHA-256 of the
 * whole key. It acts for its user, within its scopes, until it expires or is revoked, and stops at
 * once when the user is disabled or their token version rises (TV-2).
 */
export interface ApiKeyRecord {
  /** Random, not secret: how lists, renames and revocations name the key. */
  id: string;
  userId: string;
  /** The SHA-256 (hex) of the whole key: what a request's key is found by. */
  hash: string;
  /** The key's first characters (`pc_live_AbCd`), so a person can tell keys apart: never enough to use it. */
  start: string;
  /** A name its owner chose, checked like a passkey label. */
  name: string;
  /** Strings the host defines (`"reports:read"`); `requireAuth`'s `scopes` ask for them. */
  scopes: string[];
  /** The user's token version when the key was made: a raised version ends the key (TV-2). */
  tokenVersion: number;
  /** The organization the key belongs to, or null for a user's own key. */
  orgId: string | null;
  createdAt: number;
  expiresAt: number;
  /** When the key was last used, written at most once a minute per key (AK-4); null before its first use. */
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** What the check of a presented key reads: the key, and the standing of its user, in one read. */
export interface ApiKeyState {
  key: ApiKeyRecord;
  /** The key's user, or null when no user has that id any more. */
  user: Pick<UserRecord, "tokenVersion" | "disabled" | "roles"> | null;
}

/** API keys. Every write is one conditional statement; nothing here needs a transaction. */
export interface ApiKeyStore {
  /** Stores a new key; its id and hash are random, so they never meet an existing one. */
  createApiKey(key: ApiKeyRecord): Promise<void>;
  /** The key whose hash this is (revoked and expired ones included: the caller checks) with its user's state, or null. */
  findApiKeyByHash(hash: string): Promise<ApiKeyState | null>;
  /** A user's keys (their own and the organization keys they made), revoked and expired ones included, newest first. */
  listApiKeys(userId: string): Promise<ApiKeyRecord[]>;
  /** An organization's keys, revoked and expired ones included, newest first. */
  listOrganizationApiKeys(orgId: string): Promise<ApiKeyRecord[]>;
  /** Renames a user's live key; false for an unknown, revoked or another user's key. */
  renameApiKey(userId: string, id: string, name: string): Promise<boolean>;
  /**
   * Revokes a key of `userId` (any user's when null: an administrator) that is not revoked yet;
   * the revoked record, or null when there was none to revoke.
   */
  revokeApiKey(userId: string | null, id: string, now: number): Promise<ApiKeyRecord | null>;
  /**
   * Records that keys were used: each key's `lastUsedAt` becomes `at` where it is older than
   * `at - minIntervalMs` (or null), so that concurrent instances write a key at most once per
   * interval (AK-4). Unknown ids are passed over.
   */
  recordApiKeyUse(uses: readonly { id: string; at: number }[], minIntervalMs: number): Promise<void>;
}
