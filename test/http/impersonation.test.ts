// Impersonation end to end on every adapter (issue 41 item 4): an administrator holding the
// impersonation role begins a session as a user (IMP-1), which can change no credential (IMP-2),
// ends by itself at impersonation.duration whatever its refreshes (IMP-3), and ends at the end
// route or once the administrator loses the role (IMP-4); each step emits its event. The clock is
// frozen (test/fixtures/auth.ts) and moved by hand.
import { type AuthEvent, createUser } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { machineAdapters, whoRoute } from "./machine-servers.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import type { RunningServer } from "./servers.js";

const base = "/api/v1/auth";
const durationMs = 30 * 60_000;

/** The claims of a JWT, read without checking it. */
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8"));

interface ImpersonationAnswer {
  accessToken: string;
  refreshToken: string;
  user: { id: string };
  impersonation: { by: string; expiresAt: number };
}

describe.each(machineAdapters)("impersonation over HTTP on %s", (name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;
  const events: AuthEvent[] = [];
  const tag = name.replace(/\W/g, "").toLowerCase();
  let made = 0;

  beforeAll(async () => {
    testAuth = makeTestAuth({
      throttle: generousThrottle,
      impersonation: { enabled: true, duration: "30m" },
      apiKeys: { enabled: true },
      email: { send: () => {}, resetUrl: "https://app.example.com/reset", verifyUrl: "https://app.example.com/verify" },
    });
    testAuth.auth.events.on("*", (event) => {
      events.push(event);
    });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  function ok<T = Record<string, unknown>>(answer: CallResult): T {
    expectEnvelope(answer, 0);
    return answer.body.data as T;
  }
  const get = (path: string, token: string) => call(server, "GET", path, { token });
  const send = (method: string, path: string, token: string, json: unknown = {}) => call(server, method, path, { token, json });
  /** A success of the app's own route, which answers in the envelope's shape without Portcullis's headers. */
  const appAnswer = (answer: CallResult) => {
    expect([answer.status, answer.body.code], answer.text).toEqual([200, 0]);
    return answer.body.data as Record<string, unknown>;
  };
  const refresh = (refreshToken: string) => post(server, `${base}/refresh`, { refreshToken });

  /** A new user signed in just now, with these roles. */
  async function signedIn(roles: string[] = []) {
    made += 1;
    const username = `${roles[0] ?? "user"}-${tag}-${made}`;
    const user = await createUser(testAuth.auth, { username, password: testPassword, roles });
    const tokens = ok<{ accessToken: string; refreshToken: string }>(
      await post(server, `${base}/login`, { username, password: testPassword }),
    );
    return { id: user.id, username, ...tokens };
  }

  /** An administrator who may impersonate, the user they act as, and the impersonated session. */
  async function impersonating() {
    const admin = await signedIn(["admin", "impersonator"]);
    const user = await signedIn();
    const answer = await send("POST", `${base}/admin/users/${user.id}/impersonate`, admin.accessToken);
    expect(answer.headers.get("set-cookie")).toBeNull();
    return { admin, user, session: ok<ImpersonationAnswer>(answer) };
  }

  const eventsOf = (type: string, userId: string) =>
    events.filter((event) => event.type === type && (event as { userId?: string }).userId === userId);

  it("IMP-1: an administrator with the impersonation role, re-authenticated, acts as a user: the tokens carry act, req.auth.actor names them, the user's sessions show who acts", async () => {
    const plainAdmin = await signedIn(["admin"]);
    const { admin, user, session } = await impersonating();
    const otherAdmin = await signedIn(["admin"]);

    expect(session.user.id).toBe(user.id);
    expect(session.impersonation).toEqual({ by: admin.id, expiresAt: testAuth.clock.now + durationMs });
    expect(claimsOf(session.accessToken)).toMatchObject({ sub: user.id, act: { sub: admin.id }, amr: [] });
    expect(appAnswer(await get(whoRoute, session.accessToken))).toEqual({ userId: user.id, actor: { userId: admin.id } });
    expect(appAnswer(await get(whoRoute, user.accessToken))).toEqual({ userId: user.id, actor: null });
    const listed = ok<{ current: boolean; impersonatedBy: unknown }[]>(await get(`${base}/sessions`, user.accessToken));
    expect(listed.find((entry) => !entry.current)?.impersonatedBy).toEqual({ id: admin.id, username: admin.username });
    expect(listed.find((entry) => entry.current)?.impersonatedBy).toBeNull();
    expect(eventsOf("impersonation.started", user.id)).toEqual([expect.objectContaining({ by: admin.id })]);

    // Who may not: an administrator without the role, a user, oneself, another administrator, no one.
    expectEnvelope(await send("POST", `${base}/admin/users/${user.id}/impersonate`, plainAdmin.accessToken), 40300);
    expectEnvelope(await send("POST", `${base}/admin/users/${admin.id}/impersonate`, user.accessToken), 40300);
    expectEnvelope(await send("POST", `${base}/admin/users/${admin.id}/impersonate`, admin.accessToken), 40300);
    expectEnvelope(await send("POST", `${base}/admin/users/${otherAdmin.id}/impersonate`, admin.accessToken), 40300);
    expectEnvelope(await send("POST", `${base}/admin/users/nobody/impersonate`, admin.accessToken), 40400);
    // An impersonated session is no administrator's: it cannot impersonate in turn.
    expectEnvelope(await send("POST", `${base}/admin/users/${user.id}/impersonate`, session.accessToken), 40300);

    // Past recentSignIn the administrator proves themselves again (STUP-3).
    testAuth.clock.advance(301_000);
    const path = `${base}/admin/users/${user.id}/impersonate`;
    expectEnvelope(await send("POST", path, admin.accessToken), 40001);
    expectEnvelope(await send("POST", path, admin.accessToken, { password: "wrong" }), 40100);
    ok(await send("POST", path, admin.accessToken, { password: testPassword }));
  });

  it("IMP-2: the impersonated session cannot change the password, set up TOTP, add or remove a passkey, change the email, make an API key, re-authenticate or end every session", async () => {
    const { admin, user, session } = await impersonating();
    const token = session.accessToken;
    const proof = { password: testPassword };
    const refused: [string, string, Record<string, unknown>][] = [
      ["POST", "/password", { currentPassword: testPassword, newPassword: "an entirely new passphrase" }],
      ["POST", "/2fa/setup", proof],
      ["POST", "/public-key/register/begin", { label: "mine", ...proof }],
      ["DELETE", "/public-key/credentials/AAAA", proof],
      ["POST", "/email", { email: "new@example.com", ...proof }],
      ["POST", "/api-keys", { name: "exfiltrate", ...proof }],
      ["POST", "/reauthenticate", proof],
      ["POST", "/sessions/end-others", proof],
      ["DELETE", "/sessions", {}],
    ];
    for (const [method, path, body] of refused) {
      expectEnvelope(await send(method, `${base}${path}`, token, body), 40300);
    }
    expect(eventsOf("impersonation.refused", user.id).length).toBeGreaterThanOrEqual(refused.length - 1);
    // The user's own session is untouched, and can do what the impersonated one could not.
    expect(ok(await get(`${base}/me`, user.accessToken))).toMatchObject({ id: user.id });
    expect(ok(await get(`${base}/me`, token))).toMatchObject({ id: user.id });
    ok(await send("POST", `${base}/api-keys`, user.accessToken, { name: "own", ...proof }));
    expect(admin.id).not.toBe(user.id);
  });

  it("IMP-3: the impersonated session ends at impersonation.duration; its refreshes never extend it", async () => {
    const { user, session } = await impersonating();
    const started = testAuth.clock.now;
    testAuth.clock.advance(20 * 60_000);
    const renewed = ok<{ accessToken: string; refreshToken: string }>(await refresh(session.refreshToken));
    expect(claimsOf(renewed.accessToken)).toMatchObject({ act: { sub: session.impersonation.by } });
    const listed = ok<{ current: boolean; expiresAt: number }[]>(await get(`${base}/sessions`, renewed.accessToken));
    expect(listed.find((entry) => entry.current)?.expiresAt).toBe(started + durationMs);
    testAuth.clock.advance(5 * 60_000);
    const again = ok<{ accessToken: string; refreshToken: string }>(await refresh(renewed.refreshToken));
    testAuth.clock.advance(5 * 60_000 + 1000);
    expectEnvelope(await refresh(again.refreshToken), 40101);
    expectEnvelope(await get(whoRoute, again.accessToken), 40101);
    expect(user.id).toBe(session.user.id);
  });

  it("IMP-4: the end route ends the impersonated session; refresh is refused once the administrator loses the role", async () => {
    const first = await impersonating();
    expectEnvelope(await post(server, `${base}/impersonation/end`, {}, { token: first.user.accessToken }), 40300);
    expect(ok(await post(server, `${base}/impersonation/end`, {}, { token: first.session.accessToken }))).toEqual({
      ended: true,
    });
    expectEnvelope(await refresh(first.session.refreshToken), 40101);
    expectEnvelope(await get(whoRoute, first.session.accessToken), 40101);
    expect(eventsOf("impersonation.ended", first.user.id)).toEqual([expect.objectContaining({ by: first.admin.id })]);

    const second = await impersonating();
    const root = await signedIn(["admin"]);
    ok(await send("PATCH", `${base}/admin/users/${second.admin.id}`, root.accessToken, { roles: ["admin"] }));
    expectEnvelope(await refresh(second.session.refreshToken), 40101);
    expect(eventsOf("impersonation.ended", second.user.id)).toEqual([expect.objectContaining({ by: second.admin.id })]);
  });
});

describeOpenApiDrift({ exercises: ["login", "refresh", "listSessions", "impersonateUser", "endImpersonation"] });
