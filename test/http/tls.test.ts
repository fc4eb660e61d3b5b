import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { type AuthConfig, type AuthEvent, login } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  type TotpTestUser,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  testPassword,
  totpCodeAt,
} from "../fixtures/auth.js";
import { call, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import {
  type RunningServer,
  type StartServer,
  startExpress4,
  startExpress4ParsingJson,
  startExpress5,
  startExpress5ParsingJson,
  startFastify,
  startFastifyWithJsonParser,
  startHono,
  startHonoReadingJsonFirst,
} from "./servers.js";

const tls = {
  key: readFileSync(new URL("../fixtures/tls/key.pem", import.meta.url), "utf8"),
  cert: readFileSync(new URL("../fixtures/tls/cert.pem", import.meta.url), "utf8"),
};
const tlsRequired =
  "TLS is required. If a proxy terminates TLS in front of this service, list its address in http.trustedProxies so that its X-Forwarded-Proto is believed.";
const base = "/api/v1/auth";

/**
 * This machine's first non-internal IPv4 address. A client that connects to it from this
 * machine arrives from it too: a peer that is not loopback, so not exempt from HTTP-7.
 */
const nonLoopback = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === "IPv4" && !address.internal)?.address;
const skipReason = "this machine has no non-internal IPv4 address, so no test client can arrive from a non-loopback peer";

if (nonLoopback === undefined) {
  if (process.env.CI === "true") {
    it("HTTP-7: the TLS tests need a non-loopback IPv4 address", () => {
      throw new Error(`test/http/tls.test.ts cannot run under CI: ${skipReason}`);
    });
  } else {
    console.warn(`test/http/tls.test.ts skipped: ${skipReason}`);
  }
}

const adapters: [string, StartServer][] = [
  ["Express 5", startExpress5],
  ["Express 4", startExpress4],
  ["Hono on @hono/node-server", startHono],
  ["Express 5 behind express.json()", startExpress5ParsingJson],
  ["Express 4 behind express.json()", startExpress4ParsingJson],
  ["Hono behind a middleware that reads c.req.json()", startHonoReadingJsonFirst],
  ["Fastify, with its trustProxy on", startFastify],
  ["Fastify with the app's own JSON parser", startFastifyWithJsonParser],
];

/** An auth with an EdDSA key, so that the JWKS route has a key set to serve. */
function makeTlsTestAuth(http: AuthConfig["http"] = {}): TestAuth {
  const privateKey = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  return makeTestAuth({
    throttle: generousThrottle,
    http,
    secrets: { signing: { alg: "EdDSA", privateKey }, encryption: "22".repeat(32) },
  });
}

async function accessTokenOf(testAuth: TestAuth, username: string): Promise<string> {
  const result = await login(testAuth.auth, { username, password: testPassword });
  if (result.status !== "authenticated") throw new Error("expected a session");
  return result.tokens.accessToken;
}

