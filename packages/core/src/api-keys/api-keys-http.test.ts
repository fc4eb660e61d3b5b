import { describe, expect, it } from "vitest";
import type { AuthConfig } from "../config.js";
import { sha256 } from "../crypto/random.js";
import { ErrorCode } from "../errors/codes.js";
import { createUser } from "../flows/create-user.js";
import { type AuthOverrides, type Harness, generousThrottle, goodPassword, makeAuth } from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { type AuthorizeOptions, authorizeRequest, errorResponse, handleRequest } from "../http/handle-request.js";
import { memoryStorage } from "../storage/memory.js";
import type { ApiKeyStore } from "../storage/types.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { newApiKey } from "./api-key-format.js";
import type { CreatedApiKey } from "./manage-api-keys.js";

/**
 * The API keys' HTTP surface (issue 41) through core's `handleRequest`, as every adapter serves it,
 * and `requireAuth`'s `scopes` and `credentials` options (authorizeRequest): AK-2…AK-5.
 */

/** An auth with API keys on, its storage's key store counting the calls the tests watch. */
function makeKeyAuth(overrides: AuthOverrides = {}, apiKeys: AuthConfig["apiKeys"] = {}) {
  const storage = memoryStorage();
  const store = storage.apiKeys as ApiKeyStore;
  const calls = { findApiKeyByHash: 0, recordApiKeyUse: 0 };
  for (const name of ["findApiKeyByHash", "recordApiKeyUse"] as const) {
    const original = store[name].bind(store) as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls[name] += 1;
      return original(...args);
    };
  }
  const harness = makeAuth({
    storage,
    throttle: generousThrottle as AuthConfig["throttle"],
    apiKeys: { enabled: true, ...apiKeys },
    ...overrides,
  });
  return { ...harness, calls, store };
}

interface Answer {
  status: number;
  code: number;
  data?: unknown;
  headers: Record<string, string>;
}

/** Sends a request to core over TLS, with a JSON body for POST and PATCH, and a bearer value. */
async function call(harness: Harness, method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  const sent = body ?? (["POST", "PATCH"].includes(method) ? {} : undefined);
  if (sent !== undefined) headers["content-type"] = "application/json";
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await handleRequest(harness.auth, {
    method,
    url: `/api/v1${path}`,
    header: (name) => headers[name],
    body:
      sent === undefined
        ? null
        : (async function* () {
            yield new TextEncoder().encode(JSON.stringify(sent));
          })(),
    peerAddress: "192.0.2.1",
    secure: true,
  });
  if (response === null) throw new Error(`${method} ${path} is not Portcullis's`);
  const envelope = JSON.parse(response.body) as { code: number; data?: unknown };
  return { status: response.status, code: envelope.code, data: envelope.data, headers: response.headers };
}

function ok<T>(answer: Answer): T {
  expect(answer.code, JSON.stringify(answer.data)).toBe(0);
  return answer.data as T;
}

async function signIn(harness: Harness, username: string, roles: string[] = []) {
  const id = (await createUser(harness.auth, { username, password: goodPassword, roles })).id;
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return { id, accessToken: result.tokens.accessToken };
}

const createKey = async (harness: Harness, accessToken: string, body: Record<string, unknown> = {}) =>
  ok<CreatedApiKey>(await call(harness, "POST", "/auth/api-keys", accessToken, { name: "CI", ...body }));

/** A host route guarded as `requireAuth(auth, options)` guards it: the code it answers (0 when let through). */
async function hostRoute(harness: Harness, token: string, options: AuthorizeOptions = { scopes: ["reports:read"] }) {
  try {
    await authorizeRequest(
      harness.auth,
      { header: (name) => (name === "authorization" ? `Bearer ${token}` : undefined), peerAddress: "192.0.2.1", secure: true },
      options,
    );
    return 0;
  } catch (error) {
    return errorResponse(harness.auth, error);
  }
}
const codeOf = async (harness: Harness, token: string, options?: AuthorizeOptions) => {
  const answer = await hostRoute(harness, token, options);
  return answer === 0 ? 0 : (JSON.parse(answer.body) as { code: number }).code;
};

