import { generateKeyPairSync } from "node:crypto";
import { type AuthConfig, type TokenSet, httpStatusFor, signOutEverywhere } from "@portcullis/core";
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
  nextTotpCode,
  testAudience,
  testIssuer,
  testPassword,
  totpCodeAt,
} from "../fixtures/auth.js";
import { type CallResult, call, post, postWithContentLength } from "./client.js";
import { malformedCases } from "./malformed-cases.js";
import type { RunningServer, StartServer } from "./servers.js";

const base = "/api/v1/auth";
const generous = generousThrottle;

/** Options of {@link describeContract}. */
export interface ContractOptions {
  /** The app runs `express.json()` before the routes: core gets `req.body` instead of the stream. */
  bodyParsedEarlier?: boolean;
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
  const allowedKeys = code === 0 || code === 40102 ? ["code", "message", "data"] : ["code", "message"];
  expect(Object.keys(result.body).filter((key) => !allowedKeys.includes(key))).toEqual([]);
  expect(result.text).not.toMatch(/stack|Error:|\.ts:\d|\.js:\d/);
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

function expectTokenSet(data: unknown, user: TestUser, totpEnabled: boolean): void {
  expect(Object.keys(data as object).sort()).toEqual(["accessToken", "expiresIn", "refreshToken", "tokenType", "user"]);
  const tokens = data as TokenSet;
  expect(tokens.tokenType).toBe("Bearer");
  expect(tokens.expiresIn).toBe(900);
  expect(tokens.accessToken.split(".")).toHaveLength(3);
  expect(tokens.refreshToken.length).toBeGreaterThanOrEqual(43);
  expect(tokens.user).toEqual({ id: user.id, username: user.username, roles: user.roles, totpEnabled });
}

function countCodes(results: CallResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const result of results) counts[result.body?.code] = (counts[result.body?.code] ?? 0) + 1;
  return counts;
}

const times = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, i) => make(i)));

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
        expect(me.body.data).toEqual({ id: alice.id, username: "alice", roles: ["user"], totpEnabled: false });
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
          code: nextTotpCode(context.testAuth, tina.secret),
        });
        expectEnvelope(result, 0);
        expectTokenSet(result.body.data, tina, true);
        expect(JSON.parse(Buffer.from(result.body.data.accessToken.split(".")[1], "base64url").toString()).amr).toEqual([
          "pwd",
          "otp",
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
          code: totpCodeAt(context.testAuth.auth, tina.secret),
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
        expectTokenSet(rotated.body.data, alice, false);
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

      it("TOTP-5: setup, enable, a second-factor login, new recovery codes and disable, over HTTP", async () => {
        const server = context.server;
        const tokens = await signIn(server, enid);
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
          { code: nextTotpCode(context.testAuth, secret) },
          { token: tokens.accessToken },
        );
        expectEnvelope(enabled, 0);
        expect(enabled.body.data.enabled).toBe(true);
        expect(enabled.body.data.recoveryCodes).toHaveLength(10);
        // TV-2: enabling raised the token version.
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: tokens.accessToken }), 40101);

        const tempToken = await startSecondFactor(server, enid);
        const verified = await post(server, `${base}/2fa/verify`, { tempToken, code: nextTotpCode(context.testAuth, secret) });
        expectEnvelope(verified, 0);
        const second = verified.body.data as TokenSet;
        expect(second.user.totpEnabled).toBe(true);

        const regenerated = await post(
          server,
          `${base}/2fa/recovery-codes`,
          { code: nextTotpCode(context.testAuth, secret) },
          { token: second.accessToken },
        );
        expectEnvelope(regenerated, 0);
        expect(regenerated.body.data.recoveryCodes).toHaveLength(10);
        expect(regenerated.body.data.recoveryCodes).not.toContain(enabled.body.data.recoveryCodes[0]);

        expectEnvelope(await post(server, `${base}/2fa/disable`, {}, { token: second.accessToken }), 40001);
        const disabled = await post(server, `${base}/2fa/disable`, { password: testPassword }, { token: second.accessToken });
        expectEnvelope(disabled, 0);
        expect(disabled.body.data).toEqual({ disabled: true });
        expectEnvelope(await call(server, "GET", `${base}/me`, { token: second.accessToken }), 40101);
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

      it("HTTP-1: a Content-Length smaller than the body is never read past, and never a 500", async () => {
        const body = Buffer.from(`{"refreshToken":"unknown"}${" ".repeat(70 * 1024)}{"refreshToken":"x"}`);
        const result = await postWithContentLength(context.server, `${base}/refresh`, body, 26);
        // Node's HTTP parser treats the extra bytes as a second, invalid request and answers 400 itself.
        expect(result.status).toBe(400);
        if (result.body !== undefined) expect([40002, 40101]).toContain(result.body.code);
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
        const code = nextTotpCode(context.testAuth, cora.secret);
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
        const code = nextTotpCode(context.testAuth, cora.secret);
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
