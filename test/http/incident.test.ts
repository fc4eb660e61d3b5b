// Issue 37 item 6 on every adapter: an administrator ends every session of every user
// (DELETE /auth/admin/sessions, STUP-6, ASVS 7.4.5). Every refresh token is refused at once and
// every access token at its next request, though the instance caches token state for 60 s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
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

describeOpenApiDrift({ exercises: ["revokeAllSessions", "login", "refresh", "getPublicUser"] });
