import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  base32Decode,
  createTestUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  testPassword,
  totpCodeAt,
} from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const minutes = (count: number) => count * 60_000;

/** The routes a signed-in user reaches with an access token: the host's own, `/me`, the account's. */
const protectedRoutes: [method: string, path: string, body?: unknown][] = [
  ["GET", "/api/v1/things"],
  ["DELETE", "/api/v1/things/1"],
  ["GET", `${base}/me`],
  ["GET", `${base}/sessions`],
  ["DELETE", `${base}/sessions`],
  ["POST", `${base}/password`, { currentPassword: testPassword, newPassword: "another long passphrase" }],
  ["POST", `${base}/2fa/setup`, { password: testPassword }],
  ["POST", `${base}/2fa/enable`, { code: "123456", password: testPassword }],
  ["POST", `${base}/public-key/register/begin`, { label: "Laptop", password: testPassword }],
  ["GET", `${base}/public-key/credentials`],
];

describe.each(adapters)("STUP-4 over HTTP on %s: a role that requires a second factor", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;

  beforeAll(async () => {
    testAuth = makeTestAuth({
      throttle: generousThrottle,
      secondFactor: { required: { roles: ["ops"] }, enrolmentTtl: "2m", enrolmentAttempts: 4 },
    });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  /** A user of the `ops` role signs in with the password: the 40105 answer, checked, and its temporary token. */
  async function enrolmentRequired(username: string): Promise<string> {
    await createTestUser(testAuth.auth, username, ["ops"]);
    const answer = await post(server, `${base}/login`, { username, password: testPassword });
    expectEnvelope(answer, 40105);
    expect(answer.status).toBe(200);
    expect(answer.body.message).toBe("A second factor must be enrolled first");
    expect(Object.keys(answer.body.data)).toEqual(["tempToken"]);
    expect(answer.headers.get("set-cookie")).toBeNull();
    return answer.body.data.tempToken as string;
  }

  const send = (method: string, path: string, token: string, body?: unknown): Promise<CallResult> =>
    body === undefined ? call(server, method, path, { token }) : post(server, path, body, { token });

  it("STUP-4, ASVS 6.3.3: before enrolling, the temporary token reaches no route: the host's, /me, the account's; then it enrols TOTP and the sign-in answers tokens that reach them all", async () => {
    const tempToken = await enrolmentRequired("ops-alice");
    for (const [method, path, body] of protectedRoutes) {
      const refused = await send(method, path, tempToken, body);
      expect({ method, path, code: refused.body?.code }).toEqual({ method, path, code: 40101 });
    }
    expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: tempToken }), 40101);
    expectEnvelope(await post(server, `${base}/2fa/verify`, { tempToken, code: "123456" }), 40100);
    expectEnvelope(await post(server, `${base}/2fa/recovery`, { tempToken, recoveryCode: "ABCD-EFGH-JKMN-PQRS" }), 40100);

    const setup = await post(server, `${base}/2fa/enrolment/setup`, { tempToken });
    expectEnvelope(setup, 0);
    expect(setup.body.data.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
    const secret = base32Decode(setup.body.data.secret);
    const enabled = await post(
      server,
      `${base}/2fa/enrolment/enable`,
      { tempToken, code: await totpCodeAt(testAuth.auth, secret) },
      { headers: { "user-agent": "Enrolling browser" } },
    );
    expectEnvelope(enabled, 0);
    const { accessToken, refreshToken, recoveryCodes, user } = enabled.body.data;
    expect(recoveryCodes).toHaveLength(10);
    expect(user).toMatchObject({ username: "ops-alice", roles: ["ops"], totpEnabled: true });
    expect(enabled.headers.get("set-cookie")).toMatch(/^portcullis_device=[^;]+; .*HttpOnly/);
    for (const [method, path] of protectedRoutes.filter(([method]) => method === "GET")) {
      const reached = await send(method, path, accessToken);
      expect({ method, path, status: reached.status, code: reached.body?.code }).toEqual({ method, path, status: 200, code: 0 });
    }
    const sessions = await call(server, "GET", `${base}/sessions`, { token: accessToken });
    expect(sessions.body.data).toMatchObject([{ current: true, userAgent: "Enrolling browser" }]);
    expectEnvelope(await post(server, `${base}/refresh`, { refreshToken }), 0);

    const again = await post(server, `${base}/2fa/enrolment/enable`, { tempToken, code: await nextTotpCode(testAuth, secret) });
    expectEnvelope(again, 40100);
    const next = await post(server, `${base}/login`, { username: "ops-alice", password: testPassword });
    expectEnvelope(next, 40102);
    const verified = await post(server, `${base}/2fa/verify`, {
      tempToken: next.body.data.tempToken,
      code: await nextTotpCode(testAuth, secret),
    });
    expectEnvelope(verified, 0);
  });

  it("STUP-4, ASVS 6.3.3: a user of another role signs in as before; the enrolment routes take no access token, in the body or as Bearer", async () => {
    await createTestUser(testAuth.auth, "plain-bob", ["user"]);
    const signedIn = await post(server, `${base}/login`, { username: "plain-bob", password: testPassword });
    expectEnvelope(signedIn, 0);
    const { accessToken, refreshToken } = signedIn.body.data;
    for (const token of [accessToken, refreshToken]) {
      expectEnvelope(await post(server, `${base}/2fa/enrolment/setup`, { tempToken: token }), 40100);
    }
    expectEnvelope(await post(server, `${base}/2fa/enrolment/setup`, {}, { token: accessToken }), 40001);
    expectEnvelope(await post(server, `${base}/2fa/enrolment/enable`, { code: "123456" }, { token: accessToken }), 40001);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-3): the temporary token expires: after enrolmentTtl a right code enrols nothing", async () => {
    const tempToken = await enrolmentRequired("ops-carol");
    const setup = await post(server, `${base}/2fa/enrolment/setup`, { tempToken });
    expectEnvelope(setup, 0);
    testAuth.clock.advance(minutes(2));
    const late = await post(server, `${base}/2fa/enrolment/enable`, {
      tempToken,
      code: await totpCodeAt(testAuth.auth, base32Decode(setup.body.data.secret)),
    });
    expectEnvelope(late, 40100);
  });

  it("STUP-4, ASVS 6.3.3 (TMP-4): the temporary token serves enrolmentAttempts requests: wrong codes are 40103, and past the limit a right code is 40100", async () => {
    const tempToken = await enrolmentRequired("ops-dave");
    const setup = await post(server, `${base}/2fa/enrolment/setup`, { tempToken });
    expectEnvelope(setup, 0);
    const secret = base32Decode(setup.body.data.secret);
    const right = await totpCodeAt(testAuth.auth, secret);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expectEnvelope(await post(server, `${base}/2fa/enrolment/enable`, { tempToken, code: wrong }), 40103);
    }
    expectEnvelope(await post(server, `${base}/2fa/enrolment/enable`, { tempToken, code: right }), 40100);
  });

  it("STUP-4, ASVS 6.3.3: the temporary token registers a passkey instead; the sign-in answers tokens, and the password alone then answers 40300: sign in with the passkey", async () => {
    const tempToken = await enrolmentRequired("ops-erin");
    const authenticator = makeTestAuthenticator();
    const begun = await post(server, `${base}/public-key/enrolment/begin`, { tempToken, label: "Laptop" });
    expectEnvelope(begun, 0);
    const { ceremonyId, options } = begun.body.data;
    expectEnvelope(
      await post(server, `${base}/public-key/register/finish`, makeTestAuthenticator().register(options), {
        token: tempToken,
        headers: { "X-WebAuthn-Ceremony": ceremonyId },
      }),
      40101,
    );
    const again = await post(server, `${base}/public-key/enrolment/begin`, { tempToken, label: "Laptop" });
    const finished = await post(
      server,
      `${base}/public-key/enrolment/finish`,
      { tempToken, response: authenticator.register(again.body.data.options) },
      { headers: { "X-WebAuthn-Ceremony": again.body.data.ceremonyId, "user-agent": "Passkey browser" } },
    );
    expectEnvelope(finished, 0);
    expect(finished.body.data.passkey).toMatchObject({ label: "Laptop" });
    const sessions = await call(server, "GET", `${base}/sessions`, { token: finished.body.data.accessToken });
    expect(sessions.body.data).toMatchObject([{ current: true, userAgent: "Passkey browser" }]);
    expect((await call(server, "GET", "/api/v1/things", { token: finished.body.data.accessToken })).body.code).toBe(0);

    const password = await post(server, `${base}/login`, { username: "ops-erin", password: testPassword });
    expectEnvelope(password, 40300);
    expect(password.body.message).toBe("This account's second factor is a passkey: sign in with the passkey");
    const loginBegun = await post(server, `${base}/public-key/login/begin`, {});
    const signedIn = await post(
      server,
      `${base}/public-key/login/finish`,
      authenticator.authenticate(loginBegun.body.data.options),
      {
        headers: { "X-WebAuthn-Ceremony": loginBegun.body.data.ceremonyId },
      },
    );
    expectEnvelope(signedIn, 0);
  });
});

describe.each(adapters)("STUP-4 over HTTP on %s: without secondFactor.required", (_name, start) => {
  it("STUP-4: the enrolment routes do not exist (40400), and a sign-in answers tokens as before", async () => {
    const testAuth = makeTestAuth({ throttle: generousThrottle });
    const server = await start(testAuth.auth);
    try {
      await createTestUser(testAuth.auth, "ops-frank", ["ops"]);
      expectEnvelope(await post(server, `${base}/login`, { username: "ops-frank", password: testPassword }), 0);
      for (const path of [
        "2fa/enrolment/setup",
        "2fa/enrolment/enable",
        "public-key/enrolment/begin",
        "public-key/enrolment/finish",
      ]) {
        expectEnvelope(await post(server, `${base}/${path}`, { tempToken: "x" }), 40400);
      }
    } finally {
      await server.close();
    }
  });
});

describeOpenApiDrift({
  exercises: [
    "login",
    "beginTotpEnrolment",
    "finishTotpEnrolment",
    "beginPasskeyEnrolment",
    "finishPasskeyEnrolment",
    "verifyTotp",
    "getPublicUser",
    "refresh",
    "webauthnBegin",
    "webauthnFinish",
  ],
});
