// Issue 42 item 4 over HTTP on every adapter: sign-up with a passkey and no password. The routes
// off unless sign-up and passkeys are both on (PL-17), the account made and signed in, then signing
// in with its passkey with and without a username, re-authenticating with it, and keeping its last
// passkey (PL-15); nothing stored by a refused or replayed finish, one account of 20 concurrent
// finishes or sign-ups (PL-16); the client address's budget (RL-7).
import { openApiDocument } from "@portcullis/core";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestAuth, createTestUser, generousThrottle, makeTestAuth, makeTestAuthenticator } from "../fixtures/auth.js";
import { type CallResult, call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, type StartServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const signUpPath = `${base}/register/public-key`;
const ceremonyHeader = (ceremonyId: string) => ({ "X-WebAuthn-Ceremony": ceremonyId });

/** A server for one `describe`, its auth made with `config`. */
function useServer(start: StartServer, config: Parameters<typeof makeTestAuth>[0]) {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth(config);
    context.server = await start(context.testAuth.auth);
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

/** register/public-key/begin (answer checked): the ceremony id and the creation options. */
async function beginSignUp(server: RunningServer, body: Record<string, unknown>) {
  const begun = await post(server, `${signUpPath}/begin`, body);
  expectEnvelope(begun, 0);
  expect(Object.keys(begun.body.data).sort()).toEqual(["ceremonyId", "options"]);
  return begun.body.data as { ceremonyId: string; options: PublicKeyCredentialCreationOptionsJSON };
}

const finishSignUp = (server: RunningServer, ceremonyId: string, response: unknown): Promise<CallResult> =>
  post(server, `${signUpPath}/finish`, response, { headers: ceremonyHeader(ceremonyId) });

/** A whole passkey sign-up over HTTP: the finish's answer and the credential id made. */
async function signUp(server: RunningServer, body: Record<string, unknown>, authenticator: SoftwareAuthenticator) {
  const { ceremonyId, options } = await beginSignUp(server, body);
  const response = authenticator.register(options);
  return { answer: await finishSignUp(server, ceremonyId, response), credentialId: response.id };
}

/** A passkey sign-in over HTTP, discoverable unless `username` is given: the answer. */
async function passkeySignIn(server: RunningServer, authenticator: SoftwareAuthenticator, username?: string) {
  const begun = await post(server, `${base}/public-key/login/begin`, username === undefined ? {} : { username });
  expectEnvelope(begun, 0);
  const assertion = authenticator.authenticate(begun.body.data.options);
  return post(server, `${base}/public-key/login/finish`, assertion, { headers: ceremonyHeader(begun.body.data.ceremonyId) });
}

describe.each(adapters)("passkey sign-up over HTTP on %s", (_name, start) => {
  describe("PL-17: off unless signUp.enabled and passkeys are configured", () => {
    const signUpOff = useServer(start, { throttle: generousThrottle });
    const passkeysOff = useServer(start, { throttle: generousThrottle, signUp: { enabled: true }, passkeys: undefined });

    it("PL-17: both routes answer 40400 and are not in the OpenAPI document; nothing is stored", async () => {
      for (const { server, testAuth } of [signUpOff, passkeysOff]) {
        expectEnvelope(await post(server, `${signUpPath}/begin`, { username: "newcomer" }), 40400);
        expectEnvelope(await finishSignUp(server, "x", {}), 40400);
        const paths = Object.keys(openApiDocument(testAuth.auth).paths);
        expect(paths.filter((path) => path.startsWith(signUpPath))).toEqual([]);
        expect(await testAuth.auth.storage.users.findByUsernameKey("newcomer")).toBeNull();
      }
    });
  });

  describe("with signUp.enabled and passkeys", () => {
    const context = useServer(start, { throttle: generousThrottle, signUp: { enabled: true, defaultRoles: ["member"] } });

    it("PL-15: makes an account whose way in is the passkey and signs it in; it signs in with the passkey with and without a username", async () => {
      const { server, testAuth } = context;
      const authenticator = makeTestAuthenticator();
      const { ceremonyId, options } = await beginSignUp(server, { username: "Newcomer", email: "n@example.com" });
      expect(options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
      expect(options.user.name).toBe("Newcomer");
      const answer = await finishSignUp(server, ceremonyId, authenticator.register(options));
      expectEnvelope(answer, 0);
      const { user, accessToken, deviceToken } = answer.body.data;
      expect(user).toEqual({
        id: expect.any(String),
        username: "Newcomer",
        roles: ["member"],
        totpEnabled: false,
        email: "n@example.com",
        emailVerified: false,
        createdAt: testAuth.clock.now,
      });
      expect(deviceToken).toEqual(expect.any(String));
      expect(answer.headers.get("set-cookie")).toMatch(/^portcullis_device=[^;]+; .*HttpOnly/);
      expectEnvelope(await call(server, "GET", `${base}/me`, { token: accessToken }), 0);
      expect((await testAuth.auth.storage.users.findById(user.id))?.passwordHash).toBeNull();
      for (const username of [undefined, "newcomer"]) {
        const signedIn = await passkeySignIn(server, authenticator, username);
        expectEnvelope(signedIn, 0);
        expect(signedIn.body.data.user.id).toBe(user.id);
      }
      expectEnvelope(await post(server, `${base}/login`, { username: "newcomer", password: "any password at all" }), 40100);
    });

    it("PL-15, WA-6: re-authenticates with the passkey; its last passkey is kept (40900) until a second one is registered", async () => {
      const { server, testAuth } = context;
      const authenticator = makeTestAuthenticator();
      const { answer, credentialId } = await signUp(server, { username: "keeper" }, authenticator);
      expectEnvelope(answer, 0);
      testAuth.clock.advance(10 * 60_000);
      const stale = answer.body.data.accessToken;
      const revoke = (token: string, id: string) =>
        call(server, "DELETE", `${base}/public-key/credentials/${id}`, { token, json: {} });
      expectEnvelope(await revoke(stale, credentialId), 40001);
      const begun = await post(server, `${base}/reauthenticate/public-key/begin`, {}, { token: stale });
      expectEnvelope(begun, 0);
      const renewed = await post(
        server,
        `${base}/reauthenticate/public-key/finish`,
        authenticator.authenticate(begun.body.data.options),
        { token: stale, headers: ceremonyHeader(begun.body.data.ceremonyId) },
      );
      expectEnvelope(renewed, 0);
      const token = renewed.body.data.accessToken;
      expectEnvelope(await revoke(token, credentialId), 40900);
      const phone = makeTestAuthenticator();
      const registering = await post(server, `${base}/public-key/register/begin`, { label: "Phone" }, { token });
      expectEnvelope(registering, 0);
      const registered = await post(server, `${base}/public-key/register/finish`, phone.register(registering.body.data.options), {
        token,
        headers: ceremonyHeader(registering.body.data.ceremonyId),
      });
      expectEnvelope(registered, 0);
      expectEnvelope(await revoke(token, credentialId), 0);
      expectEnvelope(await revoke(token, registered.body.data.id), 40900);
      expectEnvelope(await passkeySignIn(server, phone), 0);
    });

    it("PL-16: a refused or replayed finish stores nothing more; no ceremony header is 40002; a taken username is 40900 at begin", async () => {
      const { server, testAuth } = context;
      const authenticator = makeTestAuthenticator();
      const refused = await beginSignUp(server, { username: "refused" });
      const wrongOrigin = authenticator.register(refused.options, { origin: "https://evil.example" });
      expectEnvelope(await finishSignUp(server, refused.ceremonyId, wrongOrigin), 40100);
      expectEnvelope(await finishSignUp(server, refused.ceremonyId, authenticator.register(refused.options)), 40100);
      expect(await testAuth.auth.storage.users.findByUsernameKey("refused")).toBeNull();
      expect(await testAuth.auth.storage.passkeys.findById(wrongOrigin.id)).toBeNull();
      const { ceremonyId, options } = await beginSignUp(server, { username: "once" });
      const response = authenticator.register(options);
      expectEnvelope(await post(server, `${signUpPath}/finish`, response), 40002);
      expectEnvelope(await finishSignUp(server, ceremonyId, response), 0);
      expectEnvelope(await finishSignUp(server, ceremonyId, response), 40100);
      const taken = await post(server, `${signUpPath}/begin`, { username: "ONCE" });
      expectEnvelope(taken, 40900);
      expect(taken.body.message).toBe("The username is taken");
    });

    it("PL-16: of 20 concurrent finishes of one ceremony one makes the account; of 20 sign-ups for one username one does", async () => {
      const { server, testAuth } = context;
      const one = await beginSignUp(server, { username: "racer" });
      const response = makeTestAuthenticator().register(one.options);
      const finishes = await Promise.all(Array.from({ length: 20 }, () => finishSignUp(server, one.ceremonyId, response)));
      expect(finishes.map((answer) => answer.body.code).sort()).toEqual([0, ...Array(19).fill(40100)]);
      const begun = await Promise.all(Array.from({ length: 20 }, () => beginSignUp(server, { username: "crowd" })));
      const responses = begun.map(({ options }) => makeTestAuthenticator().register(options));
      const answers = await Promise.all(begun.map(({ ceremonyId }, index) => finishSignUp(server, ceremonyId, responses[index])));
      expect(answers.map((answer) => answer.body.code).sort()).toEqual([0, ...Array(19).fill(40900)]);
      const winner = answers.find((answer) => answer.body.code === 0)?.body.data.user.id;
      const stored = await Promise.all(responses.map((made) => testAuth.auth.storage.passkeys.findById(made.id)));
      expect(stored.filter((passkey) => passkey !== null).map((passkey) => passkey?.userId)).toEqual([winner]);
    });

    it("HTTP-1: the finish reads bodies up to 1 MiB, as every WebAuthn finish; the begin stops at 64 KiB", async () => {
      const { server } = context;
      const padded = `{"pad":"${"a".repeat(90 * 1024)}"}`;
      const send = (path: string) =>
        call(server, "POST", `${signUpPath}${path}`, {
          body: padded,
          headers: { "content-type": "application/json", connection: "close", ...ceremonyHeader("an-unknown-ceremony") },
        });
      expectEnvelope(await send("/finish"), 40100);
      const tooLarge = await send("/begin");
      expectEnvelope(tooLarge, 40002);
      expect(tooLarge.body.message).toBe("The request body is too large");
    });

    it("PL-17, SU-1: no role, id, handle or state is taken from the body", async () => {
      const { server, testAuth } = context;
      const { answer } = await signUp(
        server,
        { username: "mallory", roles: ["admin"], id: "chosen-id", userHandle: "AAAA", disabled: true, emailVerified: true },
        makeTestAuthenticator(),
      );
      expectEnvelope(answer, 0);
      expect(answer.body.data.user).toMatchObject({ username: "mallory", roles: ["member"] });
      expect(answer.body.data.user.id).not.toBe("chosen-id");
      const [passkey] = await testAuth.auth.storage.passkeys.listByUser(answer.body.data.user.id);
      expect(passkey?.userHandle).not.toBe("AAAA");
    });
  });

  describe("PL-17, RL-7: throttled per client address", () => {
    const context = useServer(start, {
      throttle: { ...generousThrottle, unauthenticatedWrites: [{ limit: 2, window: "10m" }] },
      signUp: { enabled: true },
    });

    it("PL-17, RL-7: each address begins throttle.unauthenticatedWrites sign-ups, a taken name's refusal included, then 42900 with Retry-After", async () => {
      const { server, testAuth } = context;
      await createTestUser(testAuth.auth, "taken");
      expectEnvelope(await post(server, `${signUpPath}/begin`, { username: "taken" }), 40900);
      await beginSignUp(server, { username: "first" });
      const throttled = await post(server, `${signUpPath}/begin`, { username: "second" });
      expectEnvelope(throttled, 42900);
      expect(throttled.headers.get("retry-after")).toBe("600");
    });
  });
});

describeOpenApiDrift({
  exercises: [
    "beginPasskeySignUp",
    "finishPasskeySignUp",
    "webauthnBegin",
    "webauthnFinish",
    "reauthenticateWithPasskeyBegin",
    "reauthenticateWithPasskeyFinish",
    "revokePasskey",
  ],
});
