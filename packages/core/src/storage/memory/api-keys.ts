import type { ApiKeyRecord, ApiKeyStore } from "../api-key-store.js";
import { compareCodePoints } from "../code-point-order.js";
import type { UserRecord } from "../types.js";
import { frozenCopy, frozenWith } from "./records.js";

/**
 * The memory {@link ApiKeyStore}: frozen keys by hash, with an index of ids; the user read from the
 * user store. A key is handed out as stored, with no copy (every request with a key reads one); a
 * write replaces it.
 */
export function memoryApiKeys(user: (id: string) => UserRecord | null) {
  const byHash = new Map<string, ApiKeyRecord>();
  const hashById = new Map<string, string>();
  const keyOf = (id: string) => {
    const hash = hashById.get(id);
    return hash === undefined ? undefined : byHash.get(hash);
  };
  const replace = (key: ApiKeyRecord, changes: Partial<ApiKeyRecord>) => {
    const changed = frozenWith(key, changes);
    byHash.set(key.hash, changed);
    return changed;
  };
  const store: ApiKeyStore = {
    async createApiKey(key) {
      byHash.set(key.hash, frozenCopy(key));
      hashById.set(key.id, key.hash);
    },
    async findApiKeyByHash(hash) {
      const key = byHash.get(hash);
      if (key === undefined) return null;
      const owner = user(key.userId);
      return {
        key,
        user: owner === null ? null : { tokenVersion: owner.tokenVersion, disabled: owner.disabled, roles: owner.roles },
      };
    },
    async listApiKeys(userId) {
      return [...byHash.values()]
        .filter((key) => key.userId === userId)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id));
    },
    async listOrganizationApiKeys(orgId) {
      return [...byHash.values()]
        .filter((key) => key.orgId === orgId)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id));
    },
    async renameApiKey(userId, id, name) {
      const key = keyOf(id);
      if (key === undefined || key.userId !== userId || key.revokedAt !== null) return false;
      replace(key, { name });
      return true;
    },
    async revokeApiKey(userId, id, now) {
      const key = keyOf(id);
      if (key === undefined || (userId !== null && key.userId !== userId) || key.revokedAt !== null) return null;
      return replace(key, { revokedAt: now });
    },
    async recordApiKeyUse(uses, minIntervalMs) {
      for (const { id, at } of uses) {
        const key = keyOf(id);
        if (key !== undefined && (key.lastUsedAt === null || key.lastUsedAt <= at - minIntervalMs))
          replace(key, { lastUsedAt: at });
      }
    },
  };
  return { store, size: () => byHash.size };
}
