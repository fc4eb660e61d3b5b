import { generateKeyPairSync } from "node:crypto";
import {
  type AuthConfig,
  type CeremonyStart,
  type PasskeyInfo,
  type TokenSet,
  httpStatusFor,
  openApiDocument,
  routes,
  signOutEverywhere,
} from "@portcullis/core";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  type TestUser,
  type TotpTestUser,
  base32Decode,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  removePassword,
  testAudience,
  testIssuer,
  testPasskeys,
  testPassword,
  testRpId,
  totpCodeAt,
} from "../fixtures/auth.js";
import { type CallOptions, type CallResult, call, post, postWithContentLength } from "./client.js";
import { malformedCases } from "./malformed-cases.js";
import type { RunningServer, StartServer } from "./servers.js";

const base = "/api/v1/auth";
const generous = generousThrottle;

/** Options of {@link describeContract}. */
export interface ContractOptions {
  /** The app runs `express.json()` before the routes: core gets `req.body` instead of the stream. */
  bodyParsedEarlier?: boolean;
  /**
   * The body parser in front refuses bodies over this many bytes (`express.json()`'s default
   * `100kb`), so a passkey finish body above it is too large whatever the route's 1 MiB.
   */
  bodyParserLimit?: number;
  /**
   * The framework answers a request Node's HTTP parser refuses with a body of its own (Fastify's
   * default `clientErrorHandler` writes `{"error":"Bad Request",…}`), which is not Portcullis's.
   */
  frameworkAnswersClientErrors?: boolean;
}

/** An auth and a server around it for one `describe`, started in `beforeAll`, closed in `afterAll`. */
function useServer(start: StartServer, config: Partial<AuthConfig> = {}, host?: string) {
  const context = {} as { testAuth: TestAuth; server: RunningServer };
  beforeAll(async () => {
    context.testAuth = makeTestAuth({ throttle: generous, ...config });
    context.server = await start(context.testAuth.auth, host === undefined ? {} : { host });
  });
  afterAll(async () => {
    await context.server?.close();
  });
  return context;
}

/**
 * Checks a Portcullis answer: the envelope and nothing else (HTTP-5), the status the code
 * travels with (or 200 in `always-200` mode), and the headers of HTTP-4.
 */
export function expectEnvelope(result: CallResult, code: number, options: { always200?: boolean } = {}): void {
  expect(result.body, result.text).toMatchObject({ code });
  expect(typeof result.body.message).toBe("string");
  const allowedKeys =
    code === 0 || code === 40102 || code === 40104 || code === 40105
      ? ["code", "message", "data"]
      : code >= 50000
        ? ["code", "message", "requestId"]
        : ["code", "message"];
  expect(Object.keys(result.body).filter((key) => !allowedKeys.includes(key))).toEqual([]);
  // "stack" as a word: random token text may hold the letters.
  expect(result.text).not.toMatch(/\bstack\b|Error:|\.ts:\d|\.js:\d/);
  expect(result.status).toBe(options.always200 ? 200 : httpStatusFor(code));
  expect(result.headers.get("cache-control")).toBe("no-store");
  expect(result.headers.get("x-content-type-options")).toBe("nosniff");
  expect(result.headers.get("content-type")).toMatch(/^application\/json/);
}

/** A wrong-password login sent through the test server as a TLS-terminating proxy forwarding for `client`. */
const wrongLoginForwardedFor = (context: { server: RunningServer }) => (client: string, username: string) =>
  post(
    context.server,
    `${base}/login`,
    { username, password: "wrong password" },
    { headers: { "x-forwarded-for": client, "x-forwarded-proto": "https" } },
  );

const login = (server: RunningServer, username: string, password = testPassword) =>
  post(server, `${base}/login`, { username, password });

/** Signs in a user without TOTP and returns the token set. */
async function signIn(server: RunningServer, user: TestUser): Promise<TokenSet> {
  const result = await login(server, user.username);
  expectEnvelope(result, 0);
  return result.body.data as TokenSet;
}

/** Signs in a TOTP user's password and returns the temporary token. */
async function startSecondFactor(server: RunningServer, user: TestUser): Promise<string> {
  const result = await login(server, user.username);
  expectEnvelope(result, 40102);
  return result.body.data.tempToken as string;
}

/** The contract's user object of a test user (token sets, `/me`). */
const shownUser = (user: TestUser, totpEnabled = false) => ({
  id: user.id,
  username: user.username,
  roles: user.roles,
  totpEnabled,
  email: null,
  emailVerified: false,
  createdAt: user.createdAt,
});

/**
 * Checks the contract's token set; a completed sign-in (not a refresh) also carries the device
 * token (RL-5) and, with passkeys on (as the suite's auth has them), whether to offer one (PL-13).
 */
function expectTokenSet(data: unknown, user: TestUser, totpEnabled: boolean, answer: "sign-in" | "refresh" = "sign-in"): void {
  const fields = ["accessToken", "expiresIn", "refreshToken", "tokenType", "user"];
  expect(Object.keys(data as object).sort()).toEqual(
    answer === "sign-in"
      ? ["accessToken", "deviceToken", "expiresIn", "offerPasskey", "refreshToken", "tokenType", "user"]
      : fields,
  );
  if (answer === "sign-in") expect(typeof (data as TokenSet).offerPasskey).toBe("boolean");
  if (answer === "sign-in") expect((data as TokenSet).deviceToken).toMatch(/^[A-Za-z0-9_-]{22}\.[0-9]+\.[A-Za-z0-9_-]{22}$/);
  const tokens = data as TokenSet;
  expect(tokens.tokenType).toBe("Bearer");
  expect(tokens.expiresIn).toBe(900);
  expect(tokens.accessToken.split(".")).toHaveLength(3);
  expect(tokens.refreshToken.length).toBeGreaterThanOrEqual(43);
  expect(tokens.user).toEqual(shownUser(user, totpEnabled));
}

function countCodes(results: CallResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const result of results) counts[result.body?.code] = (counts[result.body?.code] ?? 0) + 1;
  return counts;
}

const times = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, i) => make(i)));

const publicKey = `${base}/public-key`;
const minutes = (count: number) => count * 60_000;
const tooLargeMessage = "The request body is too large";
/** The contract's body limits: 64 KiB, 1 MiB for the WebAuthn finish routes. */
const defaultLimit = 64 * 1024;
const finishLimit = 1024 * 1024;

/** The header a finish step carries, with the id its begin step returned. */
const ceremonyHeader = (ceremonyId: string) => ({ "X-WebAuthn-Ceremony": ceremonyId });

/** A JSON object body of exactly `bytes` bytes: `{"pad":"aaa…"}`, serialised again to the same bytes. */
function paddedBody(bytes: number): string {
  const head = '{"pad":"';
  const tail = '"}';
  return `${head}${"a".repeat(bytes - head.length - tail.length)}${tail}`;
}

/** The public-key routes of the route table other than `config`, with `:id` filled in. */
const passkeyRoutes = routes
  .filter((route) => route.path.startsWith("/auth/public-key/") && route.path !== "/auth/public-key/config")
  .map((route) => ({ method: route.method, path: route.path.replace(":id", "AAAA"), access: route.access }));

/** The `amr` claim of an access token. */
const amrOf = (accessToken: string): unknown =>
  JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString()).amr;

/** register/begin over HTTP (answer checked): the ceremony id and creation options. */
async function beginRegistration(
  server: RunningServer,
  token: string,
  body: Record<string, unknown> = { label: "Laptop" },
): Promise<CeremonyStart<PublicKeyCredentialCreationOptionsJSON>> {
  const result = await post(server, `${publicKey}/register/begin`, body, { token });
  expectEnvelope(result, 0);
  expect(Object.keys(result.body.data).sort()).toEqual(["ceremonyId", "options"]);
  return result.body.data;
}

/** register/begin and register/finish over HTTP: what finish answered. Ends the user's other sessions (SE-2). */
async function registerPasskey(
  server: RunningServer,
  token: string,
  authenticator: SoftwareAuthenticator,
  body: Record<string, unknown> = { label: "Laptop" },
): Promise<PasskeyInfo> {
  const { ceremonyId, options } = await beginRegistration(server, token, body);
  const finished = await post(server, `${publicKey}/register/finish`, authenticator.register(options), {
    token,
    headers: ceremonyHeader(ceremonyId),
  });
  expectEnvelope(finished, 0);
  return finished.body.data;
}

