import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { addUser, goodPassword, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import type { Storage } from "../storage/types.js";
import { newApiKey } from "./api-key-format.js";
import { createApiKey } from "./manage-api-keys.js";
import { lastUsedIntervalMs, verifyApiKey } from "./verify-api-key.js";

/** Memory storage whose API-key reads and use records are counted. */
function countedStorage() {
  const storage = memoryStorage();
  const keys = storage.apiKeys as NonNullable<Storage["apiKeys"]>;
  const calls = { reads: 0, uses: 0 };
  const counted: Storage = {
    ...storage,
    apiKeys: {
      ...keys,
      findApiKeyByHash: (hash) => {
        calls.reads += 1;
        return keys.findApiKeyByHash(hash);
      },
      recordApiKeyUse: (uses, interval) => {
        calls.uses += 1;
        return keys.recordApiKeyUse(uses, interval);
      },
    },
  };
  return { storage: counted, calls };
}

async function keyOf(harness: ReturnType<typeof makeAuth>, options: { expiresIn?: string } = {}) {
  const userId = await addUser(harness.auth, `u${Math.floor(Math.random() * 1e9)}`);
  const created = await createApiKey(harness.auth, { userId, name: "k", scopes: ["read"], password: goodPassword, ...options });
  return { userId, key: created.key, id: created.id };
}

describe("verifyApiKey", () => {
  it("AK-2: a well-formed key that was never issued is 40101 after its one read", async () => {
    const { storage, calls } = countedStorage();
    const harness = makeAuth({ storage, apiKeys: { enabled: true } });
    expect(await outcome(verifyApiKey(harness.auth, { key: newApiKey("live", randomBytes) }))).toBe(40101);
    expect(calls.reads).toBe(1);
  });

  it("AK-2: with tokenStateCacheSeconds a cached key stops at its expiry, and a change not announced here stops within the cache time", async () => {
    const { storage, calls } = countedStorage();
    const harness = makeAuth({ storage, apiKeys: { enabled: true, defaultTtl: "1h" }, tokenStateCacheSeconds: 60 });
    const { key, userId } = await keyOf(harness);
    const context = await verifyApiKey(harness.auth, { key });
    expect(context).toMatchObject({ kind: "api_key", userId, scopes: ["read"], orgId: null });
    expect(await verifyApiKey(harness.auth, { key })).toBe(context);
    expect(calls.reads).toBe(1);
    // Another instance disabled the user, without a revocation channel: this one learns within the cache time.
    const user = await harness.storage.users.findById(userId);
    await harness.storage.users.update(userId, { disabled: true }, harness.clock.now);
    harness.clock.advance(59_999);
    expect(await outcome(verifyApiKey(harness.auth, { key }))).toBe("fulfilled");
    harness.clock.advance(1);
    expect(await outcome(verifyApiKey(harness.auth, { key }))).toBe(40101);
    await harness.storage.users.update(userId, { disabled: user?.disabled ?? false }, harness.clock.now);
    // A key cached a moment before it expires is refused at its expiry, not at the cache's.
    const late = await keyOf(harness);
    harness.clock.advance(3_600_000 - 30_000);
    expect(await outcome(verifyApiKey(harness.auth, { key: late.key }))).toBe("fulfilled");
    harness.clock.advance(30_000);
    expect(await outcome(verifyApiKey(harness.auth, { key: late.key }))).toBe(40101);
  });

  it("without the cache every request reads the key", async () => {
    const { storage, calls } = countedStorage();
    const harness = makeAuth({ storage, apiKeys: { enabled: true } });
    const { key } = await keyOf(harness);
    for (let n = 0; n < 3; n += 1) await verifyApiKey(harness.auth, { key });
    expect(calls.reads).toBe(3);
  });

  it("AK-4: a use is recorded at a minute exactly, and not when the store shows another instance recorded one within the minute", async () => {
    const shared = countedStorage();
    const first = makeAuth({ storage: shared.storage, apiKeys: { enabled: true } });
    const { key } = await keyOf(first);
    await verifyApiKey(first.auth, { key });
    expect(shared.calls.uses).toBe(1);
    first.clock.advance(lastUsedIntervalMs - 1);
    await verifyApiKey(first.auth, { key });
    expect(shared.calls.uses).toBe(1);
    first.clock.advance(1);
    await verifyApiKey(first.auth, { key });
    expect(shared.calls.uses).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    // A second instance sharing the storage, 10 s later: the stored lastUsedAt is recent, so it writes nothing.
    const second = makeAuth({ storage: shared.storage, apiKeys: { enabled: true }, clock: first.clock });
    first.clock.advance(10_000);
    await verifyApiKey(second.auth, { key });
    expect(shared.calls.uses).toBe(2);
  });

  it("AK-5: past the key's rate limit, 42900 with the seconds until its window ends", async () => {
    const harness = makeAuth({ apiKeys: { enabled: true, rateLimit: [{ limit: 2, window: "1m" }] } });
    const { key } = await keyOf(harness);
    await verifyApiKey(harness.auth, { key });
    await verifyApiKey(harness.auth, { key });
    const refused = await verifyApiKey(harness.auth, { key }).catch(
      (error: unknown) => error as { code: number; retryAfterSeconds: number },
    );
    expect(refused).toMatchObject({ code: 42900, retryAfterSeconds: 60 });
  });
});

describe("readScopes and lifetimes", () => {
  it("scopes: null is none, non-strings 40002, more than 50 or of the wrong form 42200; lifetime null is the default", async () => {
    const harness = makeAuth({ apiKeys: { enabled: true } });
    const userId = await addUser(harness.auth, "alice");
    const make = (input: Record<string, unknown>) =>
      createApiKey(harness.auth, { userId, name: "k", password: goodPassword, ...input });
    const made = await make({ scopes: null, expiresIn: null });
    expect(made.scopes).toEqual([]);
    expect(made.expiresAt - made.createdAt).toBe(90 * 86_400_000);
    for (const [scopes, code] of [
      [[1], 40002],
      [["ok", 2], 40002],
      [Array.from({ length: 51 }, (_, n) => `s${n}`), 42200],
      [["has space"], 42200],
      [[""], 42200],
      [["x".repeat(129)], 42200],
    ] as const) {
      expect(await outcome(make({ scopes }))).toBe(code);
    }
    expect((await make({ scopes: Array.from({ length: 50 }, (_, n) => `s${n}`) })).scopes).toHaveLength(50);
  });

  it("maxPerUser counts live keys only: an expired key leaves room", async () => {
    const harness = makeAuth({ apiKeys: { enabled: true, maxPerUser: 1, defaultTtl: "1d" } });
    const userId = await addUser(harness.auth, "alice");
    await createApiKey(harness.auth, { userId, name: "k", password: goodPassword });
    expect(await outcome(createApiKey(harness.auth, { userId, name: "k", password: goodPassword }))).toBe(40900);
    harness.clock.advance(86_400_000);
    expect(await outcome(createApiKey(harness.auth, { userId, name: "k", password: goodPassword }))).toBe("fulfilled");
  });
});
