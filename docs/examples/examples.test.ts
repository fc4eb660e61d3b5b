// Runs the examples of the documentation, so that what the docs show keeps working.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type Auth, createUser, login, memoryStorage, verifyAccessToken } from "@portcullis/core";
import { authRouter } from "@portcullis/express";
import express from "express";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../../test/http/client.js";
import { accountRoutes } from "./account-routes.js";
import { createAuthWithEdDSA, verifyWithJwks } from "./asymmetric-keys.js";
import { alertOnRefreshTokenReuse, countFailures, subscribeAuditLog } from "./events.js";
import { createApp as createExpressApp } from "./express-quick-start.js";
import { createApp as createFastifyApp } from "./fastify-quick-start.js";
import { serveOnNode } from "./hono-node-server.js";
import { createApp as createHonoApp } from "./hono-quick-start.js";

interface Envelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever data a route returns
  data?: any;
}

const randomText = (bytes = 32) => randomBytes(bytes).toString("base64url");
const saved = { signing: process.env.AUTH_SIGNING_SECRET, encryption: process.env.AUTH_ENCRYPTION_KEY };
const servers: Array<{ close(callback: () => void): unknown }> = [];

beforeAll(() => {
  process.env.AUTH_SIGNING_SECRET = randomText();
  process.env.AUTH_ENCRYPTION_KEY = randomText();
});