/** login/begin over HTTP (answer checked), discoverable with `{}`. */
async function beginPasskeyLogin(
  server: RunningServer,
  body: Record<string, unknown> = {},
): Promise<CeremonyStart<PublicKeyCredentialRequestOptionsJSON>> {
  const result = await post(server, `${publicKey}/login/begin`, body);
  expectEnvelope(result, 0);
  expect(Object.keys(result.body.data).sort()).toEqual(["ceremonyId", "options"]);
  return result.body.data;
}

/** login/finish over HTTP with the ceremony header. */
const finishPasskeyLogin = (server: RunningServer, ceremonyId: string, assertion: unknown, options: CallOptions = {}) =>
  post(server, `${publicKey}/login/finish`, assertion, {
    ...options,
    headers: { ...ceremonyHeader(ceremonyId), ...options.headers },
  });

/** A passkey sign-in over HTTP, discoverable unless `username` is given: the token set. */
async function passkeySignIn(server: RunningServer, authenticator: SoftwareAuthenticator, username?: string): Promise<TokenSet> {
  const { ceremonyId, options } = await beginPasskeyLogin(server, username === undefined ? {} : { username });
  const result = await finishPasskeyLogin(server, ceremonyId, authenticator.authenticate(options));
  expectEnvelope(result, 0);
  return result.body.data;
}

/** GET public-key/credentials (answer checked). */
async function listPasskeys(server: RunningServer, token: string): Promise<PasskeyInfo[]> {
  const result = await call(server, "GET", `${publicKey}/credentials`, { token });
  expectEnvelope(result, 0);
  return result.body.data;
}

const credential = (server: RunningServer, method: "PUT" | "DELETE", id: string, options: CallOptions = {}) =>
  call(server, method, `${publicKey}/credentials/${id}`, options);

/**
 * The HTTP contract (`contract.md`, `security.md`) as one suite that every adapter runs, each
 * on a real HTTP server on a loopback address, with real `fetch` and raw sockets.
 */
