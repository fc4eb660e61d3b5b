import { describe, expect, it } from "vitest";
import { addUser, goodPassword, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { memoryStorage } from "../storage/memory.js";
import { resolveApiKeysConfig } from "./api-key-config.js";
import { isWellFormedApiKey } from "./api-key-format.js";
import { createApiKey, listApiKeys, listUserApiKeys, renameApiKey, revokeApiKey, revokeUserApiKey } from "./manage-api-keys.js";

const keysAuth = (apiKeys: Parameters<typeof resolveApiKeysConfig>[0] = {}) =>
  makeAuth({ apiKeys: { enabled: true, ...apiKeys } });

describe("apiKeys options", () => {
  it("default to off, live keys of 90 days at most a year, 50 per user, no rate limit, any scope", () => {
    expect(resolveApiKeysConfig(undefined)).toEqual({
      enabled: false,
      environment: "live",
      defaultTtlSeconds: 90 * 86_400,
      maxTtlSeconds: 365 * 86_400,
      maxPerUser: 50,
      rateLimit: [],
      scopes: null,
    });
  });

  it.each([
    [{ environment: "Live" }, /apiKeys.environment must be/],
    [{ environment: "a".repeat(17) }, /apiKeys.environment must be/],
    [{ defaultTtl: "400d" }, /defaultTtl must not be longer/],
    [{ maxPerUser: 0 }, /apiKeys.maxPerUser/],
    [{ rateLimit: [] }, /apiKeys.rateLimit must be a non-empty list/],
    [{ scopes: ["has space"] }, /apiKeys.scopes must be/],
    [{ scopes: [] }, /apiKeys.scopes must be/],
    [{ enabled: 1 }, /apiKeys.enabled must be true or false/],
    [{ scope: ["x"] }, /apiKeys.scope/],
  ])("refuse %j at startup", (options, message) => {
    expect(() => resolveApiKeysConfig(options as never)).toThrow(message);
  });

  it("refuse to be enabled over a storage that keeps no API keys", () => {
    const { apiKeys: _, ...storage } = memoryStorage();
    expect(() => makeAuth({ storage, apiKeys: { enabled: true } })).toThrow(/needs a storage with apiKeys/);
  });
});

describe("AK-1, AK-2: making and managing keys", () => {
  it("a key is made after a re-authentication, answered once, stored as its SHA-256 only", async () => {
    const harness = keysAuth({ environment: "test" });
    const userId = await addUser(harness.auth, "alice");
    expect(await outcome(createApiKey(harness.auth, { userId, name: "CI" }))).toBe(40001);
    const created = await createApiKey(harness.auth, {
      userId,
      name: " CI deploys ",
      scopes: ["deploy", "deploy"],
      password: goodPassword,
    });
    expect(isWellFormedApiKey(created.key, "test")).toBe(true);
    expect(created).toMatchObject({
      name: "CI deploys",
      scopes: ["deploy"],
      start: created.key.slice(0, 12),
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(created.expiresAt - created.createdAt).toBe(90 * 86_400_000);
    const listed = await listApiKeys(harness.auth, { userId });
    expect(listed).toEqual([{ ...created, key: undefined }].map(({ key: _, ...info }) => info));
    expect(JSON.stringify(await harness.storage.apiKeys?.listApiKeys(userId))).not.toContain(created.key);
    expect(harness.events.filter((event) => event.type === "api_key.created")).toEqual([
      { type: "api_key.created", userId, keyId: created.id, at: harness.clock.now },
    ]);
  });

  it("lifetimes, scopes and names are checked; at most maxPerUser live keys", async () => {
    const harness = keysAuth({ maxTtl: "30d", defaultTtl: "7d", maxPerUser: 2, scopes: ["deploy", "reports:read"] });
    const userId = await addUser(harness.auth, "alice");
    const make = (input: Record<string, unknown>) =>
      createApiKey(harness.auth, { userId, name: "k", password: goodPassword, ...input });
    expect((await make({ expiresIn: "30d" })).expiresAt - harness.clock.now).toBe(30 * 86_400_000);
    for (const [input, code] of [
      [{ expiresIn: "31d" }, 42200],
      [{ expiresIn: "soon" }, 42200],
      [{ scopes: ["admin"] }, 42200],
      [{ scopes: "deploy" }, 40002],
      [{ name: "" }, 40001],
      [{ name: "a\u200Bb" }, 42200],
    ] as const) {
      expect(await outcome(make(input))).toBe(code);
    }
    expect((await make({ scopes: ["reports:read"] })).scopes).toEqual(["reports:read"]);
    expect(await outcome(make({}))).toBe(40900);
    const [newest] = await listApiKeys(harness.auth, { userId });
    await revokeApiKey(harness.auth, { userId, id: newest?.id as string });
    expect(await outcome(make({}))).toBe("fulfilled");
  });

  it("a user renames and revokes only their own keys; an administrator lists and revokes anyone's after re-authenticating", async () => {
    const harness = keysAuth();
    const alice = await addUser(harness.auth, "alice");
    const bob = await addUser(harness.auth, "bob");
    const admin = await addUser(harness.auth, "root", goodPassword, ["admin"]);
    const key = await createApiKey(harness.auth, { userId: alice, name: "mine", password: goodPassword });
    expect(await outcome(renameApiKey(harness.auth, { userId: bob, id: key.id, name: "theirs" }))).toBe(40400);
    expect(await outcome(revokeApiKey(harness.auth, { userId: bob, id: key.id }))).toBe(40400);
    await renameApiKey(harness.auth, { userId: alice, id: key.id, name: "renamed" });
    expect((await listUserApiKeys(harness.auth, { userId: alice }))[0]?.name).toBe("renamed");
    expect(await outcome(revokeUserApiKey(harness.auth, { adminUserId: admin, userId: alice, id: key.id }))).toBe(40001);
    expect(
      await outcome(revokeUserApiKey(harness.auth, { adminUserId: admin, userId: bob, id: key.id, password: goodPassword })),
    ).toBe(40400);
    await revokeUserApiKey(harness.auth, { adminUserId: admin, userId: alice, id: key.id, password: goodPassword });
    expect((await listApiKeys(harness.auth, { userId: alice }))[0]?.revokedAt).toBe(harness.clock.now);
    expect(await outcome(revokeApiKey(harness.auth, { userId: alice, id: key.id }))).toBe(40400);
    expect(await outcome(renameApiKey(harness.auth, { userId: alice, id: key.id, name: "again" }))).toBe(40400);
    expect(harness.events.filter((event) => event.type === "api_key.revoked")).toEqual([
      { type: "api_key.revoked", userId: alice, keyId: key.id, by: admin, at: harness.clock.now },
    ]);
  });

  it("every flow answers 40400 while API keys are off", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "alice");
    expect(await outcome(createApiKey(harness.auth, { userId, name: "k", password: goodPassword }))).toBe(40400);
    expect(await outcome(listApiKeys(harness.auth, { userId }))).toBe(40400);
  });
});
