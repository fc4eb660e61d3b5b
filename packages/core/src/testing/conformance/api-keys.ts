import type { ApiKeyRecord, ApiKeyStore } from "../../storage/api-key-store.js";
import type { Storage } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere, tryToMutate } from "./harness.js";
import { sampleMembership, sampleOrganization } from "./organizations.js";
import { BASE_TIME, createUser, uniqueHash, uniqueId } from "./samples.js";

/** An API key of `userId` with a fresh id and hash, made at the kit's base time, living 90 days. */
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

const MINUTE = 60_000;

function apiKeysOf(storage: Storage): ApiKeyStore {
  if (storage.apiKeys === undefined) {
    throw new Error("this storage has no apiKeys store: implement it, or opt out with skip: { apiKeys: reason }");
  }
  return storage.apiKeys;
}

/** An organization's id the key may name: a real organization's where the storage keeps them, else a fresh id. */
async function anOrganizationId(storage: Storage, ownerId: string): Promise<string> {
  const organization = sampleOrganization();
  if (storage.organizations === undefined) return organization.id;
  if (!(await storage.organizations.createOrganization(organization, sampleMembership(organization.id, ownerId, ["owner"])))) {
    throw new Error(`conformance setup: could not create organization ${organization.id}`);
  }
  return organization.id;
}

