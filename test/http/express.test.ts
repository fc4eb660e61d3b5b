import { IncomingMessage, createServer } from "node:http";
import type { AuthEvent } from "@portcullis/core";
import { createUser, login } from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import express5, { type NextFunction, type Request, type Response } from "express";
import express4 from "express4";
import { afterEach, describe, expect, it } from "vitest";
import { generousThrottle, makeTestAuth } from "../fixtures/auth.js";
import { call } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import type { RunningServer } from "./servers.js";

const running: RunningServer[] = [];

async function serve(app: Parameters<typeof createServer>[1]): Promise<RunningServer> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const handle: RunningServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    host: "127.0.0.1",
    port,
    close: () => new Promise((resolve) => server.close(() => resolve()) && server.closeAllConnections()),
  };
  running.push(handle);
  return handle;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** The app's own error handler: what authRouter must leave other errors to. */
function appErrorHandler(error: { type?: string; message?: string }, _req: Request, res: Response, _next: NextFunction): void {
  res.status(418).json({ app: "error", type: error.type ?? null, message: error.message });
}

const badJson = { body: '{"username":', headers: { "content-type": "application/json" } };

describe.each([
  ["Express 5", express5],
  ["Express 4", express4],
])("@portcullis/express on %s", (_name, express) => {
  it("a body express.json() refused as too large on a Portcullis path is the envelope 40002", async () => {
    const { auth } = makeTestAuth();
    const app = express();
    app.use(express.json({ limit: "1kb" }));
    app.use(authRouter(auth));
    const server = await serve(app);
    const result = await call(server, "POST", "/api/v1/auth/login", { json: { username: "a".repeat(2048), password: "x" } });
    expectEnvelope(result, 40002);
    expect(result.body.message).toBe("The request body is too large");
    const malformed = await call(server, "POST", "/api/v1/auth/refresh", badJson);
    expectEnvelope(malformed, 40002);
    expect(malformed.body.message).toBe("The request body is not valid JSON");
  });

  it("errors on the app's own paths, and errors that are not a refused body, go on to the app's error handler", async () => {
    const { auth } = makeTestAuth();
    const app = express();
    app.use(express.json());
    app.use("/api/v1/auth/me", (_req: Request, _res: Response, next: NextFunction) => next(new Error("the app's own failure")));
    app.use(authRouter(auth));
    app.use(appErrorHandler);
    const server = await serve(app);
    const appPath = await call(server, "POST", "/api/v1/echo", badJson);
    expect(appPath.status).toBe(418);
    expect(appPath.body).toMatchObject({ app: "error", type: "entity.parse.failed" });
    const otherError = await call(server, "GET", "/api/v1/auth/me");
    expect(otherError.status).toBe(418);
    expect(otherError.body).toEqual({ app: "error", type: null, message: "the app's own failure" });
  });

  it("mounted under a path, it serves the routes below it with a basePath to match", async () => {
    const { auth } = makeTestAuth({ http: { basePath: "" } });
    const app = express();
    app.use("/identity", authRouter(auth));
    app.get("/identity/status", (_req: Request, res: Response) => {
      res.json({ app: "status" });
    });
    const server = await serve(app);
    expectEnvelope(await call(server, "POST", "/identity/auth/login", badJson), 40002);
    expectEnvelope(await call(server, "GET", "/identity/auth/me"), 40101);
    expect((await call(server, "GET", "/identity/status")).body).toEqual({ app: "status" });
    expect((await call(server, "POST", "/auth/login", badJson)).status).toBe(404);
  });

  it("req.auth: each request its own, in a mounted sub-app too; set by other middleware, it reads back; absent where requireAuth did not run", async () => {
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    const tokens: string[] = [];
    for (const username of ["ada", "grace"]) {
      await createUser(auth, { username, password: "correct horse battery staple" });
      const result = await login(auth, { username, password: "correct horse battery staple" });
      if (result.status !== "authenticated") throw new Error(result.status);
      tokens.push(result.tokens.accessToken);
    }
    const sub = express();
    sub.get("/who", (req: Request, res: Response) => {
      res.json({ userId: req.auth?.userId ?? null, own: Object.hasOwn(req, "auth") });
    });
    const app = express();
    app.use(authRouter(auth));
    app.use("/api/v1/sub", requireAuth(auth), sub);
    app.get("/api/v1/open", (req: Request, res: Response) => {
      res.json({ userId: req.auth?.userId ?? null });
    });
    app.get(
      "/api/v1/other",
      (req: Request, _res: Response, next: NextFunction) => {
        req.auth = { userId: "from-other-middleware" } as Request["auth"];
        next();
      },
      (req: Request, res: Response) => {
        res.json({ userId: req.auth?.userId ?? null });
      },
    );
    const server = await serve(app);
    const [ada, grace] = await Promise.all(
      tokens.map((token) => call(server, "GET", "/api/v1/sub/who", { headers: { authorization: `Bearer ${token}` } })),
    );
    const users = await auth.storage.users.list({ limit: 10 });
    const idOf = (username: string) => users.find((user) => user.username === username)?.id;
    expect(ada?.body).toEqual({ userId: idOf("ada"), own: false });
    expect(grace?.body).toEqual({ userId: idOf("grace"), own: false });
    expectEnvelope(await call(server, "GET", "/api/v1/sub/who"), 40101);
    expect((await call(server, "GET", "/api/v1/open", { headers: { authorization: `Bearer ${tokens[0]}` } })).body).toEqual({
      userId: null,
    });
    expect((await call(server, "GET", "/api/v1/other")).body).toEqual({ userId: "from-other-middleware" });
  });

  it("RL-3: the client address is the socket's, or what getPeerAddress returns", async () => {
    const events: AuthEvent[] = [];
    const { auth } = makeTestAuth({ throttle: generousThrottle });
    auth.events.on("login.failed", (event) => {
      events.push(event);
    });
    const app = express();
    // A loopback address, so that plain HTTP is allowed (HTTP-7), other than the socket's.
    app.use("/proxied", authRouter(auth, { getPeerAddress: () => "127.0.0.7" }));
    app.use(authRouter(auth));
    const server = await serve(app);
    const credentials = {
      json: { username: "nobody", password: "wrong password" },
      headers: { "x-forwarded-for": "203.0.113.1" },
    };
    expectEnvelope(await call(server, "POST", "/api/v1/auth/login", credentials), 40100);
    expectEnvelope(await call(server, "POST", "/proxied/api/v1/auth/login", credentials), 40100);
    expect(events.map((event) => (event as { ip?: string }).ip)).toEqual(["127.0.0.1", "127.0.0.7"]);
  });
});

describe("@portcullis/express requireAuth outside an Express app", () => {
  it("req.auth on a plain Node request is its own property, and Node's IncomingMessage.prototype is left alone", async () => {
    const { auth } = makeTestAuth();
    await createUser(auth, { username: "ada", password: "correct horse battery staple" });
    const result = await login(auth, { username: "ada", password: "correct horse battery staple" });
    if (result.status !== "authenticated") throw new Error(result.status);
    const guard = requireAuth(auth);
    const server = await serve((req, res) => {
      guard(req as Request, res as Response, () => {
        res.end(JSON.stringify({ userId: (req as Request).auth?.userId ?? null, own: Object.hasOwn(req, "auth") }));
      });
    });
    const answer = await call(server, "GET", "/", { headers: { authorization: `Bearer ${result.tokens.accessToken}` } });
    expect(answer.body).toEqual({ userId: expect.any(String), own: true });
    expect(Object.getOwnPropertyDescriptor(IncomingMessage.prototype, "auth")).toBeUndefined();
  });
});
