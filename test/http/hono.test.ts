import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import type { AuthEvent } from "@portcullis/core";
import { type AuthVariables, authApp, authRoutes, requireAuth, withResolvedTargets } from "@portcullis/hono";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type CallResult, call, rawRequest } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { type RunningServer, honoApp } from "./servers.js";

const running: Server[] = [];

async function serve(app: Pick<Hono, "fetch">): Promise<RunningServer> {
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  running.push(server);
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, host: "127.0.0.1", port, close: async () => {} };
}

afterEach(async () => {
  await Promise.all(
    running
      .splice(0)
      .map((server) => new Promise<void>((resolve) => server.close(() => resolve()) && server.closeAllConnections())),
  );
});

async function fromResponse(response: Response): Promise<CallResult> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

const badJson = { method: "POST", body: '{"username":', headers: { "content-type": "application/json" } };

function recordFailedLogins(auth: ReturnType<typeof makeTestAuth>["auth"]): (string | undefined)[] {
  const addresses: (string | undefined)[] = [];
  auth.events.on("login.failed", (event: AuthEvent) => {
    addresses.push((event as { ip?: string }).ip);
  });
  return addresses;
}

describe("@portcullis/hono", () => {
  it("authRoutes works as app.use middleware and passes other paths on", async () => {
    const { auth } = makeTestAuth();
    const server = await serve(honoApp(auth, (app) => app.use(authRoutes(auth))));
    expectEnvelope(await call(server, "POST", "/api/v1/auth/login", badJson), 40002);
    expectEnvelope(await call(server, "GET", "/api/v1/auth/me"), 40101);
    expect((await call(server, "GET", "/api/v1/health")).body).toEqual({ app: "health" });
  });

  it("authApp mounted under a path serves the routes with the full path as basePath", async () => {
    const { auth } = makeTestAuth({ http: { basePath: "/identity/api/v1" } });
    const app = new Hono();
    app.route("/identity", authApp(auth));
    app.get("/identity/status", (c) => c.json({ app: "status" }));
    const server = await serve(app);
    expectEnvelope(await call(server, "POST", "/identity/api/v1/auth/login", badJson), 40002);
    expect((await call(server, "GET", "/identity/status")).body).toEqual({ app: "status" });
  });

  it("reads the body an earlier middleware already read, and refuses it as 40002 when it is not JSON", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    await createTestUser(auth, "iris");
    const app = new Hono();
    app.use(async (c, next) => {
      if (c.req.header("x-read-first") === "json") await c.req.json();
      if (c.req.header("x-read-first") === "text") await c.req.text();
      await next();
    });
    app.use(authRoutes(auth, { getPeerAddress: () => "127.0.0.1" }));
    const login = (password: string, readFirst: string) =>
      app.request("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json", "x-read-first": readFirst },
        body: JSON.stringify({ username: "iris", password }),
      });
    expectEnvelope(await fromResponse(await login(testPassword, "json")), 0);
    expectEnvelope(await fromResponse(await login("wrong password", "json")), 40100);
    expectEnvelope(await fromResponse(await login(testPassword, "text")), 0);
    const notJson = await app.request("/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json", "x-read-first": "text" },
      body: "username=iris",
    });
    expectEnvelope(await fromResponse(notJson), 40002);
  });

  it("RL-3: a getPeerAddress that returns undefined gets 50000 on every Portcullis route; onInternalError is told to pass getPeerAddress", async () => {
    const reported: [unknown, string][] = [];
    const { auth } = makeTestAuth({
      throttle: generousThrottle,
      onInternalError: (error: unknown, requestId: string) => {
        reported.push([error, requestId]);
      },
    } as Parameters<typeof makeTestAuth>[0]);
    const addresses = recordFailedLogins(auth);
    await createTestUser(auth, "hana");
    const server = await serve(honoApp(auth, (app) => app.use(authRoutes(auth, { getPeerAddress: () => undefined }))));
    const answers = [
      await call(server, "POST", "/api/v1/auth/login", { json: { username: "hana", password: "wrong password" } }),
      await call(server, "GET", "/api/v1/auth/me"),
      await call(server, "GET", "/.well-known/jwks.json"),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ code: 50000, message: "Internal error", requestId: expect.any(String) });
    }
    expect(reported.map(([, requestId]) => requestId)).toEqual(answers.map((answer) => answer.body.requestId));
    for (const [error] of reported) {
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(
        "Portcullis could not read the client address of this request; pass getPeerAddress to the adapter",
      );
    }
    expect(addresses).toEqual([]);
    expect((await call(server, "GET", "/api/v1/health")).body).toEqual({ app: "health" });
  });

  it("outside @hono/node-server (app.request), getPeerAddress names the peer and the URL's scheme says whether it is TLS", async () => {
    const reported: unknown[] = [];
    const { auth } = makeTestAuth({ throttle: generousThrottle, onInternalError: (error) => reported.push(error) });
    const addresses = recordFailedLogins(auth);
    const user = await createTestUser(auth, "hana");
    const credentials = { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": "203.0.113.1" } };
    const body = JSON.stringify({ username: "hana", password: testPassword });
    const withoutPeer = await fromResponse(await honoApp(auth).request("/api/v1/auth/login", { ...credentials, body }));
    expect(withoutPeer.status).toBe(500);
    expect(withoutPeer.body).toEqual({ code: 50000, message: "Internal error", requestId: expect.any(String) });
    expect(reported.map(String)).toEqual([
      "TypeError: Portcullis could not read the client address of this request; pass getPeerAddress to the adapter",
    ]);

    const app = honoApp(auth, (root) => root.use(authRoutes(auth, { getPeerAddress: () => "198.51.100.4" })));
    expectEnvelope(
      await fromResponse(await app.request("http://portcullis.test/api/v1/auth/login", { ...credentials, body })),
      40300,
    );
    const wrong = await app.request("https://portcullis.test/api/v1/auth/login", {
      ...credentials,
      body: JSON.stringify({ username: "hana", password: "nope nope" }),
    });
    expectEnvelope(await fromResponse(wrong), 40100);
    expect(addresses).toEqual(["198.51.100.4"]);
    const signedIn = await fromResponse(await app.request("https://portcullis.test/api/v1/auth/login", { ...credentials, body }));
    expectEnvelope(signedIn, 0);
    const things = await app.request("https://portcullis.test/api/v1/things", {
      headers: { authorization: `Bearer ${signedIn.body.data.accessToken}` },
    });
    expect(await things.json()).toEqual({ code: 0, message: "OK", data: { userId: user.id, roles: ["user"] } });

    const declaredSecure = honoApp(auth, (root) =>
      root.use(authRoutes(auth, { getPeerAddress: () => "198.51.100.4", isSecureConnection: () => true })),
    );
    expectEnvelope(await fromResponse(await declaredSecure.request("/api/v1/auth/login", { ...credentials, body })), 0);
  });

  it("RL-3: the client address is the socket's, or what getPeerAddress returns", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const addresses = recordFailedLogins(auth);
    const credentials = {
      json: { username: "nobody", password: "wrong password" },
      headers: { "x-forwarded-for": "203.0.113.1" },
    };
    const plain = await serve(honoApp(auth));
    const custom = await serve(
      honoApp(auth, (app) => app.use(authRoutes(auth, { getPeerAddress: () => "192.0.2.7", isSecureConnection: () => true }))),
    );
    expectEnvelope(await call(plain, "POST", "/api/v1/auth/login", credentials), 40100);
    expectEnvelope(await call(custom, "POST", "/api/v1/auth/login", credentials), 40100);
    expect(addresses).toEqual(["127.0.0.1", "192.0.2.7"]);
  });

  it("requireAuth types c.get('auth') and answers in the envelope", async () => {
    const { auth } = makeTestAuth();
    const app = new Hono<{ Variables: AuthVariables }>();
    app.get("/who", requireAuth(auth, { roles: ["admin"] }), (c) => c.text(c.get("auth").userId));
    expectEnvelope(await fromResponse(await app.request("https://portcullis.test/who")), 40101);
    const forged = { headers: { authorization: "Bearer x.y.z" } };
    expectEnvelope(await fromResponse(await app.request("https://portcullis.test/who", forged)), 40101);
    // HTTP-7: plain HTTP from a peer that is not known to be loopback is refused before the token is read.
    expectEnvelope(await fromResponse(await app.request("http://portcullis.test/who", forged)), 40300);
  });

  it("requireAuth: a live token reaches the handler, whose errors go to the app's onError, not into a 40101; a getPeerAddress that throws is 50000", async () => {
    const reported: unknown[] = [];
    const testAuth = makeTestAuth({ throttle: generousThrottle, onInternalError: (error) => reported.push(error) });
    const user = await createTestUser(testAuth.auth, "hono-handler");
    const app = new Hono<{ Variables: AuthVariables }>();
    app.route("/", authApp(testAuth.auth));
    app.get("/who", requireAuth(testAuth.auth), (c) => c.text(c.get("auth").userId));
    app.get("/broken", requireAuth(testAuth.auth), () => {
      throw new Error("the handler failed");
    });
    const throwing = () => {
      throw new Error("no address here");
    };
    app.get("/no-address", requireAuth(testAuth.auth, { getPeerAddress: throwing }), (c) => c.text("reached"));
    app.onError((error, c) => c.text(`app onError: ${error.message}`, 500));
    const server = await serve(app);
    const login = await call(server, "POST", "/api/v1/auth/login", { json: { username: user.username, password: testPassword } });
    const token = login.body.data.accessToken as string;
    expect((await call(server, "GET", "/who", { token })).text).toBe(user.id);
    const broken = await call(server, "GET", "/broken", { token });
    expect([broken.status, broken.text]).toEqual([500, "app onError: the handler failed"]);
    const refused = await call(server, "GET", "/no-address", { token });
    expectEnvelope(refused, 50000);
    expect(refused.text).not.toContain("no address here");
    expect(reported.map((error) => (error as Error).message)).toEqual(["no address here"]);
  });
  it("HTTP-5: without withResolvedTargets, @hono/node-server refuses some targets with an empty 400 before Hono runs; elsewhere Hono gets them", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const app = honoApp(auth, (app) => app.use(authRoutes(auth, { getPeerAddress: () => "127.0.0.1" })));
    const server = await serve(app);
    for (const target of ["/api/v1/auth\\login", "/api/v1\\auth\\login", "HTTPS://HOST.EXAMPLE/api/v1/auth/login"]) {
      const refused = await rawRequest(server, "POST", target, "{");
      expect({ target, status: refused.status, text: refused.text }).toEqual({ target, status: 400, text: "" });
    }
    // app.request, as on a runtime without that server: the target reaches Hono, and core.
    const request = { method: "POST", body: "{", headers: { "content-type": "application/json" } };
    expectEnvelope(await fromResponse(await app.request("/api/v1/auth\\login", request)), 40002);
  });

  it("HTTP-5: withResolvedTargets hands on, as core reads it, only a target of Portcullis's that the server would refuse", () => {
    const { auth } = makeTestAuth();
    const seen: (string | undefined)[] = [];
    const listener = withResolvedTargets(auth, (incoming: { url?: string }, answer: string) => {
      seen.push(incoming.url);
      return answer;
    });
    // Each target, and what the listener then sees: the first four resolved, the rest as sent.
    const cases: [string | undefined, string | undefined][] = [
      ["/api/v1/auth\\login?next=\\x", "/api/v1/auth/login?next=\\x"],
      ["/api/v1/auth/x\\..\\me", "/api/v1/auth/me"],
      ["HTTPS://HOST.EXAMPLE/api/v1/auth/me?x=1#y", "/api/v1/auth/me?x=1"],
      ["http://host.example/api/v1/auth/me", "/api/v1/auth/me"],
      ["/api/v1/auth//login", "/api/v1/auth//login"],
      ["/api/v1/auth/me?next=\\x", "/api/v1/auth/me?next=\\x"],
      ["/api/v1/auth//me?next=\\x", "/api/v1/auth//me?next=\\x"],
      ["/api/v1/health\\x", "/api/v1/health\\x"],
      ["HTTP://HOST.EXAMPLE/api/v1/health", "HTTP://HOST.EXAMPLE/api/v1/health"],
      ["*", "*"],
      [undefined, undefined],
    ];
    for (const [url] of cases) expect(listener({ url }, "answered")).toBe("answered");
    expect(seen).toEqual(cases.map(([, expected]) => expected));
    expect(() => withResolvedTargets(undefined as never, () => undefined)).toThrow(
      "withResolvedTargets needs the auth instance createAuth() returns, and got nothing. Write withResolvedTargets(auth, getRequestListener(app.fetch))",
    );
  });
});