afterAll(() => {
  for (const [name, value] of [
    ["AUTH_SIGNING_SECRET", saved.signing],
    ["AUTH_ENCRYPTION_KEY", saved.encryption],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

/** The Express quick start on PGlite in memory (as its own data directory would be, without the files), closed after the test. */
async function expressQuickStart() {
  const quickStart = await createExpressApp("memory://");
  servers.push({ close: (callback) => void quickStart.storage.close().then(callback) });
  return quickStart;
}

async function listenExpress(app: express.Express): Promise<string> {
  const server: Server = app.listen(0, "127.0.0.1");
  servers.push(server);
  await new Promise<void>((resolve) => server.once("listening", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listenHono(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  const port = await new Promise<number>((resolve) => {
    const server = serve({ fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(info.port));
    servers.push(server);
  });
  return `http://127.0.0.1:${port}`;
}

async function call(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Envelope & Record<string, unknown>) : undefined };
}

/** Creates a user and signs in over HTTP; returns the user id and access token. */
async function signIn(auth: Auth, base: string, username: string, roles: string[] = []) {
  const password = randomText(18);
  const user = await createUser(auth, { username, password, roles });
  const answer = await call(base, "POST", "/api/v1/auth/login", { username, password });
  expect(answer.body?.code).toBe(0);
  return {
    userId: user.id,
    password,
    accessToken: answer.body?.data.accessToken as string,
    refreshToken: answer.body?.data.refreshToken as string,
  };
}

/** The checks both quick starts must pass. */
async function walkQuickStart(auth: Auth, base: string) {
  const alice = await signIn(auth, base, "alice", ["admin"]);
  const bob = await signIn(auth, base, "bob");

  const things = await call(base, "GET", "/api/v1/things", undefined, alice.accessToken);
  expect(things.status).toBe(200);
  expect(things.body).toEqual({ owner: alice.userId });

  const anonymous = await call(base, "GET", "/api/v1/things");
  expect(anonymous.status).toBe(401);
  expect(anonymous.body?.code).toBe(40101);

  const me = await call(base, "GET", "/api/v1/auth/me", undefined, bob.accessToken);
  expect(me.body?.data).toMatchObject({ username: "bob", totpEnabled: false });

  expect((await call(base, "DELETE", "/api/v1/things/1", undefined, bob.accessToken)).body?.code).toBe(40300);
  expect((await call(base, "DELETE", "/api/v1/things/1", undefined, alice.accessToken)).status).toBe(204);
}

describe("docs/examples", () => {
  it("the Express quick start, on PGlite, signs in and protects its routes", async () => {
    const { app, auth } = await expressQuickStart();
    await walkQuickStart(auth, await listenExpress(app));
  });

  it("the Hono quick start signs in and protects its routes", async () => {
    const { app, auth } = createHonoApp();
    await walkQuickStart(auth, await listenHono(app.fetch));
  });

  it("the Fastify quick start signs in and protects its routes", async () => {
    const { app, auth } = await createFastifyApp();
    await app.listen({ port: 0, host: "127.0.0.1" });
    servers.push({ close: (callback) => app.close().then(callback) });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await walkQuickStart(auth, base);
    // HTTP-5: a path Fastify's router cannot decode, answered by Portcullis through frameworkErrors.
    expect(await call(base, "GET", "/api/v1/auth/%ff")).toEqual({ status: 404, body: { code: 40400, message: "No such route" } });
  });

  it("HTTP-5: the Hono quick start served on Node answers on its paths the targets @hono/node-server refuses", async () => {
    const quickStart = createHonoApp();
    const server = serveOnNode(quickStart);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const running = { baseUrl: `http://127.0.0.1:${port}`, host: "127.0.0.1", port, close: async () => {} };
    await walkQuickStart(quickStart.auth, running.baseUrl);
    const backslash = await rawRequest(running, "POST", "/api/v1/auth\\login", "{");
    expect({ status: backslash.status, body: backslash.body }).toEqual({
      status: 400,
      body: { code: 40002, message: "The request body is not valid JSON" },
    });
    const absolute = await rawRequest(running, "GET", "HTTPS://HOST.EXAMPLE/api/v1/auth/me");
    expect({ status: absolute.status, code: absolute.body?.code }).toEqual({ status: 401, code: 40101 });
    // The app's own paths keep the server's answer.
    const elsewhere = await rawRequest(running, "GET", "/api/v1/things\\x");
    expect({ status: elsewhere.status, text: elsewhere.text }).toEqual({ status: 400, text: "" });
  });

  it("the account routes change a password and let an administrator disable a user", async () => {
    const { app, auth } = await expressQuickStart();
    app.use(accountRoutes(auth));
    const base = await listenExpress(app);
    const carol = await signIn(auth, base, "carol");
    const elsewhere = await call(base, "POST", "/api/v1/auth/login", { username: "carol", password: carol.password }).then(
      (result) => result.body?.data as { accessToken: string; refreshToken: string },
    );
    const admin = await signIn(auth, base, "root", ["admin"]);

    const newPassword = randomText(18);
    const wrong = await call(
      base,
      "POST",
      "/api/v1/account/password",
      { currentPassword: "not it at all", newPassword },
      carol.accessToken,
    );
    expect(wrong.body?.code).toBe(40100);
    const changed = await call(
      base,
      "POST",
      "/api/v1/account/password",
      { currentPassword: carol.password, newPassword },
      carol.accessToken,
    );
    expect(changed.body).toMatchObject({ code: 0, data: { changed: true, sessionsEnded: 1 } });
    // SE-2: the session the change was made from goes on; carol's other session ended.
    expect((await call(base, "GET", "/api/v1/auth/me", undefined, carol.accessToken)).body?.code).toBe(0);
    expect((await call(base, "GET", "/api/v1/auth/me", undefined, elsewhere.accessToken)).body?.code).toBe(40101);
    expect((await call(base, "POST", "/api/v1/auth/refresh", { refreshToken: elsewhere.refreshToken })).body?.code).toBe(40101);
    const again = await call(base, "POST", "/api/v1/auth/login", { username: "carol", password: newPassword });
    expect(again.body?.code).toBe(0);

    const denied = await call(base, "POST", `/api/v1/admin/users/${admin.userId}/disable`, {}, again.body?.data.accessToken);
    expect(denied.status).toBe(403);
    expect(denied.body?.code).toBe(40300);
    const disabled = await call(base, "POST", `/api/v1/admin/users/${carol.userId}/disable`, {}, admin.accessToken);
    expect(disabled.body).toMatchObject({ code: 0, data: { disabled: true } });
    expect((await call(base, "POST", "/api/v1/auth/login", { username: "carol", password: newPassword })).body?.code).toBe(40300);

    const roles = await call(
      base,
      "PUT",
      `/api/v1/admin/users/${admin.userId}/roles`,
      { roles: ["admin", "auditor"] },
      admin.accessToken,
    );
    expect(roles.body?.data.roles).toEqual(["admin", "auditor"]);
  });

  it("the event examples see sign-ins and refresh-token reuse, and never a secret", async () => {
    const { app, auth } = await expressQuickStart();
    const lines: string[] = [];
    const reused: string[] = [];
    subscribeAuditLog(auth, (line) => lines.push(line));
    alertOnRefreshTokenReuse(auth, (_userId, sessionId) => reused.push(sessionId));
    const counts = countFailures(auth);
    const base = await listenExpress(app);

    const dave = await signIn(auth, base, "dave");
    expect((await call(base, "POST", "/api/v1/auth/login", { username: "dave", password: "wrong password" })).body?.code).toBe(
      40100,
    );
    expect((await call(base, "POST", "/api/v1/auth/refresh", { refreshToken: dave.refreshToken })).body?.code).toBe(0);
    expect((await call(base, "POST", "/api/v1/auth/refresh", { refreshToken: dave.refreshToken })).body?.code).toBe(40101);

    expect(counts.failures).toBe(1);
    expect(reused).toHaveLength(1);
    const types = lines.map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).toEqual(
      expect.arrayContaining([
        "user.created",
        "login.succeeded",
        "login.failed",
        "token.refreshed",
        "refresh_token.reused",
        "session.revoked",
      ]),
    );
    const log = lines.join("\n");
    for (const secret of [dave.password, "wrong password", dave.refreshToken, dave.accessToken])
      expect(log).not.toContain(secret);
  });

  it("EdDSA keys are published as a JWK Set that jose verifies, and survive a rotation", async () => {
    const pem = () => {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      return {
        privateKey: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        publicKey: publicKey.export({ type: "spki", format: "pem" }).toString(),
      };
    };
    const first = pem();
    const second = pem();
    const storage = memoryStorage();
    const before = createAuthWithEdDSA(storage, { privateKey: first.privateKey });
    const password = randomText(18);
    await createUser(before, { username: "erin", password });
    const signedIn = await login(before, { username: "erin", password });
    if (signedIn.status !== "authenticated") throw new Error("expected tokens");
    const oldToken = signedIn.tokens.accessToken;

    const after = createAuthWithEdDSA(storage, { privateKey: second.privateKey, previousPublicKeys: [first.publicKey] });
    const app = express();
    app.use(authRouter(after));
    const base = await listenExpress(app);

    const jwks = await fetch(`${base}/.well-known/jwks.json`);
    expect(jwks.headers.get("cache-control")).toBe("public, max-age=300");
    const keySet = (await jwks.json()) as { keys: Array<{ kid: string; alg: string }> };
    expect(keySet.keys).toHaveLength(2);
    expect(keySet.keys.every((key) => key.alg === "EdDSA")).toBe(true);

    // A token signed before the rotation still verifies, here and elsewhere.
    expect((await verifyAccessToken(after, { token: oldToken })).userId).toBe(signedIn.tokens.user.id);
    expect((await verifyWithJwks(oldToken, new URL(`${base}/.well-known/jwks.json`))).sub).toBe(signedIn.tokens.user.id);
    const fresh = await call(base, "POST", "/api/v1/auth/login", { username: "erin", password });
    expect((await verifyWithJwks(fresh.body?.data.accessToken, new URL(`${base}/.well-known/jwks.json`))).sub).toBe(
      signedIn.tokens.user.id,
    );
  });

  it("README.md, getting-started.md, client.md, flows/oauth.md, compatibility.md, flows/directory.md, adapters/fastify.md, adapters/hono.md and testing-kit.md show the examples exactly as they are in docs/examples", () => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
    const shown = {
      "../../README.md": ["express-quick-start.ts", "hono-quick-start.ts", "start-express.ts", "client-quick-start.ts"],
      "../getting-started.md": ["express-quick-start.ts", "start-express.ts"],
      "../client.md": ["client-quick-start.ts"],
      "../flows/oauth.md": ["oauth-providers.ts"],
      "../compatibility.md": ["original-client.ts"],
      "../flows/directory.md": ["directory-policies.ts"],
      "../adapters/fastify.md": ["fastify-quick-start.ts"],
      "../adapters/hono.md": ["hono-node-server.ts"],
      "../testing-kit.md": [
        "testing-passkeys.test.ts",
        "testing-oauth.test.ts",
        "testing-totp.test.ts",
        "storage-conformance.test.ts",
      ],
    };
    for (const [page, files] of Object.entries(shown)) {
      for (const file of files) expect(read(page)).toContain(`\`\`\`ts\n${read(`./${file}`)}\`\`\``);
    }
  });
});
