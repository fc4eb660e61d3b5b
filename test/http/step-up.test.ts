// Step-up end to end on every adapter (issue 37): what the token knows about the sign-in
// (STUP-1), routes of the app that ask for a recent sign-in or a second factor and the
// re-authentication that satisfies them (STUP-2), and sensitive changes that need every factor
// (STUP-3). The clock is frozen (test/fixtures/auth.ts) and moved by hand.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  type TotpTestUser,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  testPassword,
} from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const minutes = (count: number) => count * 60_000;

describe.each(adapters)("step-up over HTTP on %s", (_name, start) => {
  let testAuth: TestAuth;
  let server: RunningServer;

  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle });
    server = await start(testAuth.auth);
  });
  afterAll(async () => {
    await server.close();
  });

  const seconds = () => Math.floor(testAuth.clock.now / 1000);
  const get = (path: string, token: string) => call(server, "GET", path, { token });
  /** A success of one of the app's own routes, which answer in the envelope's shape without Portcullis's headers. */
  const expectAppAnswer = (answer: CallResult) => expect([answer.status, answer.body.code], answer.text).toEqual([200, 0]);

  /** Signs a user without TOTP in with the password: the token set. */
  async function signIn(username: string) {
    const answer = await post(server, `${base}/login`, { username, password: testPassword });
    expectEnvelope(answer, 0);
    return answer.body.data as { accessToken: string; refreshToken: string };
  }

  /** Signs a TOTP user in with the password and a code: the token set. */
  async function signInWithCode(user: TotpTestUser) {
    const first = await post(server, `${base}/login`, { username: user.username, password: testPassword });
    expectEnvelope(first, 40102);
    const code = await nextTotpCode(testAuth, user.secret);
    const answer = await post(server, `${base}/2fa/verify`, { tempToken: first.body.data.tempToken, code });
    expectEnvelope(answer, 0);
    return answer.body.data as { accessToken: string; refreshToken: string };
  }

  function expectStepUp(answer: CallResult, required: { maxAge?: number; amr?: string[] }) {
    expectEnvelope(answer, 40104);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({
      code: 40104,
      message: "Step-up required: re-authenticate, then try again",
      data: { required },
    });
  }

  it("STUP-1, ASVS 10.3.4: req.auth (c.get('auth'), request.auth) carries the sign-in's authTime, in seconds, and amr", async () => {
    const user = await createTestUser(testAuth.auth, "reader");
    testAuth.clock.advance(1500);
    const tokens = await signIn("reader");
    const answer = await get("/api/v1/things/recent", tokens.accessToken);
    expectAppAnswer(answer);
    expect(answer.body.data).toEqual({ userId: user.id, authTime: seconds(), amr: ["pwd"] });
  });

  it("STUP-2, ASVS 7.5.3: a route with maxAge 5m answers 40104 naming maxAge after six minutes, and passes after re-authentication with the password; refreshes carry it", async () => {
    await createTestUser(testAuth.auth, "stepper");
    const tokens = await signIn("stepper");
    expectAppAnswer(await get("/api/v1/things/recent", tokens.accessToken));
    testAuth.clock.advance(minutes(6));
    const refreshed = await post(server, `${base}/refresh`, { refreshToken: tokens.refreshToken });
    expectEnvelope(refreshed, 0);
    expectStepUp(await get("/api/v1/things/recent", refreshed.body.data.accessToken), { maxAge: 300 });

    expectEnvelope(await post(server, `${base}/reauthenticate`, {}, { token: refreshed.body.data.accessToken }), 40001);
    const wrong = { password: "not the password" };
    expectEnvelope(await post(server, `${base}/reauthenticate`, wrong, { token: refreshed.body.data.accessToken }), 40100);
    const raised = await post(
      server,
      `${base}/reauthenticate`,
      { password: testPassword },
      { token: refreshed.body.data.accessToken },
    );
    expectEnvelope(raised, 0);
    expect(Object.keys(raised.body.data).sort()).toEqual(["accessToken", "expiresIn", "refreshToken", "tokenType", "user"]);
    const raisedAt = seconds();
    const passed = await get("/api/v1/things/recent", raised.body.data.accessToken);
    expectAppAnswer(passed);
    expect(passed.body.data).toMatchObject({ authTime: raisedAt, amr: ["pwd"] });
    // The tokens before the re-authentication belong to the session it ended (ASVS 7.2.4).
    expectEnvelope(await get("/api/v1/things/recent", refreshed.body.data.accessToken), 40101);
    // The new session's refresh token refreshes, carrying the raised sign-in.
    testAuth.clock.advance(minutes(2));
    const later = await post(server, `${base}/refresh`, { refreshToken: raised.body.data.refreshToken });
    expectEnvelope(later, 0);
    expect((await get("/api/v1/things/recent", later.body.data.accessToken)).body.data).toMatchObject({ authTime: raisedAt });
    testAuth.clock.advance(minutes(4));
    expectStepUp(await get("/api/v1/things/recent", later.body.data.accessToken), { maxAge: 300 });
  });

  it("STUP-2, ASVS 7.2.4: a re-authentication answers the tokens of a new session as a sign-in does; the old access and refresh tokens are refused (40101), a stolen copy of the old refresh token ends nothing, and the sessions list shows the new session in place of the old", async () => {
    await createTestUser(testAuth.auth, "renewing");
    const signedIn = await post(server, `${base}/login`, { username: "renewing", password: testPassword });
    expectEnvelope(signedIn, 0);
    const old = signedIn.body.data as { accessToken: string; refreshToken: string };
    const listed = await get(`${base}/sessions`, old.accessToken);
    expectEnvelope(listed, 0);
    const [oldSession] = listed.body.data as { id: string }[];
    testAuth.clock.advance(minutes(6));
    const renewed = await post(
      server,
      `${base}/reauthenticate`,
      { password: testPassword },
      { token: old.accessToken, headers: { "user-agent": "Renewing browser" } },
    );
    expectEnvelope(renewed, 0);
    expect(renewed.status).toBe(200);
    const signInKeys = Object.keys(signedIn.body.data).filter((key) => key !== "deviceToken" && key !== "offerPasskey");
    expect(Object.keys(renewed.body.data).sort()).toEqual(signInKeys.sort());
    expect(renewed.body.data).toMatchObject({ tokenType: "Bearer", expiresIn: 900, user: { username: "renewing" } });
    expect(renewed.body.data.refreshToken).not.toBe(old.refreshToken);
    expect(renewed.headers.get("set-cookie")).toBeNull();

    expectEnvelope(await get("/api/v1/things/recent", old.accessToken), 40101);
    expectEnvelope(await get(`${base}/me`, old.accessToken), 40101);
    for (let copy = 0; copy < 2; copy += 1) {
      expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: old.refreshToken }), 40101);
    }
    const passed = await get("/api/v1/things/recent", renewed.body.data.accessToken);
    expectAppAnswer(passed);
    expect(passed.body.data).toMatchObject({ authTime: seconds(), amr: ["pwd"] });
    const sessions = await get(`${base}/sessions`, renewed.body.data.accessToken);
    expectEnvelope(sessions, 0);
    expect(sessions.body.data).toEqual([expect.objectContaining({ current: true, amr: ["pwd"], userAgent: "Renewing browser" })]);
    expect(sessions.body.data[0].id).not.toBe(oldSession?.id);
    const next = await post(server, `${base}/refresh`, { refreshToken: renewed.body.data.refreshToken });
    expectEnvelope(next, 0);
    expectAppAnswer(await get("/api/v1/things/recent", next.body.data.accessToken));
  });

  it("STUP-2, ASVS 7.5.3: a route asking for a second factor answers 40104 naming mfa to a password session; a TOTP user re-authenticates with the password and a code", async () => {
    await createTestUser(testAuth.auth, "one-factor");
    expectStepUp(await get("/api/v1/things/strong", (await signIn("one-factor")).accessToken), { amr: ["mfa"] });

    const user = await createTotpUser(testAuth.auth, "two-factors");
    const tokens = await signInWithCode(user);
    const strong = await get("/api/v1/things/strong", tokens.accessToken);
    expectAppAnswer(strong);
    expect(strong.body.data.amr).toEqual(["pwd", "otp", "mfa"]);
    testAuth.clock.advance(minutes(6));
    expectStepUp(await get("/api/v1/things/recent", tokens.accessToken), { maxAge: 300 });
    // The password alone is not a re-authentication of an account with a second factor (STUP-3).
    const alone = await post(server, `${base}/reauthenticate`, { password: testPassword }, { token: tokens.accessToken });
    expectEnvelope(alone, 40001);
    expect(alone.body.message).toBe(
      "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
    );
    const proof = { password: testPassword, totpCode: await nextTotpCode(testAuth, user.secret) };
    const raised = await post(server, `${base}/reauthenticate`, proof, { token: tokens.accessToken });
    expectEnvelope(raised, 0);
    for (const path of ["/api/v1/things/recent", "/api/v1/things/strong"]) {
      const answer = await get(path, raised.body.data.accessToken);
      expectAppAnswer(answer);
      expect(answer.body.data).toMatchObject({ authTime: seconds(), amr: ["pwd", "otp", "mfa"] });
    }
  });

  it("STUP-2, ASVS 7.5.3: a passkey re-authenticates the session through begin and finish (hwk, user, mfa); the ceremony is this session's alone", async () => {
    const user = await createTestUser(testAuth.auth, "keyed");
    const authenticator = makeTestAuthenticator();
    const tokens = await signIn("keyed");
    const registration = await post(
      server,
      `${base}/public-key/register/begin`,
      { label: "Laptop" },
      { token: tokens.accessToken },
    );
    expectEnvelope(registration, 0);
    const registered = await post(
      server,
      `${base}/public-key/register/finish`,
      authenticator.register(registration.body.data.options),
      {
        token: tokens.accessToken,
        headers: { "x-webauthn-ceremony": registration.body.data.ceremonyId },
      },
    );
    expectEnvelope(registered, 0);
    testAuth.clock.advance(minutes(6));
    expectStepUp(await get("/api/v1/things/strong", tokens.accessToken), { amr: ["mfa"] });

    const begin = await post(server, `${base}/reauthenticate/public-key/begin`, {}, { token: tokens.accessToken });
    expectEnvelope(begin, 0);
    expect(begin.body.data.options.allowCredentials.map((credential: { id: string }) => credential.id)).toEqual([
      registered.body.data.id,
    ]);
    const assertion = authenticator.authenticate(begin.body.data.options);
    // Another session of the same user cannot finish it, and the attempt spends the ceremony.
    const other = await signIn("keyed");
    const stolen = await post(server, `${base}/reauthenticate/public-key/finish`, assertion, {
      token: other.accessToken,
      headers: { "x-webauthn-ceremony": begin.body.data.ceremonyId },
    });
    expectEnvelope(stolen, 40100);
    const again = await post(server, `${base}/reauthenticate/public-key/begin`, {}, { token: tokens.accessToken });
    const finish = await post(
      server,
      `${base}/reauthenticate/public-key/finish`,
      authenticator.authenticate(again.body.data.options),
      {
        token: tokens.accessToken,
        headers: { "x-webauthn-ceremony": again.body.data.ceremonyId, "user-agent": "Passkey Browser/7" },
      },
    );
    expectEnvelope(finish, 0);
    expect(Object.keys(finish.body.data).sort()).toEqual(["accessToken", "expiresIn", "refreshToken", "tokenType", "user"]);
    // The new session records the request that began it, as a sign-in's does.
    const listed = await get(`${base}/sessions`, finish.body.data.accessToken);
    expectEnvelope(listed, 0);
    expect(listed.body.data.find((session: { current: boolean }) => session.current)?.userAgent).toBe("Passkey Browser/7");
    const strong = await get("/api/v1/things/strong", finish.body.data.accessToken);
    expectAppAnswer(strong);
    expect(strong.body.data).toEqual({ userId: user.id, authTime: seconds(), amr: ["hwk", "user", "mfa"] });
    expectEnvelope(await get("/api/v1/things/strong", tokens.accessToken), 40101);
    expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: tokens.refreshToken }), 40101);
    expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: finish.body.data.refreshToken }), 0);
  });

  it("STUP-3, ASVS 6.4.3: a hijacked session with the password (its sign-in older than recentSignIn) cannot turn TOTP off", async () => {
    const user = await createTotpUser(testAuth.auth, "hijacked-old");
    const stolen = (await signInWithCode(user)).accessToken;
    testAuth.clock.advance(minutes(6));
    const disable = await post(server, `${base}/2fa/disable`, { password: testPassword }, { token: stolen });
    expectEnvelope(disable, 40001);
    expect(disable.body.message).toBe(
      "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
    );
    expectEnvelope(await post(server, `${base}/reauthenticate`, { password: testPassword }, { token: stolen }), 40001);
    expectEnvelope(await post(server, `${base}/2fa/recovery-codes`, { password: testPassword }, { token: stolen }), 40001);
    expectEnvelope(await post(server, `${base}/login`, { username: user.username, password: testPassword }), 40102);
  });

  it("STUP-3, ASVS 7.5.1: revoking a passkey past the re-authentication window takes the password and a TOTP code in the DELETE's body", async () => {
    const user = await createTotpUser(testAuth.auth, "keyed-totp");
    const tokens = await signInWithCode(user);
    const registration = await post(
      server,
      `${base}/public-key/register/begin`,
      { label: "Laptop" },
      { token: tokens.accessToken },
    );
    expectEnvelope(registration, 0);
    const registered = await post(
      server,
      `${base}/public-key/register/finish`,
      makeTestAuthenticator().register(registration.body.data.options),
      { token: tokens.accessToken, headers: { "x-webauthn-ceremony": registration.body.data.ceremonyId } },
    );
    expectEnvelope(registered, 0);
    testAuth.clock.advance(minutes(6));
    const path = `${base}/public-key/credentials/${registered.body.data.id}`;
    expectEnvelope(await call(server, "DELETE", path, { token: tokens.accessToken }), 40001);
    expectEnvelope(await call(server, "DELETE", path, { token: tokens.accessToken, json: { password: testPassword } }), 40001);
    const totpCode = await nextTotpCode(testAuth, user.secret);
    const revoked = await call(server, "DELETE", path, { token: tokens.accessToken, json: { password: testPassword, totpCode } });
    expectEnvelope(revoked, 0);
    expect(revoked.body.data).toEqual({ revoked: true });
  });

  it("STUP-3, ASVS 6.4.3: a hijacked session with the password whose amr lacks otp (signed in before TOTP was on) cannot turn TOTP off, even within recentSignIn", async () => {
    const user = await createTestUser(testAuth.auth, "hijacked-early");
    const stolen = (await signIn(user.username)).accessToken;
    const setup = await post(server, `${base}/2fa/setup`, {}, { token: stolen });
    expectEnvelope(setup, 0);
    const { base32Decode, totpCodeAt } = await import("../fixtures/auth.js");
    const secret = base32Decode(setup.body.data.secret);
    expectEnvelope(
      await post(server, `${base}/2fa/enable`, { code: await totpCodeAt(testAuth.auth, secret) }, { token: stolen }),
      0,
    );
    testAuth.clock.advance(minutes(1));
    for (const body of [{}, { password: testPassword }]) {
      const disable = await post(server, `${base}/2fa/disable`, body, { token: stolen });
      expectEnvelope(disable, 40001);
      expect(disable.body.message).toBe(
        "This account has a second factor: send a current TOTP code as well, or re-authenticate first",
      );
    }
    expectEnvelope(await post(server, `${base}/login`, { username: user.username, password: testPassword }), 40102);
    // The owner, with a code, can.
    const code = await totpCodeAt(testAuth.auth, secret, 1);
    expectEnvelope(await post(server, `${base}/2fa/disable`, { password: testPassword, code }, { token: stolen }), 0);
  });
});

describeOpenApiDrift({
  exercises: [
    "reauthenticate",
    "reauthenticateWithPasskeyBegin",
    "reauthenticateWithPasskeyFinish",
    "disableTotp",
    "regenerateRecoveryCodes",
    "login",
    "refresh",
  ],
});