describe.runIf(nonLoopback !== undefined).each(adapters)("HTTP-7 on %s", (_name, start) => {
  const host = nonLoopback as string;

  describe("a non-loopback peer, no trusted proxy", () => {
    let testAuth: TestAuth;
    let plain: RunningServer;
    let secure: RunningServer;
    let tina: TotpTestUser;
    const events: AuthEvent[] = [];

    beforeAll(async () => {
      testAuth = makeTlsTestAuth();
      testAuth.auth.events.on("*", (event) => {
        events.push(event);
      });
      [, tina] = await Promise.all([createTestUser(testAuth.auth, "alice"), createTotpUser(testAuth.auth, "tina")]);
      plain = await start(testAuth.auth, { host });
      secure = await start(testAuth.auth, { host, tls });
    });
    afterAll(async () => {
      await Promise.all([plain?.close(), secure?.close()]);
    });

    /** Login, 2fa/verify, /auth/me, a route behind requireAuth, the JWKS and the public-key routes, on one server. */
    async function sendEach(server: RunningServer, tempToken: string, code: string, accessToken: string, headers = {}) {
      const unknownCredential = `${base}/public-key/credentials/${Buffer.alloc(32, 7).toString("base64url")}`;
      return {
        login: await post(server, `${base}/login`, { username: "alice", password: testPassword }, { headers }),
        verify: await post(server, `${base}/2fa/verify`, { tempToken, code }, { headers }),
        me: await call(server, "GET", `${base}/me`, { token: accessToken, headers }),
        things: await call(server, "GET", "/api/v1/things", { token: accessToken, headers }),
        jwks: await call(server, "GET", "/.well-known/jwks.json", { headers }),
        badJson: await call(server, "POST", `${base}/login`, {
          body: "{",
          headers: { ...headers, "content-type": "application/json" },
        }),
        passkeyConfig: await call(server, "GET", `${base}/public-key/config`, { headers }),
        passkeyBegin: await post(server, `${base}/public-key/login/begin`, {}, { headers }),
        passkeyFinish: await post(
          server,
          `${base}/public-key/login/finish`,
          {},
          { headers: { ...headers, "x-webauthn-ceremony": "an-unknown-ceremony" } },
        ),
        registerBegin: await post(
          server,
          `${base}/public-key/register/begin`,
          { label: "Laptop" },
          { token: accessToken, headers },
        ),
        registerFinish: await post(
          server,
          `${base}/public-key/register/finish`,
          {},
          { token: accessToken, headers: { ...headers, "x-webauthn-ceremony": "an-unknown-ceremony" } },
        ),
        credentials: await call(server, "GET", `${base}/public-key/credentials`, { token: accessToken, headers }),
        rename: await call(server, "PUT", unknownCredential, { token: accessToken, json: { label: "Laptop" }, headers }),
        revoke: await call(server, "DELETE", unknownCredential, { token: accessToken, headers }),
      };
    }

    it("HTTP-7: plain HTTP gets 40300 on login, 2fa/verify, /auth/me, requireAuth, the JWKS and the public-key routes, before any credential is read; over TLS the same requests succeed", async () => {
      const accessToken = await accessTokenOf(testAuth, "alice");
      const pending = await login(testAuth.auth, { username: "tina", password: testPassword });
      if (pending.status !== "totp_required") throw new Error("expected a second-factor step");
      const code = await totpCodeAt(testAuth.auth, tina.secret);
      events.length = 0;

      for (const headers of [{}, { "x-forwarded-proto": "https" }]) {
        const refused = await sendEach(plain, pending.tempToken, code, accessToken, headers);
        for (const [route, result] of Object.entries(refused)) {
          expectEnvelope(result, 40300);
          expect(result.body.message, route).toBe(tlsRequired);
        }
      }
      // Nothing was read: no sign-in was attempted, and the temporary token and the code are unspent.
      expect(events).toEqual([]);

      const served = await sendEach(secure, pending.tempToken, code, accessToken);
      expectEnvelope(served.login, 0);
      // The test client really is a non-loopback peer.
      expect(events.find((event) => event.type === "login.succeeded")).toMatchObject({ ip: host });
      expectEnvelope(served.verify, 0);
      expectEnvelope(served.me, 0);
      expect(served.things.status).toBe(200);
      expect(served.things.body.data.roles).toEqual(["user"]);
      expect(served.jwks.status).toBe(200);
      expect(served.jwks.body.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519" });
      expectEnvelope(served.badJson, 40002);
      expectEnvelope(served.passkeyConfig, 0);
      expect(served.passkeyConfig.body.data).toEqual({ enabled: true });
      expectEnvelope(served.passkeyBegin, 0);
      expect(Object.keys(served.passkeyBegin.body.data).sort()).toEqual(["ceremonyId", "options"]);
      expectEnvelope(served.passkeyFinish, 40100);
      expectEnvelope(served.registerBegin, 0);
      expectEnvelope(served.registerFinish, 40100);
      expectEnvelope(served.credentials, 0);
      expect(served.credentials.body.data).toEqual([]);
      expectEnvelope(served.rename, 40400);
      expectEnvelope(served.revoke, 40400);
    });
  });

  describe("plain HTTP through a trusted proxy on loopback", () => {
    let testAuth: TestAuth;
    let server: RunningServer;

    beforeAll(async () => {
      testAuth = makeTlsTestAuth({ trustedProxies: ["127.0.0.1"] });
      await createTestUser(testAuth.auth, "alice");
      server = await start(testAuth.auth);
    });
    afterAll(async () => {
      await server?.close();
    });

    it("HTTP-7: the proxy's X-Forwarded-Proto decides: 40300 without it, through with https, 40300 with https, http", async () => {
      const accessToken = await accessTokenOf(testAuth, "alice");
      const forwarded = (proto?: string) => ({
        "x-forwarded-for": "203.0.113.9",
        ...(proto === undefined ? {} : { "x-forwarded-proto": proto }),
      });
      const send = async (headers: Record<string, string>) => [
        await post(server, `${base}/login`, { username: "alice", password: testPassword }, { headers }),
        await call(server, "GET", "/api/v1/things", { token: accessToken, headers }),
        await post(server, `${base}/public-key/login/begin`, {}, { headers }),
      ];
      for (const proto of [undefined, "https, http", "http"]) {
        for (const result of await send(forwarded(proto))) {
          expectEnvelope(result, 40300);
          expect(result.body.message).toBe(tlsRequired);
        }
      }
      const [signedIn, things, passkeyBegin] = await send(forwarded("https"));
      expectEnvelope(signedIn!, 0);
      expect(things!.status).toBe(200);
      expectEnvelope(passkeyBegin!, 0);
      // Without X-Forwarded-For the client is the proxy itself, on loopback: exempt.
      expectEnvelope(await post(server, `${base}/login`, { username: "alice", password: testPassword }), 0);
    });
  });

  describe("http.unsafeAllowPlainHttp", () => {
    let testAuth: TestAuth;
    let server: RunningServer;

    beforeAll(async () => {
      testAuth = makeTlsTestAuth({ unsafeAllowPlainHttp: true });
      await createTestUser(testAuth.auth, "alice");
      server = await start(testAuth.auth, { host });
    });
    afterAll(async () => {
      await server?.close();
    });

    it("HTTP-7: unsafeAllowPlainHttp: true lets plain HTTP from a non-loopback peer through", async () => {
      const signedIn = await post(server, `${base}/login`, { username: "alice", password: testPassword });
      expectEnvelope(signedIn, 0);
      const things = await call(server, "GET", "/api/v1/things", { token: signedIn.body.data.accessToken });
      expect(things.status).toBe(200);
    });
  });
});
