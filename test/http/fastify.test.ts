import { generateKeyPairSync } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { AuthEvent } from "@portcullis/core";
import { frameworkErrorHandler, portcullis, requireAuth } from "@portcullis/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { call, post, rawRequest } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { type RunningServer, startExpress5, startFastify, startFastifyUnderPrefix } from "./servers.js";

const running: { close(): Promise<unknown> }[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** Listens on loopback with a ready Fastify app. */
async function serve(app: FastifyInstance): Promise<RunningServer> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  running.push(app);
  const { port } = app.server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, host: "127.0.0.1", port, close: async () => {} };
}

const badJson = { body: '{"username":', headers: { "content-type": "application/json" } };

describe("@portcullis/fastify", () => {
  it("inside an encapsulated plugin and under a prefix: the routes at <basePath>/auth, the app's routes keep Fastify's parser", async () => {
    const testAuth = makeTestAuth({ throttle: generousThrottle });
    const user = await createTestUser(testAuth.auth, "prefixed");
    const server = await startFastifyUnderPrefix(testAuth.auth);
    running.push(server);
    const signedIn = await post(server, "/api/v1/auth/login", { username: user.username, password: testPassword });
    expectEnvelope(signedIn, 0);
    const me = await call(server, "GET", "/api/v1/auth/me", { token: signedIn.body.data.accessToken });
    expectEnvelope(me, 0);
    expect(me.body.data.username).toBe("prefixed");
    expectEnvelope(await call(server, "POST", "/api/v1/auth/login", badJson), 40002);
    expectEnvelope(
      await call(server, "POST", "/api/v1/auth/login", { body: "{}", headers: { "content-type": "text/plain" } }),
      40002,
    );
    expectEnvelope(await call(server, "GET", "/api/v1/auth/nope"), 40400);
    const refused = await call(server, "POST", "/api/v1/auth/login", {
      body: JSON.stringify({ username: "a".repeat(70 * 1024) }),
      headers: { "content-type": "application/json" },
    });
    expectEnvelope(refused, 40002);
    expect(refused.body.message).toBe("The request body is too large");
    const things = await call(server, "GET", "/api/v1/things", { token: signedIn.body.data.accessToken });
    expect(things.body.data.userId).toBe(user.id);
    expect((await post(server, "/api/v1/echo", { hello: "world" })).body).toEqual({ app: "echo", body: { hello: "world" } });
  });

  it("SE-6: inside an encapsulated plugin and under a prefix, with http.passwordChangeAlias, PUT <basePath>/users/me/password is the plugin's route; without it, the app's 404", async () => {
    for (const passwordChangeAlias of [true, false]) {
      const testAuth = makeTestAuth({ throttle: generousThrottle, http: { passwordChangeAlias } });
      const user = await createTestUser(testAuth.auth, "alias");
      const server = await startFastifyUnderPrefix(testAuth.auth);
      running.push(server);
      const signedIn = await post(server, "/api/v1/auth/login", { username: user.username, password: testPassword });
      const change = await call(server, "PUT", "/api/v1/users/me/password", {
        json: { oldPassword: testPassword, newPassword: "a brand new passphrase" },
        token: signedIn.body.data.accessToken,
      });
      if (passwordChangeAlias) expectEnvelope(change, 0);
      else expect({ status: change.status, body: change.body }).toEqual({ status: 404, body: { app: "not found" } });
    }
  });

  it("SE-6: the alias's body reaches core unread, whatever the app's body limit, as on the plugin's other routes", async () => {
    const testAuth = makeTestAuth({ throttle: generousThrottle, http: { passwordChangeAlias: true } });
    const user = await createTestUser(testAuth.auth, "unread");
    const app = Fastify({ bodyLimit: 16 });
    await app.register(portcullis, { auth: testAuth.auth });
    const server = await serve(app);
    const signedIn = await post(server, "/api/v1/auth/login", { username: user.username, password: testPassword });
    const change = await call(server, "PUT", "/api/v1/users/me/password", {
      json: { oldPassword: "not the password", newPassword: "a brand new passphrase" },
      token: signedIn.body.data.accessToken,
    });
    expectEnvelope(change, 40100);
  });

  it("the app's own JSON parser and body limit apply to its routes, never to the plugin's", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const app = Fastify({ bodyLimit: 16 });
    await app.register(portcullis, { auth });
    app.post("/api/v1/echo", async (request) => ({ app: "echo", body: request.body }));
    const server = await serve(app);
    // Over the app's 16 bytes, under core's 64 KiB: core reads it and answers.
    expectEnvelope(await post(server, "/api/v1/auth/login", { username: "someone", password: "wrong password" }), 40100);
    expect((await post(server, "/api/v1/echo", { hello: "world, longer than sixteen bytes" })).status).toBe(413);
  });

  it("a prefix that is not a leading part of http.basePath is refused at registration, saying what to set", async () => {
    const { auth } = makeTestAuth();
    const app = Fastify();
    app.register(portcullis, { auth, prefix: "/identity" });
    await expect(app.ready()).rejects.toThrow(
      'portcullis is registered under the prefix "/identity", and http.basePath is "/api/v1": its routes are at "<http.basePath>/auth/…" as the client sees them. Set http.basePath to "/identity" (or one that starts with it), or register the plugin without a prefix.',
    );
    await app.close().catch(() => undefined);
  });

  it("with an asymmetric signing key, a prefix is refused: /.well-known/jwks.json is at the root", async () => {
    const privateKey = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const { auth } = makeTestAuth({ secrets: { signing: { alg: "EdDSA", privateKey }, encryption: "22".repeat(32) } });
    const prefixed = Fastify();
    prefixed.register(portcullis, { auth, prefix: "/api" });
    await expect(prefixed.ready()).rejects.toThrow('so it cannot serve "/.well-known/jwks.json", which is at the root');
    await prefixed.close().catch(() => undefined);
    const atRoot = Fastify();
    await atRoot.register(portcullis, { auth });
    const server = await serve(atRoot);
    const jwks = await call(server, "GET", "/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
  });

  it("registered without the auth instance, or as app.register(portcullis, auth), it throws saying what to write", async () => {
    for (const options of [{}, makeTestAuth().auth]) {
      const app = Fastify();
      app.register(portcullis, options as never);
      await expect(app.ready()).rejects.toThrow(
        /^portcullis needs the auth instance createAuth\(\) returns, and got .*\. Write app\.register\(portcullis, \{ auth \}\)$/,
      );
      await app.close().catch(() => undefined);
    }
    expect(() => requireAuth(undefined as never)).toThrow(TypeError);
  });

  it("RL-3: the client address is the socket's even with Fastify's trustProxy on, or what getPeerAddress returns", async () => {
    const events: AuthEvent[] = [];
    const { auth } = makeTestAuth({ throttle: generousThrottle, http: { basePath: "/proxied/api/v1" } });
    const other = makeTestAuth({ throttle: generousThrottle });
    for (const each of [other.auth, auth]) {
      each.events.on("login.failed", (event) => {
        events.push(event);
      });
    }
    const app = Fastify({ trustProxy: true });
    await app.register(portcullis, { auth: other.auth });
    // A loopback address, so that plain HTTP is allowed (HTTP-7), other than the socket's.
    await app.register(portcullis, { auth, getPeerAddress: () => "127.0.0.7", prefix: "/proxied" });
    app.get("/ip", async (request) => ({ ip: request.ip }));
    const server = await serve(app);
    const credentials = {
      json: { username: "nobody", password: "wrong password" },
      headers: { "x-forwarded-for": "203.0.113.1" },
    };
    expect((await call(server, "GET", "/ip", { headers: credentials.headers })).body).toEqual({ ip: "203.0.113.1" });
    expectEnvelope(await call(server, "POST", "/api/v1/auth/login", credentials), 40100);
    expectEnvelope(await call(server, "POST", "/proxied/api/v1/auth/login", credentials), 40100);
    expect(events.map((event) => (event as { ip?: string }).ip)).toEqual(["127.0.0.1", "127.0.0.7"]);
  });

  it("requireAuth as a preHandler: request.auth set, the envelope on refusal, roles checked", async () => {
    const testAuth = makeTestAuth({ throttle: generousThrottle });
    const user = await createTestUser(testAuth.auth, "plain");
    const app = Fastify();
    await app.register(portcullis, { auth: testAuth.auth });
    app.get("/mine", { preHandler: requireAuth(testAuth.auth) }, async (request) => ({ userId: request.auth?.userId }));
    app.get("/admin", { preHandler: requireAuth(testAuth.auth, { roles: ["admin"] }) }, async () => ({ reached: true }));
    const server = await serve(app);
    const token = (await post(server, "/api/v1/auth/login", { username: user.username, password: testPassword })).body.data
      .accessToken as string;
    expect((await call(server, "GET", "/mine", { token })).body).toEqual({ userId: user.id });
    expectEnvelope(await call(server, "GET", "/mine"), 40101);
    expectEnvelope(await call(server, "GET", "/mine", { token: "abc.def.ghi" }), 40101);
    expectEnvelope(await call(server, "GET", "/admin", { token }), 40300);
  });

  it("requireAuth called as its type says, with the request and reply only, returns the check's promise", async () => {
    const testAuth = makeTestAuth({ throttle: generousThrottle });
    const user = await createTestUser(testAuth.auth, "direct");
    const check = requireAuth(testAuth.auth);
    const app = Fastify();
    await app.register(portcullis, { auth: testAuth.auth });
    app.get("/direct", async function (request, reply) {
      const checked = check.call(this, request, reply);
      expect(checked).toBeInstanceOf(Promise);
      await checked;
      return reply.sent ? reply : { userId: request.auth?.userId };
    });
    const server = await serve(app);
    const token = (await post(server, "/api/v1/auth/login", { username: user.username, password: testPassword })).body.data
      .accessToken as string;
    expect((await call(server, "GET", "/direct", { token })).body).toEqual({ userId: user.id });
    expectEnvelope(await call(server, "GET", "/direct"), 40101);
  });

  it("HTTP-5: a getPeerAddress that throws gets the 50000 envelope from requireAuth, as a preHandler or called directly", async () => {
    const reported: unknown[] = [];
    const testAuth = makeTestAuth({ throttle: generousThrottle, onInternalError: (error) => reported.push(error) });
    const failing = requireAuth(testAuth.auth, {
      getPeerAddress: () => {
        throw new Error("no address here");
      },
    });
    const app = Fastify();
    await app.register(portcullis, { auth: testAuth.auth });
    app.get("/hook", { preHandler: failing }, async () => ({ reached: true }));
    app.get("/direct", async function (request, reply) {
      await failing.call(this, request, reply);
      return reply.sent ? reply : { reached: true };
    });
    const server = await serve(app);
    for (const path of ["/hook", "/direct"]) {
      const answer = await call(server, "GET", path, { token: "abc.def.ghi" });
      expectEnvelope(answer, 50000);
      expect(JSON.stringify(answer.body)).not.toContain("no address here");
    }
    expect(reported.map((error) => (error as Error).message)).toEqual(["no address here", "no address here"]);
  });

  it("RL-3: a path the router does not send to the plugin but core resolves to its routes is answered by core, not the app", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const app = Fastify();
    await app.register(portcullis, { auth });
    app.get("/api/v1/:section/*", async () => ({ app: "wildcard" }));
    const server = await serve(app);
    expectEnvelope(await call(server, "GET", "/api/v1/things/../auth/me"), 40101);
    expectEnvelope(await call(server, "POST", "//api/v1//auth//login/", badJson), 40002);
    expect((await call(server, "GET", "/api/v1/things/x")).body).toEqual({ app: "wildcard" });
  });

  it("HTTP-2/HTTP-5: a content type Fastify cannot parse gets core's answer, the same as on Express", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const servers = [await startExpress5(auth), await startFastify(auth)];
    running.push(...servers);
    for (const contentType of ["json", "application/json; charset", "application /json", "", "*/*"]) {
      const [onExpress, onFastify] = await Promise.all(
        servers.map((server) =>
          call(server, "POST", "/api/v1/auth/login", { body: "{}", headers: { "content-type": contentType } }),
        ),
      );
      expect(onExpress?.body.code).toBeTypeOf("number");
      expect({ status: onFastify?.status, text: onFastify?.text }).toEqual({ status: onExpress?.status, text: onExpress?.text });
    }
  });

  it("errors of the app's own hooks on the plugin's routes go to the app's error handler", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const app = Fastify();
    app.setErrorHandler(async (error: Error, _request, reply) => reply.code(418).send({ app: "error", message: error.message }));
    app.addHook("preHandler", async (request) => {
      if (request.headers["x-fail"] === "yes") throw new Error("the app's hook failed");
    });
    await app.register(portcullis, { auth });
    const server = await serve(app);
    const failed = await call(server, "GET", "/api/v1/auth/public-key/config", { headers: { "x-fail": "yes" } });
    expect({ status: failed.status, body: failed.body }).toEqual({
      status: 418,
      body: { app: "error", message: "the app's hook failed" },
    });
    expectEnvelope(await call(server, "GET", "/api/v1/auth/public-key/config"), 0);
  });
  it("HTTP-5: without frameworkErrors, Fastify's router answers a path it cannot decode itself (FST_ERR_BAD_URL), on every path", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const app = Fastify();
    await app.register(portcullis, { auth });
    const server = await serve(app);
    for (const target of ["/api/v1/auth/%ff", "/api/v1/auth/sessions/%ZZ", "/api/v1/health%"]) {
      const answer = await rawRequest(server, "GET", target);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 400,
        body: {
          error: "Bad Request",
          code: "FST_ERR_BAD_URL",
          message: `'${target}' is not a valid url component`,
          statusCode: 400,
        },
      });
    }
  });

  it("HTTP-5: frameworkErrorHandler: the envelope on Portcullis's paths; on others, Fastify's own answer, or `otherwise`", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const asFastify = Fastify({ frameworkErrors: frameworkErrorHandler(auth) });
    await asFastify.register(portcullis, { auth });
    const toOtherwise = Fastify({
      frameworkErrors: frameworkErrorHandler(auth, {
        otherwise: (error, _request, reply) => {
          reply.code(400).send({ app: "otherwise", code: error.code });
        },
      }),
    });
    await toOtherwise.register(portcullis, { auth });
    for (const [app, other] of [
      [
        asFastify,
        {
          status: 400,
          body: {
            error: "Bad Request",
            code: "FST_ERR_BAD_URL",
            message: "'/api/v1/health%ZZ' is not a valid url component",
            statusCode: 400,
          },
        },
      ],
      [toOtherwise, { status: 400, body: { app: "otherwise", code: "FST_ERR_BAD_URL" } }],
    ] as const) {
      const server = await serve(app);
      expectEnvelope(await rawRequest(server, "GET", "/api/v1/auth/%ff"), 40400);
      expectEnvelope(await rawRequest(server, "DELETE", "/api/v1/auth/sessions/%ZZ"), 40101);
      const elsewhere = await rawRequest(server, "GET", "/api/v1/health%ZZ");
      expect({ status: elsewhere.status, body: elsewhere.body }).toEqual(other);
    }
  });

  it("RL-3/HTTP-5: frameworkErrorHandler reads the peer address as the plugin does; a getPeerAddress that fails is 50000", async () => {
    const reported: unknown[] = [];
    const { auth } = makeTestAuth({
      throttle: generousThrottle,
      onInternalError: (error: unknown) => {
        reported.push(error);
      },
    } as Parameters<typeof makeTestAuth>[0]);
    const events: AuthEvent[] = [];
    auth.events.on("login.failed", (event) => {
      events.push(event);
    });
    const wrong = JSON.stringify({ username: "nobody", password: "wrong password" });
    const answers: unknown[] = [];
    for (const getPeerAddress of [
      () => "127.0.0.7",
      () => undefined,
      () => {
        throw new Error("no address here");
      },
    ]) {
      const app = Fastify({ frameworkErrors: frameworkErrorHandler(auth, { getPeerAddress }) });
      await app.register(portcullis, { auth, getPeerAddress });
      const answer = await rawRequest(await serve(app), "POST", "/api/v1/things/%ff/../../auth/login", wrong);
      answers.push({ status: answer.status, code: answer.body?.code });
    }
    expect(answers).toEqual([
      { status: 401, code: 40100 },
      { status: 500, code: 50000 },
      { status: 500, code: 50000 },
    ]);
    expect(events.map((event) => (event as { ip?: string }).ip)).toEqual(["127.0.0.7"]);
    expect(reported.map((error) => (error as Error).message)).toEqual([
      "Portcullis could not read the client address of this request; pass getPeerAddress to the adapter",
      "no address here",
    ]);
    expect(() => frameworkErrorHandler(undefined as never)).toThrow(
      "frameworkErrorHandler needs the auth instance createAuth() returns, and got nothing. Write Fastify({ frameworkErrors: frameworkErrorHandler(auth) })",
    );
  });
});
