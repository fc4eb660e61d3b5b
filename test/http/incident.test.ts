// Issue 37 item 6 on every adapter: an administrator ends every session of every user
// (DELETE /auth/admin/sessions, STUP-6, ASVS 7.4.5). Every refresh token is refused at once and
// every access token at its next request, though the instance caches token state for 60 s. And a
// signing key rotated with overlap: the JWK Set publishes both keys by kid, the old key's tokens
// are accepted until it is removed, then refused without any fetch (ASVS 9.1.3).
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { type Auth, type AuthConfig, createAuth, memoryStorage } from "@portcullis/core";
import { decodeProtectedHeader } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type TestAuth,
  createTestUser,
  generousThrottle,
  makeTestAuth,
  testAudience,
  testIssuer,
  testPassword,
} from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const revokeAll = `${base}/admin/sessions`;

/** Signs a user in over HTTP and returns the token set. */
async function signIn(server: RunningServer, username: string): Promise<{ accessToken: string; refreshToken: string }> {
  const signedIn = await post(server, `${base}/login`, { username, password: testPassword });
  expectEnvelope(signedIn, 0);
  return signedIn.body.data;
}

const me = (server: RunningServer, token: string) => call(server, "GET", `${base}/me`, { token });
const refreshed = (server: RunningServer, refreshToken: string) => post(server, `${base}/refresh`, { refreshToken });

describe.each(adapters)("ending every session of every user on %s (STUP-6)", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;
  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle, tokenStateCacheSeconds: 60, reauthentication: { recentSignIn: "5m" } });
    server = await start(testAuth.auth);
    await Promise.all([
      createTestUser(testAuth.auth, "root", ["admin"]),
      createTestUser(testAuth.auth, "alice"),
      createTestUser(testAuth.auth, "bob"),
    ]);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("STUP-6, AD-1: DELETE /auth/admin/sessions needs a live token with the admin role and the administrator's re-authentication; refused, it ends nothing", async () => {
    const alice = await signIn(server, "alice");
    testAuth.clock.advance(6 * 60_000);
    const root = await signIn(server, "root");
    testAuth.clock.advance(6 * 60_000);
    const refusals: [CallResult, number][] = [
      [await call(server, "DELETE", revokeAll), 40101],
      [await call(server, "DELETE", revokeAll, { token: "not.a.token" }), 40101],
      [await call(server, "DELETE", revokeAll, { token: alice.accessToken, json: { password: testPassword } }), 40300],
      // Root's sign-in is 6 minutes old: no longer recent, so a proof is needed.
      [await call(server, "DELETE", revokeAll, { token: root.accessToken }), 40001],
      [await call(server, "DELETE", revokeAll, { token: root.accessToken, json: {} }), 40001],
      [await call(server, "DELETE", revokeAll, { token: root.accessToken, json: { password: "wrong password" } }), 40100],
      [await call(server, "DELETE", revokeAll, { token: root.accessToken, json: { password: 12345 } }), 40002],
    ];
    for (const [answer, code] of refusals) expectEnvelope(answer, code);
    expectEnvelope(await me(server, alice.accessToken), 0);
    expectEnvelope(await me(server, root.accessToken), 0);
  });

  it("STUP-6, ASVS 7.4.5: with the administrator's password every session ends, theirs too: refresh tokens refused at once, access tokens at their next request", async () => {
    // The sessions the test before left live end first, so that the count is this test's own.
    await testAuth.auth.storage.sessions.revokeAll(testAuth.clock.now);
    const again = [await signIn(server, "alice"), await signIn(server, "bob"), await signIn(server, "alice")];
    const admin = await signIn(server, "root");
    testAuth.clock.advance(6 * 60_000);
    for (const tokens of [...again, admin]) expectEnvelope(await me(server, tokens.accessToken), 0);

    const answer = await call(server, "DELETE", revokeAll, { token: admin.accessToken, json: { password: testPassword } });
    expectEnvelope(answer, 0);
    expect(answer.body.data).toEqual({ ended: 4 });
    for (const tokens of [...again, admin]) {
      expectEnvelope(await me(server, tokens.accessToken), 40101);
      expectEnvelope(await refreshed(server, tokens.refreshToken), 40101);
    }
    // A sign-in after it is a new session, and works.
    const after = await signIn(server, "bob");
    expectEnvelope(await me(server, after.accessToken), 0);
    expectEnvelope(await refreshed(server, after.refreshToken), 0);
  });

  it("STUP-6: a recent sign-in of the administrator is proof enough, and a JSON body is not needed", async () => {
    const bob = await signIn(server, "bob");
    const root = await signIn(server, "root");
    const answer = await call(server, "DELETE", revokeAll, { token: root.accessToken });
    expectEnvelope(answer, 0);
    expect(answer.body.data.ended).toBeGreaterThanOrEqual(2);
    expectEnvelope(await me(server, bob.accessToken), 40101);
  });
});

describe.each(adapters)("rotating the signing key on %s (STUP-6)", (_name, start) => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    vi.restoreAllMocks();
  });

  it("STUP-6, ASVS 9.1.3: the JWK Set shows the new and the old key by kid; the old key's tokens work until it is removed, then 40101 with no fetch", async () => {
    const storage = memoryStorage();
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };
    const encryption = randomBytes(32).toString("hex");
    const old = generateKeyPairSync("ed25519");
    const next = generateKeyPairSync("ed25519");
    const oldPublic = {
      alg: "EdDSA" as const,
      publicKey: old.publicKey.export({ format: "pem", type: "spki" }).toString(),
      kid: "2026-01",
    };
    const serve = async (secrets: AuthConfig["secrets"]) => {
      const auth: Auth = createAuth({ storage, issuer: testIssuer, audience: testAudience, secrets, now: () => clock.now });
      const server = await start(auth);
      servers.push(server);
      return server;
    };
    const signing = (key: typeof old, kid: string) => ({
      alg: "EdDSA" as const,
      privateKey: key.privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
      kid,
    });
    const before = await serve({ signing: signing(old, "2026-01"), encryption });
    await createTestUser(before.auth as Auth, "erin");
    const oldToken = (await signIn(before, "erin")).accessToken;

    const rotated = await serve({ signing: signing(next, "2026-07"), previousSigning: [oldPublic], encryption });
    const keySet = await call(rotated, "GET", "/.well-known/jwks.json");
    expect(keySet.status).toBe(200);
    expect(keySet.body.keys.map((key: { kid: string; alg: string; use: string }) => [key.kid, key.alg, key.use])).toEqual([
      ["2026-07", "EdDSA", "sig"],
      ["2026-01", "EdDSA", "sig"],
    ]);
    expect(keySet.text).not.toContain('"d"');
    expectEnvelope(await me(rotated, oldToken), 0);
    const newToken = (await signIn(rotated, "erin")).accessToken;
    expect(decodeProtectedHeader(newToken).kid).toBe("2026-07");

    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const removed = await serve({ signing: signing(next, "2026-07"), encryption });
    expectEnvelope(await me(removed, oldToken), 40101);
    expectEnvelope(await me(removed, newToken), 0);
    expect((await call(removed, "GET", "/.well-known/jwks.json")).body.keys.map((key: { kid: string }) => key.kid)).toEqual([
      "2026-07",
    ]);
    // The only requests made were this test's own, to the server.
    expect(fetchSpy.mock.calls.map(([url]) => String(url).startsWith(removed.baseUrl))).toEqual([true, true, true]);
  });
});

describeOpenApiDrift({ exercises: ["revokeAllSessions", "login", "refresh", "getPublicUser", "jwks"] });
