// API keys end to end on every adapter (issue 41): a key made through the routes, used on an app's
// route behind requireAuth's `scopes` (0), a key without the scope refused (40300), a revoked key
// refused at its next request (40101), and the same route with an access token (0). A key is no
// credential for the key routes themselves. Every route of the API keys once, so that the OpenAPI
// drift check reads a real answer of each. The clock is frozen (test/fixtures/auth.ts).
import { type Auth, createUser } from "@portcullis/core";
import { requireAuth as requireAuthExpress } from "@portcullis/express";
import { requireAuth as requireAuthFastify } from "@portcullis/fastify";
import { requireAuth as requireAuthHono } from "@portcullis/hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters, reportsRoute } from "./servers.js";

const base = "/api/v1/auth";

describe.each(adapters)("API keys over HTTP on %s", (name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;

  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle, apiKeys: { enabled: true }, organizations: { enabled: true } });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  const get = (path: string, token: string) => call(server, "GET", path, { token });
  const send = (method: string, path: string, token: string, json: unknown = {}) => call(server, method, path, { token, json });
  function ok<T = Record<string, unknown>>(answer: CallResult): T {
    expectEnvelope(answer, 0);
    return answer.body.data as T;
  }
  /** A success of the app's own route, which answers in the envelope's shape without Portcullis's headers. */
  const appAnswer = (answer: CallResult) => {
    expect([answer.status, answer.body.code], answer.text).toEqual([200, 0]);
    return answer.body.data as Record<string, unknown>;
  };

  async function signedInUser(username: string, roles: string[] = []) {
    const user = await createUser(testAuth.auth, { username, password: testPassword, roles });
    const tokens = ok<{ accessToken: string }>(await post(server, `${base}/login`, { username, password: testPassword }));
    return { id: user.id, ...tokens };
  }

  it("AK-2: a key with the scope passes requireAuth({ scopes }), one without it is 40300, a revoked one 40101 at its next request; an access token passes", async () => {
    const tag = name.replace(/\W/g, "").toLowerCase();
    const ada = await signedInUser(`ada-${tag}`);
    const reader = ok<{ id: string; key: string }>(
      await send("POST", `${base}/api-keys`, ada.accessToken, { name: "reports", scopes: ["reports:read"] }),
    );
    const other = ok<{ id: string; key: string }>(
      await send("POST", `${base}/api-keys`, ada.accessToken, { name: "deploys", scopes: ["deploy"] }),
    );
    expect(reader.key).toMatch(/^pc_live_/);

    expect(appAnswer(await get(reportsRoute, reader.key))).toEqual({ userId: ada.id, kind: "api_key", keyId: reader.id });
    expectEnvelope(await get(reportsRoute, other.key), 40300);
    const byToken = appAnswer(await get(reportsRoute, ada.accessToken));
    expect(byToken).toMatchObject({ userId: ada.id, kind: "access_token" });
    expect(byToken.sessionId).toEqual(expect.any(String));
    // The key is no access token: the app's other routes and Portcullis's own refuse it.
    expectEnvelope(await get("/api/v1/things", reader.key), 40101);
    expectEnvelope(await get(`${base}/api-keys`, reader.key), 40101);
    expectEnvelope(await send("POST", `${base}/api-keys`, reader.key, { name: "more" }), 40101);

    const listed = ok<Record<string, unknown>[]>(await get(`${base}/api-keys`, ada.accessToken));
    expect(listed.map((key) => key.name)).toEqual(expect.arrayContaining(["reports", "deploys"]));
    expect(JSON.stringify(listed)).not.toContain(reader.key);
    expect(ok(await send("PATCH", `${base}/api-keys/${reader.id}`, ada.accessToken, { name: "nightly reports" }))).toEqual({
      renamed: true,
    });
    expect(ok(await call(server, "DELETE", `${base}/api-keys/${reader.id}`, { token: ada.accessToken }))).toEqual({
      revoked: true,
    });
    expectEnvelope(await get(reportsRoute, reader.key), 40101);
    expect(appAnswer(await get(reportsRoute, ada.accessToken))).toMatchObject({ kind: "access_token" });
  });

  it("the administrators list and revoke anyone's keys", async () => {
    const tag = name.replace(/\W/g, "").toLowerCase();
    const bob = await signedInUser(`bob-${tag}`);
    const root = await signedInUser(`root-${tag}`, ["admin"]);
    const key = ok<{ id: string; key: string }>(
      await send("POST", `${base}/api-keys`, bob.accessToken, { name: "cron", scopes: ["reports:read"] }),
    );
    expectEnvelope(await get(`${base}/admin/users/${bob.id}/api-keys`, bob.accessToken), 40300);
    const seen = ok<{ id: string }[]>(await get(`${base}/admin/users/${bob.id}/api-keys`, root.accessToken));
    expect(seen.map(({ id }) => id)).toEqual([key.id]);
    expect(ok(await send("DELETE", `${base}/admin/users/${bob.id}/api-keys/${key.id}`, root.accessToken, {}))).toEqual({
      revoked: true,
    });
    expectEnvelope(await get(reportsRoute, key.key), 40101);
  });
});