/** The storage, its key store, a new user and a stored key of theirs. */
async function withKey(makeStorage: SuiteContext["makeStorage"], overrides: Partial<ApiKeyRecord> = {}) {
  const storage = await makeStorage();
  const keys = apiKeysOf(storage);
  const userId = await createUser(storage);
  const key = sampleApiKey(userId, overrides);
  await keys.createApiKey(key);
  return { storage, keys, userId, key };
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

    it("every field is stored and read back: scopes none, one or many (awkward strings kept), an organization's key and a user's own, times set or null", async () => {
      const storage = await makeStorage();
      const keys = apiKeysOf(storage);
      const userId = await createUser(storage);
      const orgId = await anOrganizationId(storage, userId);
      const stored = [
        sampleApiKey(userId, { scopes: [], name: "Zoë's \u{1F600} 'key' \"x\" \\ %_", start: "pc_test_Zz09" }),
        sampleApiKey(userId, { scopes: ["reports:read"], orgId, tokenVersion: 7, createdAt: BASE_TIME + 1 }),
        sampleApiKey(userId, {
          scopes: ["a", "b c", "ü:*", "reports:read"],
          createdAt: BASE_TIME + 2,
          expiresAt: BASE_TIME + 2 + 365 * 86_400_000,
          lastUsedAt: BASE_TIME + 3,
          revokedAt: BASE_TIME + 4,
        }),
      ];
      for (const key of stored) await keys.createApiKey(key);
      for (const key of stored) expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual(key);
      expect(await keys.listApiKeys(userId)).toEqual([...stored].reverse());
    });

    it("findApiKeyByHash answers revoked and expired keys too (the caller checks them), and reads the user's standing as it is now", async () => {
      const { storage, keys, userId, key } = await withKey(makeStorage, { expiresAt: BASE_TIME + 1 });
      const revoked = sampleApiKey(userId, { revokedAt: BASE_TIME + 5 });
      await keys.createApiKey(revoked);
      expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual(key);
      expect((await keys.findApiKeyByHash(revoked.hash))?.key).toEqual(revoked);

      await storage.users.update(userId, { disabled: true, roles: ["admin", "reports"] }, BASE_TIME + 6);
      expect(await storage.users.incrementTokenVersion(userId, BASE_TIME + 7)).toBe(1);
      expect((await keys.findApiKeyByHash(key.hash))?.user).toEqual({
        tokenVersion: 1,
        disabled: true,
        roles: ["admin", "reports"],
      });
    });

    it("findApiKeyByHash answers user null for a key whose user does not exist, where the store accepts such a key", async () => {
      const keys = apiKeysOf(await makeStorage());
      const key = sampleApiKey(uniqueId("user"));
      try {
        await keys.createApiKey(key);
      } catch {
        // A store whose keys must point at a user (an SQL foreign key) refuses the key: there is then no such key to find.
        return;
      }
      expect(await keys.findApiKeyByHash(key.hash)).toEqual({ key, user: null });
    });

    it("listApiKeys lists the user's keys only, revoked and expired ones included, newest first; a user with none, or unknown, has []", async () => {
      const storage = await makeStorage();
      const keys = apiKeysOf(storage);
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const made = [BASE_TIME + 20, BASE_TIME, BASE_TIME + 30, BASE_TIME + 10].map((createdAt, index) =>
        sampleApiKey(userId, {
          createdAt,
          revokedAt: index === 1 ? BASE_TIME + 40 : null,
          expiresAt: createdAt + (index === 3 ? 1 : 86_400_000),
        }),
      );
      for (const key of made) await keys.createApiKey(key);
      await keys.createApiKey(sampleApiKey(otherId, { createdAt: BASE_TIME + 25 }));
      expect(await keys.listApiKeys(userId)).toEqual([made[2], made[0], made[3], made[1]]);
      expect(await keys.listApiKeys(otherId)).toHaveLength(1);
      expect(await keys.listApiKeys(await createUser(storage))).toEqual([]);
      expect(await keys.listApiKeys(uniqueId("user"))).toEqual([]);
    });

    it("AK-6: listOrganizationApiKeys lists an organization's keys only, of every maker, revoked and expired ones included, newest first", async () => {
      const storage = await makeStorage();
      const keys = apiKeysOf(storage);
      const ownerId = await createUser(storage);
      const otherId = await createUser(storage);
      const orgId = await anOrganizationId(storage, ownerId);
      const otherOrgId = await anOrganizationId(storage, otherId);
      const made = [
        sampleApiKey(ownerId, { orgId, createdAt: BASE_TIME + 10 }),
        sampleApiKey(otherId, { orgId, createdAt: BASE_TIME + 30, revokedAt: BASE_TIME + 40 }),
        sampleApiKey(ownerId, { orgId, createdAt: BASE_TIME + 20, expiresAt: BASE_TIME + 21 }),
      ];
      for (const key of made) await keys.createApiKey(key);
      await keys.createApiKey(sampleApiKey(ownerId, { createdAt: BASE_TIME + 50 }));
      await keys.createApiKey(sampleApiKey(otherId, { orgId: otherOrgId, createdAt: BASE_TIME + 60 }));
      expect(await keys.listOrganizationApiKeys(orgId)).toEqual([made[1], made[2], made[0]]);
      expect(await keys.listOrganizationApiKeys(otherOrgId)).toHaveLength(1);
      expect(await keys.listOrganizationApiKeys(uniqueId("org"))).toEqual([]);
      expect(await keys.listApiKeys(ownerId)).toHaveLength(3);
    });

    it("renameApiKey renames the user's live key (to its own name too); another user's, a revoked or an unknown key is refused and unchanged", async () => {
      const { storage, keys, userId, key } = await withKey(makeStorage);
      expect(await keys.renameApiKey(userId, key.id, "Nightly reports")).toBe(true);
      expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual({ ...key, name: "Nightly reports" });
      expect(await keys.renameApiKey(userId, key.id, "Nightly reports")).toBe(true);

      const otherId = await createUser(storage);
      expect(await keys.renameApiKey(otherId, key.id, "Taken over")).toBe(false);
      expect(await keys.renameApiKey(uniqueId("user"), key.id, "Taken over")).toBe(false);
      expect(await keys.renameApiKey(userId, uniqueId("key"), "Unknown")).toBe(false);
      const revoked = sampleApiKey(userId, { revokedAt: BASE_TIME + 1 });
      await keys.createApiKey(revoked);
      expect(await keys.renameApiKey(userId, revoked.id, "Revived")).toBe(false);
      expect((await keys.findApiKeyByHash(key.hash))?.key.name).toBe("Nightly reports");
      expect((await keys.findApiKeyByHash(revoked.hash))?.key).toEqual(revoked);
    });

    it("AK-2: revokeApiKey revokes a user's own key, or any user's for an administrator (userId null), once; another user's, an unknown or a revoked key is null", async () => {
      const { storage, keys, userId, key } = await withKey(makeStorage);
      const otherId = await createUser(storage);
      expect(await keys.revokeApiKey(otherId, key.id, BASE_TIME + 1)).toBeNull();
      expect(await keys.revokeApiKey(uniqueId("user"), key.id, BASE_TIME + 1)).toBeNull();
      expect(await keys.revokeApiKey(userId, uniqueId("key"), BASE_TIME + 1)).toBeNull();
      expect(await keys.revokeApiKey(null, uniqueId("key"), BASE_TIME + 1)).toBeNull();
      expect((await keys.findApiKeyByHash(key.hash))?.key.revokedAt).toBeNull();

      expect(await keys.revokeApiKey(userId, key.id, BASE_TIME + 2)).toEqual({ ...key, revokedAt: BASE_TIME + 2 });
      expect(await keys.revokeApiKey(userId, key.id, BASE_TIME + 3)).toBeNull();
      expect(await keys.revokeApiKey(null, key.id, BASE_TIME + 3)).toBeNull();
      expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual({ ...key, revokedAt: BASE_TIME + 2 });

      const another = sampleApiKey(otherId, { lastUsedAt: BASE_TIME + 4 });
      await keys.createApiKey(another);
      expect(await keys.revokeApiKey(null, another.id, BASE_TIME + 5)).toEqual({ ...another, revokedAt: BASE_TIME + 5 });
      expect(await keys.listApiKeys(otherId)).toEqual([{ ...another, revokedAt: BASE_TIME + 5 }]);
    });

    it("AK-2: revokeApiKey revokes once: of 20 concurrent revocations exactly one answers the record", async () => {
      const { keys, userId, key } = await withKey(makeStorage);
      const results = await concurrently(20, (index) =>
        keys.revokeApiKey(index % 2 === 0 ? userId : null, key.id, BASE_TIME + 100 + index),
      );
      expect(countWhere(results, (result) => result !== null)).toBe(1);
      const winner = results.find((result) => result !== null) as ApiKeyRecord;
      expect(winner).toEqual({ ...key, revokedAt: BASE_TIME + 100 + results.indexOf(winner) });
      expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual(winner);
    });

    it("AK-4: recordApiKeyUse writes a key's lastUsedAt at most once per interval; an older `at` never moves it back; unknown ids are passed over", async () => {
      const { storage, keys, userId, key } = await withKey(makeStorage);
      const second = sampleApiKey(userId, { lastUsedAt: BASE_TIME + 10 * MINUTE });
      await keys.createApiKey(second);
      const lastUsed = async (record: ApiKeyRecord) => (await keys.findApiKeyByHash(record.hash))?.key.lastUsedAt;
      const t = BASE_TIME + 10 * MINUTE;

      await keys.recordApiKeyUse(
        [
          { id: uniqueId("key"), at: t },
          { id: key.id, at: t },
        ],
        MINUTE,
      );
      expect(await lastUsed(key)).toBe(t);
      expect(await lastUsed(second)).toBe(t);
      await keys.recordApiKeyUse([{ id: key.id, at: t + MINUTE - 1 }], MINUTE);
      expect(await lastUsed(key)).toBe(t);
      await keys.recordApiKeyUse([{ id: key.id, at: t + MINUTE }], MINUTE);
      expect(await lastUsed(key)).toBe(t + MINUTE);
      await keys.recordApiKeyUse([{ id: key.id, at: t - 5 * MINUTE }], MINUTE);
      expect(await lastUsed(key)).toBe(t + MINUTE);

      // Several keys, each at its own time, in one call: each checked against its own `at`.
      await keys.recordApiKeyUse(
        [
          { id: second.id, at: t + 3 * MINUTE },
          { id: key.id, at: t + MINUTE + 30_000 },
          { id: uniqueId("key"), at: t + 4 * MINUTE },
        ],
        MINUTE,
      );
      expect(await lastUsed(second)).toBe(t + 3 * MINUTE);
      expect(await lastUsed(key)).toBe(t + MINUTE);
      // One key twice in one call, the later use first: the key ends at the later use.
      await keys.recordApiKeyUse(
        [
          { id: key.id, at: t + 3 * MINUTE },
          { id: key.id, at: t + 2 * MINUTE },
        ],
        MINUTE,
      );
      expect(await lastUsed(key)).toBe(t + 3 * MINUTE);
      // An interval of 0 writes every newer use, and never an older one.
      await keys.recordApiKeyUse([{ id: second.id, at: t + 3 * MINUTE + 1 }], 0);
      expect(await lastUsed(second)).toBe(t + 3 * MINUTE + 1);
      await keys.recordApiKeyUse([{ id: second.id, at: t + 3 * MINUTE }], 0);
      expect(await lastUsed(second)).toBe(t + 3 * MINUTE + 1);
      await keys.recordApiKeyUse([], MINUTE);

      // Nothing else of the key changes, nor a revoked key's revocation.
      expect((await keys.findApiKeyByHash(key.hash))?.key).toEqual({ ...key, lastUsedAt: t + 3 * MINUTE });
      await keys.revokeApiKey(userId, second.id, t + 5 * MINUTE);
      await keys.recordApiKeyUse([{ id: second.id, at: t + 9 * MINUTE }], MINUTE);
      expect((await keys.findApiKeyByHash(second.hash))?.key).toEqual({
        ...second,
        lastUsedAt: t + 9 * MINUTE,
        revokedAt: t + 5 * MINUTE,
      });
      expect(await keys.listApiKeys(await createUser(storage))).toEqual([]);
    });

    it("AK-4: recordApiKeyUse writes a key's lastUsedAt at most once per interval, also under 20 concurrent calls", async () => {
      const { keys, key } = await withKey(makeStorage);
      const t = BASE_TIME + 60 * MINUTE;
      const lastUsed = async () => (await keys.findApiKeyByHash(key.hash))?.key.lastUsedAt;

      // 20 uses within one interval of each other: one of them is written, and no other after it.
      await concurrently(20, (index) => keys.recordApiKeyUse([{ id: key.id, at: t + index }], MINUTE));
      const first = (await lastUsed()) as number;
      expect(first >= t && first < t + 20).toBe(true);
      await concurrently(20, (index) => keys.recordApiKeyUse([{ id: key.id, at: first + MINUTE - 20 + index }], MINUTE));
      expect(await lastUsed()).toBe(first);

      // Uses an interval apart, at once: the later time wins whichever arrives first, never moved back by the older.
      const later = first + 3 * MINUTE;
      await concurrently(20, (index) =>
        keys.recordApiKeyUse([{ id: key.id, at: index % 2 === 0 ? later - MINUTE : later }], MINUTE),
      );
      expect(await lastUsed()).toBe(later);
    });

    it("records are copied in and out: changing what was passed in or handed out changes nothing stored", async () => {
      const { keys, userId, key } = await withKey(makeStorage, { scopes: ["deploy"] });
      const kept = structuredClone(key);
      tryToMutate(() => {
        key.name = "Changed";
        key.scopes.push("admin");
        key.revokedAt = BASE_TIME;
      });
      const found = await keys.findApiKeyByHash(kept.hash);
      tryToMutate(() => {
        if (found === null) return;
        found.key.scopes.push("admin");
        found.key.name = "Changed";
        found.user?.roles.push("admin");
      });
      for (const record of await keys.listApiKeys(userId)) {
        tryToMutate(() => {
          record.scopes.push("admin");
          record.lastUsedAt = BASE_TIME;
        });
      }
      const revoked = await keys.revokeApiKey(userId, kept.id, BASE_TIME + 1);
      tryToMutate(() => {
        revoked?.scopes.push("admin");
        if (revoked !== null) revoked.revokedAt = null;
      });
      expect(await keys.findApiKeyByHash(kept.hash)).toEqual({
        key: { ...kept, revokedAt: BASE_TIME + 1 },
        user: { tokenVersion: 0, disabled: false, roles: ["member"] },
      });
    });
  });
}