describe("API keys over HTTP", () => {
  it("AK-2: a key is shown once and stored hashed", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const created = await createKey(harness, ada.accessToken, { scopes: ["reports:read"], expiresIn: "30d" });
    expect(created.key).toMatch(/^pc_live_[0-9A-Za-z]{38}$/);
    expect(created).toMatchObject({ name: "CI", scopes: ["reports:read"], lastUsedAt: null, revokedAt: null });
    expect(created.expiresAt - created.createdAt).toBe(30 * 86_400_000);
    const listed = ok<Record<string, unknown>[]>(await call(harness, "GET", "/auth/api-keys", ada.accessToken));
    expect(listed).toHaveLength(1);
    expect(listed[0]).not.toHaveProperty("key");
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(JSON.stringify(listed)).not.toContain(created.key.slice(12));
    const stored = await harness.store.listApiKeys(ada.id);
    expect(stored[0]?.hash).toBe(sha256(created.key));
    expect(JSON.stringify(stored)).not.toContain(created.key.slice(12));
    expect(harness.events.filter((event) => event.type === "api_key.created")).toHaveLength(1);
  });

  it("renames and revokes a key of one's own; another's, an unknown or a revoked one is 40400; the administrators list and revoke anyone's", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const bob = await signIn(harness, "bob");
    const root = await signIn(harness, "root", ["admin"]);
    const first = await createKey(harness, ada.accessToken);
    const second = await createKey(harness, ada.accessToken, { name: "deploy" });
    expect(ok(await call(harness, "PATCH", `/auth/api-keys/${first.id}`, ada.accessToken, { name: "nightly" }))).toEqual({
      renamed: true,
    });
    expect((await call(harness, "PATCH", `/auth/api-keys/${first.id}`, bob.accessToken, { name: "x" })).code).toBe(40400);
    expect((await call(harness, "DELETE", `/auth/api-keys/${first.id}`, bob.accessToken)).code).toBe(40400);
    expect(ok(await call(harness, "DELETE", `/auth/api-keys/${first.id}`, ada.accessToken))).toEqual({ revoked: true });
    expect((await call(harness, "DELETE", `/auth/api-keys/${first.id}`, ada.accessToken)).code).toBe(40400);
    expect((await call(harness, "GET", `/auth/admin/users/${ada.id}/api-keys`, ada.accessToken)).code).toBe(40300);
    const seen = ok<{ id: string; name: string }[]>(
      await call(harness, "GET", `/auth/admin/users/${ada.id}/api-keys`, root.accessToken),
    );
    expect(seen.map(({ name }) => name).sort()).toEqual(["deploy", "nightly"]);
    const revoked = await call(harness, "DELETE", `/auth/admin/users/${ada.id}/api-keys/${second.id}`, root.accessToken);
    expect(ok(revoked)).toEqual({ revoked: true });
    expect(await codeOf(harness, second.key, { credentials: "any" })).toBe(40101);
    expect(harness.events.filter((event) => event.type === "api_key.revoked")).toHaveLength(2);
  });

  it("AK-2: a revoked, expired or out-of-scope key is refused at the next request", async () => {
    for (const tokenStateCacheSeconds of [0, 60]) {
      const harness = makeKeyAuth({ tokenStateCacheSeconds });
      const ada = await signIn(harness, "ada");
      const reader = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
      const writer = await createKey(harness, ada.accessToken, { scopes: ["reports:write"], expiresIn: 120 });
      expect(await codeOf(harness, reader.key)).toBe(0);
      expect(await codeOf(harness, reader.key)).toBe(0);
      expect(await codeOf(harness, writer.key)).toBe(ErrorCode.Forbidden);
      expect(await codeOf(harness, writer.key, { scopes: ["reports:write"] })).toBe(0);
      ok(await call(harness, "DELETE", `/auth/api-keys/${reader.id}`, ada.accessToken));
      expect(await codeOf(harness, reader.key), `cache ${tokenStateCacheSeconds}`).toBe(ErrorCode.InvalidToken);
      harness.clock.advance(120_000);
      expect(await codeOf(harness, writer.key, { scopes: ["reports:write"] }), `cache ${tokenStateCacheSeconds}`).toBe(
        ErrorCode.InvalidToken,
      );
    }
  });

  it("AK-2: a disabled user or a raised token version ends the user's keys", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const bob = await signIn(harness, "bob");
    const adaKey = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    const bobKey = await createKey(harness, bob.accessToken, { scopes: ["reports:read"] });
    expect(await codeOf(harness, adaKey.key)).toBe(0);
    expect(await codeOf(harness, bobKey.key)).toBe(0);
    await harness.storage.users.update(ada.id, { disabled: true }, harness.clock.now);
    await raiseTokenVersion(harness.auth, bob.id, "test");
    expect(await codeOf(harness, adaKey.key)).toBe(ErrorCode.InvalidToken);
    expect(await codeOf(harness, bobKey.key)).toBe(ErrorCode.InvalidToken);
  });

  it("AK-3: malformed keys are refused without a storage read", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    const last = key.at(-1) === "a" ? "b" : "a";
    const malformed = [
      `${key.slice(0, -1)}${last}`, // wrong checksum
      newApiKey("test", (size) => new Uint8Array(size).fill(7)), // another environment, well formed
      `${key}A`, // too long
      key.slice(0, -1), // too short
      `pk_${key.slice(3)}`, // another prefix: read as an access token
      "pc_live_", // nothing after the prefix
    ];
    for (const candidate of malformed) expect(await codeOf(harness, candidate), candidate).toBe(ErrorCode.InvalidToken);
    expect(harness.calls.findApiKeyByHash).toBe(0);
    expect(await codeOf(harness, key)).toBe(0);
    expect(harness.calls.findApiKeyByHash).toBe(1);
  });

  it("AK-4: last used is written at most once a minute per key", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const { key, id } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    for (let request = 0; request < 100; request += 1) {
      expect(await codeOf(harness, key)).toBe(0);
      harness.clock.advance(1_800);
    }
    expect(harness.calls.recordApiKeyUse).toBe(3);
    const [stored] = await harness.store.listApiKeys(ada.id);
    expect(stored?.id).toBe(id);
    expect(stored?.lastUsedAt).not.toBeNull();
  });

  it("AK-5: a key past its rate limit answers 42900 with Retry-After", async () => {
    const harness = makeKeyAuth({}, { rateLimit: [{ limit: 3, window: "1m" }] });
    const ada = await signIn(harness, "ada");
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    for (let request = 0; request < 3; request += 1) expect(await codeOf(harness, key)).toBe(0);
    const refused = await hostRoute(harness, key);
    if (refused === 0) throw new Error("expected a refusal");
    expect((JSON.parse(refused.body) as { code: number }).code).toBe(ErrorCode.TooManyAttempts);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
    harness.clock.advance(61_000);
    expect(await codeOf(harness, key)).toBe(0);
  });

  it("AK-2: a key is refused on the key-management routes themselves (a stolen key mints no keys)", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada", ["admin"]);
    const created = await createKey(harness, ada.accessToken);
    for (const [method, path] of [
      ["POST", "/auth/api-keys"],
      ["GET", "/auth/api-keys"],
      ["PATCH", `/auth/api-keys/${created.id}`],
      ["DELETE", `/auth/api-keys/${created.id}`],
      ["GET", `/auth/admin/users/${ada.id}/api-keys`],
      ["DELETE", `/auth/admin/users/${ada.id}/api-keys/${created.id}`],
      ["GET", "/auth/me"],
    ] as const) {
      const answer = await call(harness, method, path, created.key, method === "GET" ? undefined : { name: "more" });
      expect(answer.code, `${method} ${path}`).toBe(ErrorCode.InvalidToken);
    }
    expect(await harness.store.listApiKeys(ada.id)).toHaveLength(1);
  });

  it("answers 40400 on every key route while API keys are off", async () => {
    const harness = makeAuth();
    const ada = await signIn(harness, "ada");
    expect((await call(harness, "GET", "/auth/api-keys", ada.accessToken)).code).toBe(ErrorCode.NotFound);
    expect((await call(harness, "POST", "/auth/api-keys", ada.accessToken, { name: "x" })).code).toBe(ErrorCode.NotFound);
  });
});

