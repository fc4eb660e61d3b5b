import type { ApiKeyRecord, ApiKeyStore } from "../../storage/api-key-store.js";
import type { Storage } from "../../storage/types.js";
import type { SuiteContext } from "./harness.js";
import { BASE_TIME, createUser, uniqueHash, uniqueId } from "./samples.js";

/** An API key of `userId` with a fresh id and hash, made at {@link BASE_TIME}, living 90 days. */
export function sampleApiKey(userId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: uniqueId("key"),
    userId,
    hash: uniqueHash(),
    start: "pc_live_AbCd",
    name: "CI deploys",
    scopes: ["deploy", "reports:read"],
    tokenVersion: 0,
    orgId: null,
    createdAt: BASE_TIME,
    expiresAt: BASE_TIME + 90 * 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

function apiKeysOf(storage: Storage): ApiKeyStore {
  if (storage.apiKeys === undefined) {
    throw new Error("this storage has no apiKeys store: implement it, or opt out with skip: { apiKeys: reason }");
  }
  return storage.apiKeys;
}

/** Registers the `apiKeys` suite: keys found by their hash with their user's standing, listed, renamed, revoked once, their use recorded at most once an interval. */
export function apiKeysSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("apiKeys", () => {
    it("a stored key is found by its hash with its user's token version, disabled flag and roles; an unknown hash is null", async () => {
      const storage = await makeStorage();
      const keys = apiKeysOf(storage);
      const userId = await createUser(storage, { roles: ["reports"] });
      const key = sampleApiKey(userId);
      await keys.createApiKey(key);
      expect(await keys.findApiKeyByHash(key.hash)).toEqual({
        key,
        user: { tokenVersion: 0, disabled: false, roles: ["reports"] },
      });
      expect(await keys.findApiKeyByHash(uniqueHash())).toBeNull();
    });
  });
}