export function describeContract(name: string, start: StartServer, options: ContractOptions = {}): void {
  const bodyParsedEarlier = options.bodyParsedEarlier === true;

  describe(name, () => {
    describe("sign-in, second factor and sessions", () => {
      const context = useServer(start);
      let alice: TestUser;
      let admin: TestUser;
      let victor: TestUser;
      let enid: TestUser;
      let tina: TotpTestUser;

      beforeAll(async () => {
        const { auth } = context.testAuth;
        [alice, admin, victor, enid, tina] = await Promise.all([
          createTestUser(auth, "alice"),
          createTestUser(auth, "admin", ["admin"]),
          createTestUser(auth, "victor"),
          createTestUser(auth, "enid"),
          createTotpUser(auth, "tina"),
        ]);
      });

      it("login answers the contract's token set, and /auth/me the signed-in user", async () => {
        const result = await login(context.server, "alice");
        expectEnvelope(result, 0);
        expect(result.body.message).toBe("OK");
        expectTokenSet(result.body.data, alice, false);
        const me = await call(context.server, "GET", `${base}/me`, { token: result.body.data.accessToken });
        expectEnvelope(me, 0);
        expect(me.body.data).toEqual(shownUser(alice));
      });

      it("EN-1: a wrong password and an unknown user get the same answer", async () => {
        const [wrong, unknown] = await Promise.all([
          login(context.server, "alice", "not the password"),
          login(context.server, "nobody"),
        ]);
        expectEnvelope(wrong, 40100);
        expect(unknown.text).toBe(wrong.text);
      });

      it("TMP-1: a TOTP user's password login answers 40102 with a temporary token only, no tokens, no cookie", async () => {
        const result = await login(context.server, "tina");
        expectEnvelope(result, 40102);
        expect(result.status).toBe(200);
        expect(Object.keys(result.body.data)).toEqual(["tempToken"]);
        expect(result.text).not.toMatch(/accessToken|refreshToken/);
        expect(result.headers.get("set-cookie")).toBeNull();
      });

      it("2fa/verify completes the login with the TOTP code", async () => {
        const tempToken = await startSecondFactor(context.server, tina);
        const wrong = await post(context.server, `${base}/2fa/verify`, { tempToken, code: "000000" });
        expectEnvelope(wrong, 40103);
        const result = await post(context.server, `${base}/2fa/verify`, {
          tempToken,
          code: await nextTotpCode(context.testAuth, tina.secret),
        });
        expectEnvelope(result, 0);
        expectTokenSet(result.body.data, tina, true);
        expect(JSON.parse(Buffer.from(result.body.data.accessToken.split(".")[1], "base64url").toString()).amr).toEqual([
          "pwd",
          "otp",
          "mfa",
        ]);
      });

      it("RC-3: 2fa/recovery completes the login, and the same recovery code fails the second time with 40103", async () => {
        const code = tina.recoveryCodes[0] as string;
        const first = await post(context.server, `${base}/2fa/recovery`, {
          tempToken: await startSecondFactor(context.server, tina),
          recoveryCode: code,
        });
        expectEnvelope(first, 0);
        expectTokenSet(first.body.data, tina, true);
        const again = await post(context.server, `${base}/2fa/recovery`, {
          tempToken: await startSecondFactor(context.server, tina),
          recoveryCode: code,
        });
        expectEnvelope(again, 40103);
      });

      it("TMP-2: an access token is refused as a temporary token (40100), a temporary token as a bearer token (40101)", async () => {
        const tokens = await signIn(context.server, alice);
        const asTemp = await post(context.server, `${base}/2fa/verify`, {
          tempToken: tokens.accessToken,
          code: await totpCodeAt(context.testAuth.auth, tina.secret),
        });
        expectEnvelope(asTemp, 40100);
        const tempToken = await startSecondFactor(context.server, tina);
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: tempToken }), 40101);
        expectEnvelope(await call(context.server, "GET", "/api/v1/things", { token: tempToken }), 40101);
      });

      it("RT-2: refresh rotates the token; a spent one presented again is 40101 and revokes the newest too", async () => {
        const first = await signIn(context.server, alice);
        const rotated = await post(context.server, `${base}/refresh`, { refreshToken: first.refreshToken });
        expectEnvelope(rotated, 0);
        expectTokenSet(rotated.body.data, alice, false, "refresh");
        expect(rotated.body.data.refreshToken).not.toBe(first.refreshToken);
        expectEnvelope(await post(context.server, `${base}/refresh`, { refreshToken: first.refreshToken }), 40101);
        expectEnvelope(await post(context.server, `${base}/refresh`, { refreshToken: rotated.body.data.refreshToken }), 40101);
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: rotated.body.data.accessToken }), 40101);
      });

      it("RT-4: after logout the refresh token and the session's access token are refused", async () => {
        const tokens = await signIn(context.server, alice);
        const result = await post(context.server, `${base}/logout`, { refreshToken: tokens.refreshToken });
        expectEnvelope(result, 0);
        expect(result.body.data).toEqual({});
        expectEnvelope(await post(context.server, `${base}/refresh`, { refreshToken: tokens.refreshToken }), 40101);
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: tokens.accessToken }), 40101);
      });

      it("TV-2: after signOutEverywhere the access and refresh tokens issued before are refused", async () => {
        const tokens = await signIn(context.server, victor);
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: tokens.accessToken }), 0);
        await signOutEverywhere(context.testAuth.auth, { userId: victor.id });
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: tokens.accessToken }), 40101);
        expectEnvelope(await call(context.server, "GET", "/api/v1/things", { token: tokens.accessToken }), 40101);
        expectEnvelope(await post(context.server, `${base}/refresh`, { refreshToken: tokens.refreshToken }), 40101);
      });

      it("TOTP-5, SE-2: setup, enable, a second-factor login, new recovery codes and disable, over HTTP; each change keeps its own session and ends the others", async () => {
        const server = context.server;
        const tokens = await signIn(server, enid);
        const other = await signIn(server, enid);
        expectEnvelope(await post(server, `${base}/2fa/enable`, { code: "123456" }, { token: tokens.accessToken }), 40900);

        const setup = await post(server, `${base}/2fa/setup`, {}, { token: tokens.accessToken });
        expectEnvelope(setup, 0);
        expect(Object.keys(setup.body.data).sort()).toEqual(["otpauthUrl", "secret"]);
        expect(setup.body.data.otpauthUrl).toMatch(/^otpauth:\/\/totp\//);
        const secret = base32Decode(setup.body.data.secret);
        expect(secret).toHaveLength(20);

        expectEnvelope(await post(server, `${base}/2fa/enable`, { code: "000000" }, { token: tokens.accessToken }), 40103);
        const enabled = await post(
          server,
          `${base}/2fa/enable`,
          { code: await nextTotpCode(context.testAuth, secret) },
          { token: tokens.accessToken },
        );
        expectEnvelope(enabled, 0);
        expect(enabled.body.data.enabled).toBe(true);
        expect(enabled.body.data.recoveryCodes).toHaveLength(10);
        // SE-2: enabling ended the other session and kept this one, its refresh token too.
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: other.accessToken }), 40101);
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: other.refreshToken }), 40101);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 0);
        const renewed = await post(server, `${base}/refresh`, { refreshToken: tokens.refreshToken });
        expectEnvelope(renewed, 0);

        const tempToken = await startSecondFactor(server, enid);
        const verified = await post(server, `${base}/2fa/verify`, {
          tempToken,
          code: await nextTotpCode(context.testAuth, secret),
        });
        expectEnvelope(verified, 0);
        const second = verified.body.data as TokenSet;
        expect(second.user.totpEnabled).toBe(true);

        const regenerated = await post(
          server,
          `${base}/2fa/recovery-codes`,
          { code: await nextTotpCode(context.testAuth, secret) },
          { token: second.accessToken },
        );
        expectEnvelope(regenerated, 0);
        expect(regenerated.body.data.recoveryCodes).toHaveLength(10);
        expect(regenerated.body.data.recoveryCodes).not.toContain(enabled.body.data.recoveryCodes[0]);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: renewed.body.data.accessToken }), 40101);

        // STUP-3: once the two-factor sign-in is older than recentSignIn, both are asked again.
        context.testAuth.clock.advance(6 * 60_000);
        expectEnvelope(await post(server, `${base}/2fa/disable`, {}, { token: second.accessToken }), 40001);
        expectEnvelope(
          await post(server, `${base}/2fa/disable`, { password: testPassword }, { token: second.accessToken }),
          40001,
        );
        const both = { password: testPassword, code: await nextTotpCode(context.testAuth, secret) };
        const disabled = await post(server, `${base}/2fa/disable`, both, { token: second.accessToken });
        expectEnvelope(disabled, 0);
        expect(disabled.body.data).toEqual({ disabled: true });
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: second.accessToken }), 0);
        expectTokenSet((await login(server, "enid")).body.data, enid, false);
      });

      it("requireAuth lets a live bearer token through and puts its access context on the request", async () => {
        const tokens = await signIn(context.server, alice);
        const result = await call(context.server, "GET", "/api/v1/things", { token: tokens.accessToken });
        expect(result.status).toBe(200);
        expect(result.body).toEqual({ code: 0, message: "OK", data: { userId: alice.id, roles: ["user"] } });
        expectEnvelope(await call(context.server, "GET", "/api/v1/things"), 40101);
        expectEnvelope(
          await call(context.server, "GET", "/api/v1/things", { headers: { authorization: `Basic ${tokens.accessToken}` } }),
          40101,
        );
      });

      it("requireAuth with roles answers 40300 to a user without the role and lets an admin through", async () => {
        const [user, boss] = await Promise.all([signIn(context.server, alice), signIn(context.server, admin)]);
        expectEnvelope(await call(context.server, "DELETE", "/api/v1/things/7", { token: user.accessToken }), 40300);
        expectEnvelope(await call(context.server, "DELETE", "/api/v1/things/7"), 40101);
        const allowed = await call(context.server, "DELETE", "/api/v1/things/7", { token: boss.accessToken });
        expect(allowed.status).toBe(200);
        expect(allowed.body.data).toEqual({ deleted: "7", userId: admin.id });
      });

      it("the app's own routes under /api/v1 still reach the app, with their bodies untouched", async () => {
        const health = await call(context.server, "GET", "/api/v1/health");
        expect(health.status).toBe(200);
        expect(health.body).toEqual({ app: "health" });
        const echo = await post(context.server, "/api/v1/echo", { hello: "world" });
        expect(echo.body).toEqual({ app: "echo", body: { hello: "world" } });
        for (const path of ["/api/v1/authority", "/api/v1/auth-help", "/api/v2/auth/login", "/auth/login"]) {
          const result = await call(context.server, "GET", path);
          expect(result.status, path).toBe(404);
          expect(result.body, path).toEqual({ app: "not found" });
        }
      });

      it("HTTP-4: success, 40102, a refusal and requireAuth's 40101 all carry no-store and nosniff", async () => {
        const answers = [
          await login(context.server, "alice"),
          await login(context.server, "tina"),
          await login(context.server, "alice", "not the password"),
          await call(context.server, "GET", "/api/v1/things"),
        ];
        expect(answers.map((answer) => answer.body.code)).toEqual([0, 40102, 40100, 40101]);
        for (const answer of answers) {
          expect(answer.headers.get("cache-control")).toBe("no-store");
          expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
        }
      });

      it("an unknown route under /api/v1/auth answers 40400 in the envelope", async () => {
        expectEnvelope(await call(context.server, "GET", `${base}/unknown`), 40400);
        expectEnvelope(await call(context.server, "POST", `${base}/2fa/unknown`, { json: {} }), 40400);
      });

      it("GET /.well-known/jwks.json answers 40400 when tokens are signed with HS256", async () => {
        expectEnvelope(await call(context.server, "GET", "/.well-known/jwks.json"), 40400);
      });

      it("without providers, oauth/providers is an empty list and their routes 40400; without http.openApi, openapi.json is 40400", async () => {
        const providers = await call(context.server, "GET", `${base}/oauth/providers`);
        expectEnvelope(providers, 0);
        expect(providers.body.data).toEqual([]);
        expectEnvelope(await call(context.server, "GET", `${base}/oauth/corp/authorize`), 40400);
        expectEnvelope(await call(context.server, "GET", `${base}/oauth/corp/callback?code=x&state=y`), 40400);
        expectEnvelope(await call(context.server, "GET", `${base}/openapi.json`), 40400);
      });

      it("HTTP-1: a Content-Length smaller than the body is never read past, and never a 500", async () => {
        const body = Buffer.from(`{"refreshToken":"unknown"}${" ".repeat(70 * 1024)}{"refreshToken":"x"}`);
        const result = await postWithContentLength(context.server, `${base}/refresh`, body, 26);
        // Node's HTTP parser treats the extra bytes as a second, invalid request and answers 400 itself.
        expect(result.status).toBe(400);
        const frameworkAnswer = options.frameworkAnswersClientErrors === true && result.body?.code === undefined;
        if (result.body !== undefined && !frameworkAnswer) expect([40002, 40101]).toContain(result.body.code);
      });
    });

    describe("account: the password and the sessions (SE-1 … SE-4)", () => {
      const context = useServer(start);
      const browser = "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0";
      const sessionsOf = async (token: string) => {
        const result = await call(context.server, "GET", `${base}/sessions`, { token, headers: { "user-agent": browser } });
        expectEnvelope(result, 0);
        return result.body.data as Array<Record<string, unknown>>;
      };
      const signInAs = async (user: TestUser, userAgent = browser) => {
        const result = await post(
          context.server,
          `${base}/login`,
          { username: user.username, password: user.password },
          {
            headers: { "user-agent": userAgent },
          },
        );
        expectEnvelope(result, 0);
        return result.body.data as TokenSet;
      };

      it("SE-2, SE-4: POST /auth/password needs the current password, applies the policy, ends the other sessions and keeps this one", async () => {
        const { server, testAuth } = context;
        const pat = await createTestUser(testAuth.auth, "pat");
        const [here, there] = [await signInAs(pat), await signInAs(pat)];
        const change = (json: Record<string, unknown>, token = here.accessToken) =>
          post(server, `${base}/password`, json, { token });
        expectEnvelope(await change({ currentPassword: "not the password", newPassword: "a new long passphrase" }), 40100);
        expectEnvelope(await change({ currentPassword: testPassword }), 40001);
        expectEnvelope(await change({ currentPassword: testPassword, newPassword: { $ne: "" } }), 40002);
        const weak = await change({ currentPassword: testPassword, newPassword: "password1" });
        expectEnvelope(weak, 42200);
        expect(weak.body.message).toMatch(/too common/);
        expectEnvelope(await post(server, `${base}/password`, { currentPassword: testPassword, newPassword: "x" }), 40101);
        const changed = await change({ currentPassword: testPassword, newPassword: "a new long passphrase" });
        expectEnvelope(changed, 0);
        expect(changed.body.data).toEqual({ changed: true, sessionsEnded: 1 });
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: there.accessToken }), 40101);
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: there.refreshToken }), 40101);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: here.accessToken }), 0);
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: here.refreshToken }), 0);
        expectEnvelope(await login(server, "pat"), 40100);
        expectEnvelope(await login(server, "pat", "a new long passphrase"), 0);
      });

      it("SE-4: an account without a local password gets 40900 from POST /auth/password", async () => {
        const { server, testAuth } = context;
        const quinn = await createTestUser(testAuth.auth, "quinn");
        const tokens = await signInAs(quinn);
        await removePassword(testAuth.auth, quinn.id);
        const json = { currentPassword: testPassword, newPassword: "a new long passphrase" };
        expectEnvelope(await post(server, `${base}/password`, json, { token: tokens.accessToken }), 40900);
      });

      it("SE-1: GET /auth/sessions lists the user's live sessions, newest first, this one marked, with the user agent and network; no token", async () => {
        const { server, testAuth } = context;
        const [rosa, sam] = await Promise.all([createTestUser(testAuth.auth, "rosa"), createTestUser(testAuth.auth, "sam")]);
        const older = await signInAs(rosa, "Older\tAgent/1.0");
        testAuth.clock.advance(1000);
        const newer = await signInAs(rosa);
        await signInAs(sam);
        const listed = await sessionsOf(older.accessToken);
        expect(listed.map((session) => [session.current, session.userAgent])).toEqual([
          [false, browser],
          [true, "OlderAgent/1.0"],
        ]);
        expect(listed[0]).toEqual({
          id: expect.any(String),
          current: false,
          createdAt: testAuth.clock.now,
          lastUsedAt: testAuth.clock.now,
          expiresAt: testAuth.clock.now + 30 * 24 * 3600 * 1000,
          amr: ["pwd"],
          userAgent: browser,
          address: expect.stringMatching(/^(127\.0\.0\.0\/24|0:0:0::\/48)$/),
          impersonatedBy: null,
        });
        const text = JSON.stringify(listed);
        for (const token of [older.accessToken, older.refreshToken, newer.accessToken, newer.refreshToken]) {
          expect(text).not.toContain(token);
        }
        expectEnvelope(await call(server, "GET", `${base}/sessions`), 40101);
      });

      it("SE-1, SE-3: DELETE /auth/sessions/:id ends one of the user's sessions at once; another user's or an unknown id is the same 40400", async () => {
        const { server, testAuth } = context;
        const [tess, uma] = await Promise.all([createTestUser(testAuth.auth, "tess"), createTestUser(testAuth.auth, "uma")]);
        const here = await signInAs(tess);
        const there = await signInAs(tess);
        const stranger = await signInAs(uma);
        const [strangerSession] = await sessionsOf(stranger.accessToken);
        const thereId = (await sessionsOf(there.accessToken)).find((session) => session.current)?.id as string;
        const end = (id: string, options: CallOptions = {}) =>
          call(server, "DELETE", `${base}/sessions/${id}`, { token: here.accessToken, ...options });
        const notFound = await end(strangerSession?.id as string);
        expectEnvelope(notFound, 40400);
        expect((await end("no-such-session")).text).toBe(notFound.text);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: stranger.accessToken }), 0);

        testAuth.clock.advance(minutes(6));
        expectEnvelope(await end(thereId), 40001);
        expectEnvelope(await end(thereId, { json: { password: "not the password" } }), 40100);
        const ended = await end(thereId, { json: { password: testPassword } });
        expectEnvelope(ended, 0);
        expect(ended.body.data).toEqual({ ended: true });
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: there.refreshToken }), 40101);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: there.accessToken }), 40101);
        expectEnvelope(await end(thereId, { json: { password: testPassword } }), 40400);
        expect((await sessionsOf(here.accessToken)).map((session) => session.current)).toEqual([true]);
      });

      it("SE-2: POST /auth/sessions/end-others keeps this session; DELETE /auth/sessions signs out everywhere, this one included", async () => {
        const { server, testAuth } = context;
        const vera = await createTestUser(testAuth.auth, "vera");
        const here = await signInAs(vera);
        const others = [await signInAs(vera), await signInAs(vera)];
        const endOthers = await post(server, `${base}/sessions/end-others`, {}, { token: here.accessToken });
        expectEnvelope(endOthers, 0);
        expect(endOthers.body.data).toEqual({ ended: 2 });
        for (const other of others) {
          expectEnvelope(await call(server, "GET", `${base}/me`, { token: other.accessToken }), 40101);
          expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: other.refreshToken }), 40101);
        }
        const renewed = await post(server, `${base}/refresh`, { refreshToken: here.refreshToken });
        expectEnvelope(renewed, 0);
        const token = renewed.body.data.accessToken as string;
        const another = await signInAs(vera);
        const everywhere = await call(server, "DELETE", `${base}/sessions`, { token });
        expectEnvelope(everywhere, 0);
        expect(everywhere.body.data).toEqual({ ended: 2 });
        for (const tokens of [renewed.body.data as TokenSet, another]) {
          expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 40101);
          expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: tokens.refreshToken }), 40101);
        }
      });
    });

    describe("the OpenAPI document (http.openApi)", () => {
      const context = useServer(start, { http: { openApi: true } });

      it("GET /auth/openapi.json answers the document of this configuration itself, cacheable for five minutes", async () => {
        const result = await call(context.server, "GET", `${base}/openapi.json`);
        expect(result.status).toBe(200);
        expect(result.headers.get("content-type")).toMatch(/^application\/json/);
        expect(result.headers.get("x-content-type-options")).toBe("nosniff");
        expect(result.headers.get("cache-control")).toBe("public, max-age=300");
        expect(result.body).toEqual(openApiDocument(context.testAuth.auth));
        expect(Object.keys(result.body.paths)).toContain(`${base}/openapi.json`);
      });
    });

    describe("EdDSA signing keys", () => {
      const { privateKey } = generateKeyPairSync("ed25519");
      const context = useServer(start, {
        secrets: {
          signing: { alg: "EdDSA", privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString() },
          encryption: "11".repeat(32),
        },
      });

      it("AT-1: /.well-known/jwks.json publishes the public key that verifies the access token", async () => {
        const user = await createTestUser(context.testAuth.auth, "edna");
        const tokens = await signIn(context.server, user);
        const result = await call(context.server, "GET", "/.well-known/jwks.json");
        expect(result.status).toBe(200);
        expect(result.headers.get("content-type")).toMatch(/^application\/json/);
        expect(result.headers.get("x-content-type-options")).toBe("nosniff");
        expect(result.headers.get("cache-control")).toBe("public, max-age=300");
        expect(result.body.keys).toHaveLength(1);
        expect(result.body.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
        expect(result.body.keys[0]).not.toHaveProperty("d");
        const { payload, protectedHeader } = await jwtVerify(tokens.accessToken, createLocalJWKSet(result.body), {
          issuer: testIssuer,
          audience: testAudience,
          typ: "at+jwt",
          currentDate: new Date(context.testAuth.clock.now),
        });
        expect(protectedHeader.alg).toBe("EdDSA");
        expect(payload.sub).toBe(user.id);
        expectEnvelope(await call(context.server, "GET", `${base}/me`, { token: tokens.accessToken }), 0);
      });
    });

    describe("passkeys (public-key routes)", () => {
      const context = useServer(start);

      it("public-key/config answers {enabled: true} when passkeys are configured", async () => {
        const result = await call(context.server, "GET", `${publicKey}/config`);
        expectEnvelope(result, 0);
        expect(result.body.data).toEqual({ enabled: true });
      });

      it("WA-6, SE-2: register with the password, list, a discoverable passkey sign-in, /auth/me, rename and revoke, over HTTP", async () => {
        const { server, testAuth } = context;
        const alice = await createTestUser(testAuth.auth, "alice");
        const authenticator = makeTestAuthenticator();
        const first = await signIn(server, alice);
        testAuth.clock.advance(minutes(6));
        // The sign-in is no longer recent: register/begin asks for the password.
        const withoutProof = await post(server, `${publicKey}/register/begin`, { label: "Laptop" }, { token: first.accessToken });
        expectEnvelope(withoutProof, 40001);
        const wrongPassword = { label: "Laptop", password: "not the password" };
        expectEnvelope(await post(server, `${publicKey}/register/begin`, wrongPassword, { token: first.accessToken }), 40100);
        const begun = await beginRegistration(server, first.accessToken, { label: "Laptop", password: testPassword });
        expect(begun.options).toMatchObject({ rp: { id: testRpId, name: "Example" }, user: { name: "alice" } });
        expect(begun.options.excludeCredentials).toEqual([]);
        expect(Buffer.from(begun.options.challenge, "base64url")).toHaveLength(32);

        const response = authenticator.register(begun.options);
        const finishRegistration = (token: string) =>
          post(server, `${publicKey}/register/finish`, response, { token, headers: ceremonyHeader(begun.ceremonyId) });
        const registered = await finishRegistration(first.accessToken);
        expectEnvelope(registered, 0);
        expect(registered.body.data).toEqual({
          id: response.id,
          label: "Laptop",
          transports: ["internal"],
          createdAt: testAuth.clock.now,
          lastUsedAt: null,
          backupEligible: false,
          backupState: false,
        });
        // SE-2: registering kept the session it was made from, access and refresh tokens alike.
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: first.accessToken }), 0);
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: first.refreshToken }), 0);

        const second = await signIn(server, alice);
        // WA-1: the ceremony was spent; the same finish again is 40100.
        expectEnvelope(await finishRegistration(second.accessToken), 40100);
        expect(await listPasskeys(server, second.accessToken)).toEqual([registered.body.data]);

        const login = await beginPasskeyLogin(server);
        expect(login.options).toMatchObject({ rpId: testRpId, userVerification: "required" });
        expect(login.options.allowCredentials ?? []).toEqual([]);
        const assertion = authenticator.authenticate(login.options);
        const signedIn = await finishPasskeyLogin(server, login.ceremonyId, assertion);
        expectEnvelope(signedIn, 0);
        expect(signedIn.body.message).toBe("OK");
        expectTokenSet(signedIn.body.data, alice, false);
        expect(amrOf(signedIn.body.data.accessToken)).toEqual(["hwk", "user", "mfa"]);
        const token = signedIn.body.data.accessToken as string;
        const me = await call(server, "GET", `${base}/me`, { token });
        expectEnvelope(me, 0);
        expect(me.body.data).toEqual(shownUser(alice));
        // WA-1: a replayed finish is 40100.
        expectEnvelope(await finishPasskeyLogin(server, login.ceremonyId, assertion), 40100);
        expect(await listPasskeys(server, token)).toEqual([{ ...registered.body.data, lastUsedAt: testAuth.clock.now }]);

        const renamed = await credential(server, "PUT", response.id, { token, json: { label: "  Work laptop " } });
        expectEnvelope(renamed, 0);
        expect(renamed.body.data).toEqual({ renamed: true });
        expect((await listPasskeys(server, token)).map((passkey) => passkey.label)).toEqual(["Work laptop"]);

        const revoked = await credential(server, "DELETE", response.id, { token });
        expectEnvelope(revoked, 0);
        expect(revoked.body.data).toEqual({ revoked: true });
        // SE-2: revoking kept the session it was made from and ended the others.
        expectEnvelope(await call(server, "GET", `${base}/me`, { token }), 0);
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: second.accessToken }), 40101);
        const third = await signIn(server, alice);
        expect(await listPasskeys(server, third.accessToken)).toEqual([]);
        expectEnvelope(await credential(server, "DELETE", response.id, { token: third.accessToken }), 40400);
        const afterRevoke = await beginPasskeyLogin(server);
        expectEnvelope(
          await finishPasskeyLogin(server, afterRevoke.ceremonyId, authenticator.authenticate(afterRevoke.options)),
          40100,
        );
      });

      it("WA-6: right after a sign-in register/begin needs no password; login/begin with a username lists that account's passkeys (EN-4)", async () => {
        const { server, testAuth } = context;
        const bob = await createTestUser(testAuth.auth, "bob");
        const authenticator = makeTestAuthenticator();
        const tokens = await signIn(server, bob);
        const passkey = await registerPasskey(server, tokens.accessToken, authenticator, { label: "Phone" });
        expect(passkey.label).toBe("Phone");

        const login = await beginPasskeyLogin(server, { username: "bob" });
        expect(login.options.allowCredentials?.map((listed) => listed.id)).toEqual([passkey.id]);
        const result = await finishPasskeyLogin(server, login.ceremonyId, authenticator.authenticate(login.options));
        expectEnvelope(result, 0);
        expectTokenSet(result.body.data, bob, false);

        const nobody = await beginPasskeyLogin(server, { username: "nobody" });
        expect(Object.keys(nobody.options).sort()).toEqual(Object.keys(login.options).sort());
        // EN-4: a name that is nobody's lists credential ids shaped like bob's: decoys, the same each time.
        expect(nobody.options.allowCredentials?.length).toBeGreaterThanOrEqual(1);
        expect(nobody.options.allowCredentials?.[0]).toEqual({
          id: expect.stringMatching(/^[A-Za-z0-9_-]{22,43}$/),
          type: "public-key",
          transports: expect.any(Array),
        });
        expect((await beginPasskeyLogin(server, { username: "nobody" })).options.allowCredentials).toEqual(
          nobody.options.allowCredentials,
        );

        // A second registration excludes the passkeys the account has.
        const again = await beginRegistration(server, result.body.data.accessToken, { label: "Key" });
        expect(again.options.excludeCredentials?.map((listed) => listed.id)).toEqual([passkey.id]);
      });

      it("WA-1: login/finish without the ceremony header is 40002, with an unknown one 40100; a ceremony finishes once, and only its own kind (ST-2)", async () => {
        const { server, testAuth } = context;
        const carol = await createTestUser(testAuth.auth, "carol");
        const authenticator = makeTestAuthenticator();
        await registerPasskey(server, (await signIn(server, carol)).accessToken, authenticator);
        const fresh = await signIn(server, carol);

        const { ceremonyId, options } = await beginPasskeyLogin(server);
        const assertion = authenticator.authenticate(options);
        const withoutHeader = await post(server, `${publicKey}/login/finish`, assertion);
        expectEnvelope(withoutHeader, 40002);
        expect(withoutHeader.body.message).toBe("The X-WebAuthn-Ceremony header is required");
        expectEnvelope(await finishPasskeyLogin(server, "", assertion), 40002);
        expectEnvelope(await finishPasskeyLogin(server, "an-unknown-ceremony", assertion), 40100);
        expectEnvelope(await finishPasskeyLogin(server, `${ceremonyId}x`, assertion), 40100);
        // A sign-in ceremony is not found by register/finish.
        const asRegistration = await post(server, `${publicKey}/register/finish`, assertion, {
          token: fresh.accessToken,
          headers: ceremonyHeader(ceremonyId),
        });
        expectEnvelope(asRegistration, 40100);
        // None of that reached the ceremony: it finishes now, and once only.
        const signedIn = await finishPasskeyLogin(server, ceremonyId, assertion);
        expectEnvelope(signedIn, 0);
        expectTokenSet(signedIn.body.data, carol, false);
        expectEnvelope(await finishPasskeyLogin(server, ceremonyId, assertion), 40100);

        // A registration ceremony is not found by login/finish, and still registers afterwards.
        const registration = await beginRegistration(server, fresh.accessToken, { label: "Spare" });
        const next = await beginPasskeyLogin(server);
        expectEnvelope(
          await finishPasskeyLogin(server, registration.ceremonyId, authenticator.authenticate(next.options)),
          40100,
        );
        const registered = await post(
          server,
          `${publicKey}/register/finish`,
          makeTestAuthenticator().register(registration.options),
          {
            token: fresh.accessToken,
            headers: ceremonyHeader(registration.ceremonyId),
          },
        );
        expectEnvelope(registered, 0);
        expect(registered.body.data.label).toBe("Spare");
      });

      it("WA-1: login/finish with the header still spends nothing before the body is read; then once only", async () => {
        const { server, testAuth } = context;
        const dora = await createTestUser(testAuth.auth, "dora");
        const authenticator = makeTestAuthenticator();
        await registerPasskey(server, (await signIn(server, dora)).accessToken, authenticator);
        const { ceremonyId, options } = await beginPasskeyLogin(server);
        const assertion = authenticator.authenticate(options);
        // Refused by the body reader: the ceremony was not reached.
        const notJson = await call(server, "POST", `${publicKey}/login/finish`, {
          body: "{",
          headers: { ...ceremonyHeader(ceremonyId), "content-type": "application/json" },
        });
        expectEnvelope(notJson, 40002);
        expectEnvelope(await finishPasskeyLogin(server, ceremonyId, [assertion]), 40002);
        const signedIn = await finishPasskeyLogin(server, ceremonyId, assertion);
        expectEnvelope(signedIn, 0);
        expectTokenSet(signedIn.body.data, dora, false);
      });

      it("WA-1/HTTP-5: malformed assertions are 40002 and spend the ceremony", async () => {
        const { server, testAuth } = context;
        const emma = await createTestUser(testAuth.auth, "emma");
        const authenticator = makeTestAuthenticator();
        await registerPasskey(server, (await signIn(server, emma)).accessToken, authenticator);
        type Assertion = ReturnType<SoftwareAuthenticator["authenticate"]>;
        const without = (assertion: Assertion, field: string) => {
          const copy: Record<string, unknown> = { ...assertion };
          delete copy[field];
          return copy;
        };
        const withResponse = (assertion: Assertion, changes: Record<string, unknown>) => ({
          ...assertion,
          response: { ...assertion.response, ...changes },
        });
        const malformed: [string, (assertion: Assertion) => unknown][] = [
          ["an empty object", () => ({})],
          ["no id", (a) => without(a, "id")],
          ["no rawId", (a) => without(a, "rawId")],
          ["no type", (a) => without(a, "type")],
          ["no response", (a) => without(a, "response")],
          ["no signature", (a) => ({ ...a, response: { ...a.response, signature: undefined } })],
          ["no clientDataJSON", (a) => ({ ...a, response: { ...a.response, clientDataJSON: undefined } })],
          ["no authenticatorData", (a) => ({ ...a, response: { ...a.response, authenticatorData: undefined } })],
          ["type password", (a) => ({ ...a, type: "password" })],
          ["id as a number", (a) => ({ ...a, id: 42 })],
          ["id as an object", (a) => ({ ...a, id: { $ne: "" } })],
          ["rawId other than id", (a) => ({ ...a, rawId: `${a.id}A` })],
          ["an id outside base64url", (a) => ({ ...a, id: "a+b/c=", rawId: "a+b/c=" })],
          ["response as a string", (a) => ({ ...a, response: "signed" })],
          ["response as an array", (a) => ({ ...a, response: [a.response] })],
          ["signature as a number", (a) => withResponse(a, { signature: 1 })],
          ["clientDataJSON as an object", (a) => withResponse(a, { clientDataJSON: { type: "webauthn.get" } })],
          ["authenticatorData outside base64url", (a) => withResponse(a, { authenticatorData: "not base64!" })],
          ["userHandle as a number", (a) => withResponse(a, { userHandle: 7 })],
        ];
        for (const [what, make] of malformed) {
          const { ceremonyId, options } = await beginPasskeyLogin(server);
          const assertion = authenticator.authenticate(options);
          const result = await finishPasskeyLogin(server, ceremonyId, make(assertion));
          expectEnvelope(result, 40002);
          expect(result.body.message, what).toBe("The assertion is malformed");
          expectEnvelope(await finishPasskeyLogin(server, ceremonyId, assertion), 40100);
        }
        for (const body of ["[]", '"assertion"', "42", "null"]) {
          const { ceremonyId } = await beginPasskeyLogin(server);
          const result = await call(server, "POST", `${publicKey}/login/finish`, {
            body,
            headers: { ...ceremonyHeader(ceremonyId), "content-type": "application/json" },
          });
          // (express.json() refuses a top-level string or number as not JSON; core, as not an object.)
          expectEnvelope(result, 40002);
        }
      });

      it("register/finish: no ceremony header 40002, a malformed attestation 40002, another user's ceremony 40100", async () => {
        const { server, testAuth } = context;
        const [fay, gus] = await Promise.all([createTestUser(testAuth.auth, "fay"), createTestUser(testAuth.auth, "gus")]);
        const [fayTokens, gusTokens] = [await signIn(server, fay), await signIn(server, gus)];
        const authenticator = makeTestAuthenticator();
        const finish = (token: string, body: unknown, headers: Record<string, string>) =>
          post(server, `${publicKey}/register/finish`, body, { token, headers });

        const begun = await beginRegistration(server, fayTokens.accessToken);
        const response = authenticator.register(begun.options);
        const withoutHeader = await finish(fayTokens.accessToken, response, {});
        expectEnvelope(withoutHeader, 40002);
        expect(withoutHeader.body.message).toBe("The X-WebAuthn-Ceremony header is required");
        expectEnvelope(await finish(fayTokens.accessToken, response, ceremonyHeader("an-unknown-ceremony")), 40100);
        expectEnvelope(
          await post(server, `${publicKey}/register/finish`, response, { headers: ceremonyHeader(begun.ceremonyId) }),
          40101,
        );
        // ST-2: Gus cannot finish Fay's ceremony, and trying spends it.
        expectEnvelope(await finish(gusTokens.accessToken, response, ceremonyHeader(begun.ceremonyId)), 40100);
        expectEnvelope(await finish(fayTokens.accessToken, response, ceremonyHeader(begun.ceremonyId)), 40100);

        const next = await beginRegistration(server, fayTokens.accessToken);
        const { attestationObject: _, ...withoutAttestation } = authenticator.register(next.options).response;
        const malformed = await finish(
          fayTokens.accessToken,
          { ...response, response: withoutAttestation },
          ceremonyHeader(next.ceremonyId),
        );
        expectEnvelope(malformed, 40002);
        expect(malformed.body.message).toBe("The attestation is malformed");
        expect(await listPasskeys(server, fayTokens.accessToken)).toEqual([]);
        expect(await listPasskeys(server, gusTokens.accessToken)).toEqual([]);
      });

      it("AT-6: every bearer public-key route without a token, or with a garbage one, is 40101", async () => {
        const bearerRoutes = passkeyRoutes.filter((route) => route.access === "bearer");
        expect(bearerRoutes.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
          "DELETE /auth/public-key/credentials/AAAA",
          "GET /auth/public-key/credentials",
          "POST /auth/public-key/offer/decline",
          "POST /auth/public-key/register/begin",
          "POST /auth/public-key/register/finish",
          "PUT /auth/public-key/credentials/AAAA",
        ]);
        for (const route of bearerRoutes) {
          const authorizations: Record<string, string>[] = [
            {},
            { authorization: "Bearer abc.def.ghi" },
            { authorization: "Basic YWxpY2U6eA==" },
          ];
          for (const headers of authorizations) {
            const body = route.method === "POST" || route.method === "PUT" ? { json: { label: "Laptop" } } : {};
            const result = await call(context.server, route.method, `/api/v1${route.path}`, { ...body, headers });
            expectEnvelope(result, 40101);
          }
        }
      });

      it("HTTP-1: finish bodies are read up to 1 MiB; begin, rename and the rest stop at 64 KiB", async () => {
        const { server, testAuth } = context;
        const hal = await createTestUser(testAuth.auth, "hal");
        const { accessToken: token } = await signIn(server, hal);
        const parserLimit = options.bodyParserLimit ?? Number.POSITIVE_INFINITY;
        // Each on its own connection: see "HTTP-1: after a body refused as too large …" in contract.test.ts.
        const send = (path: string, body: string, extra: CallOptions = {}) =>
          call(server, "POST", `${publicKey}${path}`, {
            ...extra,
            body,
            headers: {
              "content-type": "application/json",
              connection: "close",
              ...ceremonyHeader("an-unknown-ceremony"),
              ...extra.headers,
            },
          });
        const expectTooLarge = (result: CallResult) => {
          expectEnvelope(result, 40002);
          expect(result.body.message).toBe(tooLargeMessage);
        };
        const read = 90 * 1024;
        expect(read).toBeLessThan(Math.min(parserLimit, finishLimit));
        // Over 64 KiB and read: the unknown ceremony is what refuses it.
        expectEnvelope(await send("/login/finish", paddedBody(read)), 40100);
        expectEnvelope(await send("/register/finish", paddedBody(read), { token }), 40100);
        expectTooLarge(await send("/login/begin", paddedBody(read)));
        expectTooLarge(await send("/register/begin", paddedBody(read), { token }));
        const putHeaders = { "content-type": "application/json", connection: "close" };
        expectTooLarge(await credential(server, "PUT", "AAAA", { token, body: paddedBody(read), headers: putHeaders }));
        // The limits themselves.
        expectEnvelope(await send("/login/begin", paddedBody(defaultLimit)), 0);
        expectTooLarge(await send("/login/begin", paddedBody(defaultLimit + 1)));
        const atLimit = await send("/login/finish", paddedBody(finishLimit));
        if (finishLimit <= parserLimit) expectEnvelope(atLimit, 40100);
        else expectTooLarge(atLimit);
        expectTooLarge(await send("/login/finish", paddedBody(finishLimit + 1)));
        expectTooLarge(await send("/register/finish", paddedBody(finishLimit + 1), { token }));
      });

      it("rename: a bad label is 42200, a missing one 40001, a label of the wrong type 40002; unknown or foreign ids are 40400 (ST-2)", async () => {
        const { server, testAuth } = context;
        const [ida, jon] = await Promise.all([createTestUser(testAuth.auth, "ida"), createTestUser(testAuth.auth, "jon")]);
        const idaKey = await registerPasskey(server, (await signIn(server, ida)).accessToken, makeTestAuthenticator());
        const jonKey = await registerPasskey(server, (await signIn(server, jon)).accessToken, makeTestAuthenticator());
        const [idaToken, jonToken] = [(await signIn(server, ida)).accessToken, (await signIn(server, jon)).accessToken];
        const rename = (id: string, json: unknown, token = idaToken) => credential(server, "PUT", id, { token, json });

        for (const label of ["   ", "x".repeat(65), "\u{1F511}".repeat(65), "bell\u0007", "line\nbreak"]) {
          const result = await rename(idaKey.id, { label });
          expect(result.body.code, JSON.stringify(label)).toBe(42200);
          expectEnvelope(result, 42200);
        }
        expectEnvelope(await rename(idaKey.id, {}), 40001);
        expectEnvelope(await rename(idaKey.id, { label: "" }), 40001);
        expectEnvelope(await rename(idaKey.id, { label: 42 }), 40002);
        expectEnvelope(await rename(idaKey.id, { label: ["Laptop"] }), 40002);
        expectEnvelope(await rename(idaKey.id, [{ label: "Laptop" }]), 40002);
        const longest = await rename(idaKey.id, { label: "\u{1F511}".repeat(64) });
        expectEnvelope(longest, 0);

        const unknownId = Buffer.alloc(32, 7).toString("base64url");
        for (const id of [unknownId, jonKey.id, "not.a.credential.id", "%2E%2E"]) {
          expectEnvelope(await rename(id, { label: "Mine now" }), 40400);
          expectEnvelope(await credential(server, "DELETE", id, { token: idaToken }), 40400);
        }
        expectEnvelope(await call(server, "DELETE", `${publicKey}/credentials`, { token: idaToken }), 40400);
        expectEnvelope(await call(server, "POST", `${publicKey}/credentials/${idaKey.id}`, { token: idaToken, json: {} }), 40400);
        expectEnvelope(await call(server, "GET", `${publicKey}/credentials/${idaKey.id}/label`, { token: idaToken }), 40400);
        // Nothing changed for either: Ida's label is the last good one, Jon's passkey is still his; no session ended.
        expect((await listPasskeys(server, idaToken)).map((passkey) => passkey.label)).toEqual(["\u{1F511}".repeat(64)]);
        expect(await listPasskeys(server, jonToken)).toEqual([jonKey]);
      });

      it("the last way to sign in: revoking the only passkey of an account without a password is 40900", async () => {
        const { server, testAuth } = context;
        const pia = await createTestUser(testAuth.auth, "pia");
        const authenticator = makeTestAuthenticator();
        const first = await registerPasskey(server, (await signIn(server, pia)).accessToken, authenticator, { label: "First" });
        await removePassword(testAuth.auth, pia.id);
        expectEnvelope(await login(server, "pia"), 40100);

        const tokens = await passkeySignIn(server, authenticator);
        expectTokenSet(tokens, pia, false);
        const refused = await credential(server, "DELETE", first.id, { token: tokens.accessToken });
        expectEnvelope(refused, 40900);
        // Refused, nothing happened: the token still works and the passkey is still there.
        expect(await listPasskeys(server, tokens.accessToken)).toEqual([{ ...first, lastUsedAt: testAuth.clock.now }]);

        // With a second passkey (the passkey sign-in is recent: no password needed), one can go.
        const securityKey = makeTestAuthenticator({ transports: ["usb"], attachment: "cross-platform" });
        const second = await registerPasskey(server, tokens.accessToken, securityKey, { label: "Second" });
        expect(second.transports).toEqual(["usb"]);
        const afterRegistering = await passkeySignIn(server, authenticator, "pia");
        const revoked = await credential(server, "DELETE", first.id, { token: afterRegistering.accessToken });
        expectEnvelope(revoked, 0);
        expect(revoked.body.data).toEqual({ revoked: true });
        const last = await passkeySignIn(server, securityKey, "pia");
        expectEnvelope(await credential(server, "DELETE", second.id, { token: last.accessToken }), 40900);
        expect((await listPasskeys(server, last.accessToken)).map((passkey) => passkey.id)).toEqual([second.id]);
      });

      it("WA-1/ST-1: 20 concurrent login/finish with one ceremony and one assertion give one token pair", async () => {
        const { server, testAuth } = context;
        const kim = await createTestUser(testAuth.auth, "kim");
        const authenticator = makeTestAuthenticator();
        await registerPasskey(server, (await signIn(server, kim)).accessToken, authenticator);
        const { ceremonyId, options } = await beginPasskeyLogin(server, { username: "kim" });
        const assertion = authenticator.authenticate(options);
        const results = await times(20, () => finishPasskeyLogin(server, ceremonyId, assertion));
        expect(countCodes(results)).toEqual({ 0: 1, 40100: 19 });
      });
    });

    describe('passkeys with userVerification "preferred"', () => {
      const context = useServer(start, { passkeys: { ...testPasskeys, userVerification: "preferred" } });

      it("a passkey sign-in without user verification asks a TOTP user for the code (40102), then 2fa/verify completes it", async () => {
        const { server, testAuth } = context;
        const tom = await createTotpUser(testAuth.auth, "tom");
        const authenticator = makeTestAuthenticator();
        const tempToken = await startSecondFactor(server, tom);
        const verified = await post(server, `${base}/2fa/verify`, { tempToken, code: await nextTotpCode(testAuth, tom.secret) });
        expectEnvelope(verified, 0);
        await registerPasskey(server, verified.body.data.accessToken, authenticator);

        const { ceremonyId, options } = await beginPasskeyLogin(server);
        const touched = await finishPasskeyLogin(
          server,
          ceremonyId,
          authenticator.authenticate(options, { flags: { uv: false } }),
        );
        expectEnvelope(touched, 40102);
        expect(Object.keys(touched.body.data)).toEqual(["tempToken"]);
        expect(touched.text).not.toMatch(/accessToken|refreshToken/);
        const completed = await post(server, `${base}/2fa/verify`, {
          tempToken: touched.body.data.tempToken,
          code: await nextTotpCode(testAuth, tom.secret),
        });
        expectEnvelope(completed, 0);
        expectTokenSet(completed.body.data, tom, true);
        expect(amrOf(completed.body.data.accessToken)).toEqual(["hwk", "otp", "mfa"]);

        // With user verification the passkey is the whole sign-in.
        const tokens = await passkeySignIn(server, authenticator);
        expectTokenSet(tokens, tom, true);
        expect(amrOf(tokens.accessToken)).toEqual(["hwk", "user", "mfa"]);
      });
    });

    describe("passkeys not configured", () => {
      const context = useServer(start, { passkeys: undefined });

      it("public-key/config answers {enabled: false}; every other public-key route is 40400, the bearer ones without a token too", async () => {
        const { server, testAuth } = context;
        const config = await call(server, "GET", `${publicKey}/config`);
        expectEnvelope(config, 0);
        expect(config.body.data).toEqual({ enabled: false });
        expect(passkeyRoutes).toHaveLength(10);
        const { accessToken } = await signIn(server, await createTestUser(testAuth.auth, "nils"));
        for (const route of passkeyRoutes) {
          for (const token of [undefined, accessToken]) {
            const sent: CallOptions = { token, headers: ceremonyHeader("an-unknown-ceremony") };
            if (route.method === "POST" || route.method === "PUT") sent.body = "{";
            if (sent.body !== undefined) sent.headers = { ...sent.headers, "content-type": "application/json" };
            const result = await call(server, route.method, `/api/v1${route.path}`, sent);
            expectEnvelope(result, 40400);
          }
        }
      });
    });

    describe("throttling", () => {
      describe("per account", () => {
        const context = useServer(start, { throttle: { account: [{ limit: 5, window: "15m" }], ip: generous.ip } });

        it("RL-1: the 6th wrong password for one account is 42900 with Retry-After, the right one too, until the window passes", async () => {
          const rita = await createTestUser(context.testAuth.auth, "rita");
          for (let attempt = 1; attempt <= 5; attempt += 1)
            expectEnvelope(await login(context.server, "rita", "wrong password"), 40100);
          const sixth = await login(context.server, "rita", "wrong password");
          expectEnvelope(sixth, 42900);
          expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(0);
          expectEnvelope(await login(context.server, "rita"), 42900);
          context.testAuth.clock.advance(15 * 60 * 1000);
          expectTokenSet((await login(context.server, "rita")).body.data, rita, false);
        });

        it("RL-4: 50 concurrent wrong logins on a fresh account are evaluated 5 times; the rest get 42900 with Retry-After", async () => {
          await createTestUser(context.testAuth.auth, "rhea");
          const results = await times(50, () => login(context.server, "rhea", "wrong password"));
          expect(countCodes(results)).toEqual({ 40100: 5, 42900: 45 });
          for (const result of results.filter((r) => r.body.code === 42900)) {
            expectEnvelope(result, 42900);
            expect(Number(result.headers.get("retry-after"))).toBeGreaterThan(0);
          }
        });
      });

      describe("per client address, without trusted proxies", () => {
        const context = useServer(start, { throttle: { account: generous.account, ip: [{ limit: 3, window: "15m" }] } });

        it("RL-3: a spoofed X-Forwarded-For is ignored; the socket's address is throttled", async () => {
          const codes: number[] = [];
          for (let index = 1; index <= 4; index += 1) {
            const headers = { "x-forwarded-for": `198.51.100.${index}`, "x-real-ip": `198.51.100.${index}` };
            const result = await post(
              context.server,
              `${base}/login`,
              { username: `ghost${index}`, password: "wrong password" },
              { headers },
            );
            codes.push(result.body.code);
          }
          expect(codes).toEqual([40100, 40100, 40100, 42900]);
        });
      });

      describe("per client address, behind a trusted proxy", () => {
        const context = useServer(start, {
          throttle: { account: generous.account, ip: [{ limit: 2, window: "15m" }] },
          http: { trustedProxies: ["127.0.0.1"] },
        });
        const fromClient = wrongLoginForwardedFor(context);

        it("RL-3: X-Forwarded-For from a trusted proxy names the client", async () => {
          expectEnvelope(await fromClient("198.51.100.1", "ghost1"), 40100);
          expectEnvelope(await fromClient("198.51.100.1", "ghost2"), 40100);
          expectEnvelope(await fromClient("198.51.100.1", "ghost3"), 42900);
          expectEnvelope(await fromClient("198.51.100.2", "ghost4"), 40100);
          // Only the rightmost untrusted hop counts: a client cannot prepend its own.
          expectEnvelope(await fromClient("203.0.113.9, 198.51.100.1", "ghost5"), 42900);
        });
      });

      describe("per IPv6 /64, on an IPv6 loopback server", () => {
        const context = useServer(
          start,
          { throttle: { account: generous.account, ip: [{ limit: 2, window: "15m" }] }, http: { trustedProxies: ["::1"] } },
          "::1",
        );
        const fromClient = wrongLoginForwardedFor(context);

        it("RL-3: clients in one /64 share one bucket; another /64 has its own", async () => {
          expectEnvelope(await fromClient("2001:db8:1:2::1", "ghost1"), 40100);
          expectEnvelope(await fromClient("2001:db8:1:2:ffff::2", "ghost2"), 40100);
          expectEnvelope(await fromClient("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "ghost3"), 42900);
          expectEnvelope(await fromClient("2001:db8:1:3::1", "ghost4"), 40100);
        });
      });
    });

    describe("malformed requests", () => {
      const context = useServer(start);
      const malformedContext = { token: "", userId: "", bodyParsedEarlier };

      beforeAll(async () => {
        const user = await createTestUser(context.testAuth.auth, "mallory");
        const tokens = await signIn(context.server, user);
        malformedContext.token = tokens.accessToken;
        malformedContext.userId = user.id;
      });

      for (const testCase of malformedCases) {
        const override = bodyParsedEarlier ? testCase.whenParsedEarlier : undefined;
        if (override && "notApplicable" in override) continue;
        const code = override?.code ?? testCase.code;
        it(`${testCase.name} → ${code}`, async () => {
          expectEnvelope(await testCase.send(context.server, malformedContext), code);
        });
      }
    });

    describe('statusMode "always-200"', () => {
      const context = useServer(start, {
        http: { statusMode: "always-200" },
        throttle: { account: [{ limit: 1, window: "15m" }], ip: generous.ip },
      });

      it("an error is answered with HTTP 200 and its code in the body", async () => {
        const bad = await call(context.server, "POST", `${base}/login`, {
          body: "{",
          headers: { "content-type": "application/json" },
        });
        expectEnvelope(bad, 40002, { always200: true });
        expectEnvelope(await call(context.server, "GET", "/api/v1/things"), 40101, { always200: true });
        expectEnvelope(await call(context.server, "GET", `${base}/nope`), 40400, { always200: true });
      });

      it("42900 still carries Retry-After", async () => {
        expectEnvelope(await login(context.server, "ghost"), 40100, { always200: true });
        const throttled = await login(context.server, "ghost");
        expectEnvelope(throttled, 42900, { always200: true });
        expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
      });
    });

    describe("concurrency (ST-1)", () => {
      const context = useServer(start);
      let cora: TotpTestUser;
      let ross: TestUser;

      beforeAll(async () => {
        [cora, ross] = await Promise.all([
          createTotpUser(context.testAuth.auth, "cora"),
          createTestUser(context.testAuth.auth, "ross"),
        ]);
      });

      it("TMP-3: 20 concurrent 2fa/verify with one temporary token and the right code give one token pair", async () => {
        const tempToken = await startSecondFactor(context.server, cora);
        const code = await nextTotpCode(context.testAuth, cora.secret);
        const results = await times(20, () => post(context.server, `${base}/2fa/verify`, { tempToken, code }));
        const counts = countCodes(results);
        expect(counts[0]).toBe(1);
        expect((counts[40100] ?? 0) + (counts[40103] ?? 0)).toBe(19);
      });

      it("RC-3: 20 concurrent 2fa/recovery with one recovery code, each with its own temporary token, give one token pair", async () => {
        const tempTokens = await times(20, () => startSecondFactor(context.server, cora));
        const recoveryCode = cora.recoveryCodes[1] as string;
        const results = await Promise.all(
          tempTokens.map((tempToken) => post(context.server, `${base}/2fa/recovery`, { tempToken, recoveryCode })),
        );
        expect(countCodes(results)).toEqual({ 0: 1, 40103: 19 });
      });

      it("TOTP-4: one TOTP code sent with 20 different temporary tokens at once is accepted once", async () => {
        const tempTokens = await times(20, () => startSecondFactor(context.server, cora));
        const code = await nextTotpCode(context.testAuth, cora.secret);
        const results = await Promise.all(
          tempTokens.map((tempToken) => post(context.server, `${base}/2fa/verify`, { tempToken, code })),
        );
        expect(countCodes(results)).toEqual({ 0: 1, 40103: 19 });
      });

      it("RT-3: 20 concurrent refreshes with one refresh token give one token pair", async () => {
        const tokens = await signIn(context.server, ross);
        const results = await times(20, () => post(context.server, `${base}/refresh`, { refreshToken: tokens.refreshToken }));
        expect(countCodes(results)).toEqual({ 0: 1, 40101: 19 });
      });
    });
  });
}