describe("requireAuth's scopes and credentials (authorizeRequest)", () => {
  it("without scopes or credentials a key is an invalid access token; with them an access token passes the scope check", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada", ["staff"]);
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    expect(await codeOf(harness, key, {})).toBe(ErrorCode.InvalidToken);
    expect(await codeOf(harness, key, { roles: ["staff"] })).toBe(ErrorCode.InvalidToken);
    expect(await codeOf(harness, ada.accessToken, {})).toBe(0);
    expect(await codeOf(harness, ada.accessToken, { scopes: ["reports:read", "anything"] })).toBe(0);
    expect(await codeOf(harness, key, { scopes: ["reports:read", "anything"] })).toBe(ErrorCode.Forbidden);
    expect(await codeOf(harness, key, { scopes: [] })).toBe(0);
    expect(await codeOf(harness, key, { credentials: "any" })).toBe(0);
    expect(await codeOf(harness, key, { credentials: "api_key" })).toBe(0);
    expect(await codeOf(harness, ada.accessToken, { credentials: "api_key" })).toBe(ErrorCode.Forbidden);
    expect(await codeOf(harness, key, { credentials: "access_token" })).toBe(ErrorCode.InvalidToken);
  });

  it("roles apply to the key's user as now; a sign-in requirement (maxAge, secondFactor, amr, org) refuses a key with 40300", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada", ["staff"]);
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    expect(await codeOf(harness, key, { scopes: ["reports:read"], roles: ["staff"] })).toBe(0);
    expect(await codeOf(harness, key, { scopes: ["reports:read"], roles: ["admin"] })).toBe(ErrorCode.Forbidden);
    await harness.storage.users.update(ada.id, { roles: ["admin"] }, harness.clock.now);
    expect(await codeOf(harness, key, { scopes: ["reports:read"], roles: ["admin"] })).toBe(0);
    const asks: AuthorizeOptions[] = [{ maxAge: "1h" }, { secondFactor: true }, { amr: ["pwd"] }, { org: true }];
    for (const asked of asks) {
      expect(await codeOf(harness, key, { scopes: ["reports:read"], ...asked }), JSON.stringify(asked)).toBe(ErrorCode.Forbidden);
    }
    expect(await codeOf(harness, ada.accessToken, { scopes: ["reports:read"], maxAge: "1h" })).toBe(0);
  });

  it("a key is an invalid token (40101) while API keys are off, read as no key at all", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    const off = makeAuth({ storage: harness.storage, clock: harness.clock });
    expect(await codeOf(off, key)).toBe(ErrorCode.InvalidToken);
    expect(harness.calls.findApiKeyByHash).toBe(0);
  });

  it("types the answer: AccessContext for access-token options, the union (told apart by kind) otherwise", async () => {
    const harness = makeKeyAuth();
    const ada = await signIn(harness, "ada");
    const { key } = await createKey(harness, ada.accessToken, { scopes: ["reports:read"] });
    const request = { header: () => `Bearer ${key}`, peerAddress: "192.0.2.1", secure: true };
    const context = await authorizeRequest(harness.auth, request, { scopes: ["reports:read"] });
    expect(context.kind).toBe("api_key");
    if (context.kind === "api_key") expect(context.scopes).toEqual(["reports:read"]);
    const access = await authorizeRequest(harness.auth, { ...request, header: () => `Bearer ${ada.accessToken}` });
    expect(access.sessionId).toBeTypeOf("string");
    expect(access.kind).toBe("access_token");
  });
});