describe.each(adapters)("An organization's API keys over HTTP on %s", (name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;

  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle, apiKeys: { enabled: true }, organizations: { enabled: true } });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  async function signedInUser(username: string) {
    const user = await createUser(testAuth.auth, { username, password: testPassword });
    const answer = await post(server, `${base}/login`, { username, password: testPassword });
    expectEnvelope(answer, 0);
    return { id: user.id, ...(answer.body.data as { accessToken: string }) };
  }

  it("AK-6: the organization's administrators make, list and revoke its keys; a member cannot; a key carries the organization", async () => {
    const tag = name.replace(/\W/g, "").toLowerCase();
    const owner = await signedInUser(`owner-${tag}`);
    const member = await signedInUser(`member-${tag}`);
    const made = await call(server, "POST", `${base}/orgs`, { token: owner.accessToken, json: { name: `Org ${tag}` } });
    expectEnvelope(made, 0);
    const orgId = (made.body.data as { id: string }).id;
    await testAuth.auth.storage.organizations?.addMember({
      orgId,
      userId: member.id,
      roles: ["member"],
      createdAt: 0,
      lastActiveAt: null,
    });
    const keysPath = `${base}/orgs/${orgId}/api-keys`;
    expectEnvelope(await call(server, "POST", keysPath, { token: member.accessToken, json: { name: "x" } }), 40300);
    expectEnvelope(await call(server, "GET", `${base}/orgs/unknown/api-keys`, { token: owner.accessToken }), 40400);
    const created = await call(server, "POST", keysPath, {
      token: owner.accessToken,
      json: { name: "exports", scopes: ["reports:read"] },
    });
    expectEnvelope(created, 0);
    const key = created.body.data as { id: string; key: string; orgId: string };
    expect(key.orgId).toBe(orgId);
    const byKey = await call(server, "GET", reportsRoute, { token: key.key });
    expect([byKey.status, byKey.body.code]).toEqual([200, 0]);
    const listed = await call(server, "GET", keysPath, { token: owner.accessToken });
    expectEnvelope(listed, 0);
    expect((listed.body.data as { id: string }[]).map(({ id }) => id)).toEqual([key.id]);
    expectEnvelope(await call(server, "DELETE", `${keysPath}/${key.id}`, { token: member.accessToken }), 40300);
    const revoked = await call(server, "DELETE", `${keysPath}/${key.id}`, { token: owner.accessToken });
    expectEnvelope(revoked, 0);
    expectEnvelope(await call(server, "GET", reportsRoute, { token: key.key }), 40101);
  });
});

describe("requireAuth's scopes and credentials on every adapter", () => {
  it("bad options are a TypeError when requireAuth is called; good ones are taken", () => {
    const { auth } = makeTestAuth({ apiKeys: { enabled: true } });
    for (const requireAuth of [requireAuthExpress, requireAuthHono, requireAuthFastify] as ((
      auth: Auth,
      options: Record<string, unknown>,
    ) => unknown)[]) {
      for (const options of [
        { scopes: "reports:read" },
        { scopes: ["two words"] },
        { credentials: "session" },
        { credentials: "access_token", scopes: ["a"] },
        { credentials: "api_key", maxAge: "5m" },
        { credentials: "api_key", org: true },
      ]) {
        expect(() => requireAuth(auth, options), JSON.stringify(options)).toThrow(TypeError);
      }
      expect(() => requireAuth(auth, { scopes: ["reports:read"], roles: ["user"] })).not.toThrow();
      expect(() => requireAuth(auth, { credentials: "api_key" })).not.toThrow();
      expect(() => requireAuth(auth, { credentials: "any", maxAge: "5m" })).not.toThrow();
    }
  });
});

describeOpenApiDrift({
  exercises: [
    "login",
    "createApiKey",
    "listApiKeys",
    "renameApiKey",
    "revokeApiKey",
    "listUserApiKeys",
    "revokeUserApiKey",
    "createOrganizationApiKey",
    "listOrganizationApiKeys",
    "revokeOrganizationApiKey",
  ],
});
