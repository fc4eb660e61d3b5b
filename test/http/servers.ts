import { type RequestListener, type Server, createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { AccessContext, AmrValue, ApiKeyContext, Auth } from "@portcullis/core";
import { type CredentialRequest, authRouter, requireAuth as requireAuthExpress } from "@portcullis/express";
import {
  type CredentialRequest as FastifyCredentialRequest,
  frameworkErrorHandler,
  portcullis,
  requireAuth as requireAuthFastify,
} from "@portcullis/fastify";
import { type AuthVariables, authApp, requireAuth as requireAuthHono, withResolvedTargets } from "@portcullis/hono";
import express5, { type Request, type Response } from "express";
import express4 from "express4";
import Fastify, { type FastifyInstance } from "fastify";
import { Hono } from "hono";

/** A real HTTP server, by default on a loopback address. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>` (or `http://[::1]:<port>`, or `https://…` when it serves TLS). */
  baseUrl: string;
  host: string;
  port: number;
  /** The certificate to trust when the server serves TLS. */
  ca?: string;
  /** The auth instance the server's routes serve, when the server was started here: the OpenAPI drift check reads its document. */
  auth?: Auth;
  close(): Promise<void>;
}

/** Where and how a test server listens. */
export interface ServerOptions {
  /** The address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Serve TLS with this key and certificate (`test/fixtures/tls`). */
  tls?: { key: string; cert: string };
}

/** Starts the test app of one adapter around an auth instance. */
export type StartServer = (auth: Auth, options?: ServerOptions) => Promise<RunningServer>;

/** A Node server for a request listener: plain HTTP, or TLS when `options.tls` is given. */
function nodeServer(listener: RequestListener, options: ServerOptions): Server {
  return options.tls ? createHttpsServer(options.tls, listener) : createServer(listener);
}

async function listen(server: Server, auth: Auth, options: ServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `${options.tls ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`,
    host,
    port,
    ...(options.tls ? { ca: options.tls.cert } : {}),
    auth,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type ExpressFactory = typeof express5;

/**
 * The options of the test apps' step-up routes (STUP-2): `GET /api/v1/things/recent` asks for a
 * sign-in at most 5 minutes old, `GET /api/v1/things/strong` for a second factor; both answer the
 * user and what `req.auth` says of the sign-in.
 */
export const stepUpRoutes = [
  ["/api/v1/things/recent", { maxAge: "5m" }],
  ["/api/v1/things/strong", { secondFactor: true }],
] as const;

/** What the step-up routes answer of `req.auth` (or `c.get("auth")`, `request.auth`): typed, so the test apps check the types too. */
const signInOf = (access: AccessContext | undefined): { userId?: string; authTime?: number; amr?: readonly AmrValue[] } => ({
  userId: access?.userId,
  authTime: access?.authTime,
  amr: access?.amr,
});

/**
 * The test apps' route for an organization's administrators (OR-7): `requireAuth` with
 * `org: { roles: ["admin"] }`; it answers the user and `req.auth.org`.
 */
export const orgAdminRoute = "/api/v1/org-things";

/** What the organization route answers of `req.auth` (or `c.get("auth")`, `request.auth`): typed, so the test apps check the types too. */
const orgOf = (
  access: AccessContext | undefined,
): { userId?: string; org?: { id: string; roles: readonly string[] } | null } => ({
  userId: access?.userId,
  org: access?.org,
});

/**
 * The test apps' route for API keys (AK-2): `requireAuth` with `scopes: ["reports:read"]`, which
 * accepts a key holding the scope or an access token; it answers the user and the credential's kind.
 */
export const reportsRoute = "/api/v1/reports";
const reportsOptions = { scopes: ["reports:read"] } as const;

/** What the reports route answers of `req.auth` (or `c.get("auth")`, `request.auth`): typed, so the test apps check the union. */
const credentialOf = (
  access: Pick<AccessContext, "kind" | "userId" | "sessionId"> | ApiKeyContext | undefined,
): { userId?: string; kind?: string; keyId?: string; sessionId?: string } =>
  access?.kind === "api_key"
    ? { userId: access.userId, kind: access.kind, keyId: access.keyId }
    : { userId: access?.userId, kind: access?.kind, sessionId: access?.sessionId };

/**
 * The Express test app: the Portcullis routes, then the app's own routes under the same
 * `/api/v1` prefix, one behind `requireAuth`, one behind `requireAuth` with a role, the
 * step-up routes and the organization route.
 */
function expressApp(express: ExpressFactory, auth: Auth, parseJsonFirst: boolean) {
  const app = express();
  if (parseJsonFirst) app.use(express.json());
  app.use(authRouter(auth));
  app.get("/api/v1/things", requireAuthExpress(auth), (req, res) => {
    res.json({ code: 0, message: "OK", data: { userId: req.auth?.userId, roles: req.auth?.roles } });
  });
  app.delete("/api/v1/things/:id", requireAuthExpress(auth, { roles: ["admin"] }), (req, res) => {
    res.json({ code: 0, message: "OK", data: { deleted: req.params.id, userId: req.auth?.userId } });
  });
  for (const [path, options] of stepUpRoutes) {
    app.get(path, requireAuthExpress(auth, options), (req, res) => {
      res.json({ code: 0, message: "OK", data: signInOf(req.auth) });
    });
  }
  app.get(orgAdminRoute, requireAuthExpress(auth, { org: { roles: ["admin"] } }), (req, res) => {
    res.json({ code: 0, message: "OK", data: orgOf(req.auth) });
  });
  app.get(reportsRoute, requireAuthExpress(auth, reportsOptions), (req: CredentialRequest, res: Response) => {
    res.json({ code: 0, message: "OK", data: credentialOf(req.auth) });
  });
  app.get("/api/v1/health", (_req, res) => {
    res.json({ app: "health" });
  });
  app.post("/api/v1/echo", async (req, res) => {
    if (req.body !== undefined) {
      res.json({ app: "echo", body: req.body });
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    res.json({ app: "echo", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
  });
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ app: "not found" });
  });
  return app;
}

/** Express 5, as `app.use(authRouter(auth))`. */
export const startExpress5: StartServer = (auth, options = {}) =>
  listen(nodeServer(expressApp(express5, auth, false), options), auth, options);

/** Express 4, as `app.use(authRouter(auth))`. */
export const startExpress4: StartServer = (auth, options = {}) =>
  listen(nodeServer(expressApp(express4, auth, false), options), auth, options);

/** Express 5 with `app.use(express.json())` before `authRouter`: core gets the parsed body. */
export const startExpress5ParsingJson: StartServer = (auth, options = {}) =>
  listen(nodeServer(expressApp(express5, auth, true), options), auth, options);

/** Express 4 with `app.use(express.json())` before `authRouter`. */
export const startExpress4ParsingJson: StartServer = (auth, options = {}) =>
  listen(nodeServer(expressApp(express4, auth, true), options), auth, options);

/** The Hono test app, with `app.route("/", authApp(auth))`, the same app routes as Express. */
export function honoApp(
  auth: Auth,
  mount: (app: Hono<{ Variables: AuthVariables }>) => void = (app) => app.route("/", authApp(auth)),
) {
  const app = new Hono<{ Variables: AuthVariables }>();
  mount(app);
  app.get("/api/v1/things", requireAuthHono(auth), (c) => {
    const access = c.get("auth");
    return c.json({ code: 0, message: "OK", data: { userId: access.userId, roles: access.roles } });
  });
  app.delete("/api/v1/things/:id", requireAuthHono(auth, { roles: ["admin"] }), (c) =>
    c.json({ code: 0, message: "OK", data: { deleted: c.req.param("id"), userId: c.get("auth").userId } }),
  );
  for (const [path, options] of stepUpRoutes) {
    app.get(path, requireAuthHono(auth, options), (c) => c.json({ code: 0, message: "OK", data: signInOf(c.get("auth")) }));
  }
  app.get(orgAdminRoute, requireAuthHono(auth, { org: { roles: ["admin"] } }), (c) =>
    c.json({ code: 0, message: "OK", data: orgOf(c.get("auth")) }),
  );
  // A sub-app without AuthVariables: its route sees c.get("auth") as AccessContext | ApiKeyContext.
  const keyed = new Hono();
  keyed.get(reportsRoute, requireAuthHono(auth, reportsOptions), (c) =>
    c.json({ code: 0, message: "OK", data: credentialOf(c.get("auth")) }),
  );
  app.route("/", keyed);
  app.get("/api/v1/health", (c) => c.json({ app: "health" }));
  app.post("/api/v1/echo", async (c) => c.json({ app: "echo", body: await c.req.json() }));
  app.notFound((c) => c.json({ app: "not found" }, 404));
  return app;
}

/**
 * Serves a Hono app on `@hono/node-server`'s request listener, over TLS when `options.tls` is
 * given, with the targets that server refuses on Portcullis's paths handed on as core reads them
 * (`withResolvedTargets`, as docs/adapters/hono.md shows).
 */
function serveHono(app: Pick<Hono, "fetch">, auth: Auth, options: ServerOptions): Promise<RunningServer> {
  const listener = withResolvedTargets(auth, getRequestListener(app.fetch, { hostname: options.host ?? "127.0.0.1" }));
  return listen(nodeServer(listener, options), auth, options);
}

/** Hono on `@hono/node-server`. */
export const startHono: StartServer = (auth, options = {}) => serveHono(honoApp(auth), auth, options);

/**
 * Hono with a middleware before the routes that reads every JSON body with `c.req.json()`, as
 * a logging or validation middleware would: core gets the body Hono parsed, not the stream.
 */
export const startHonoReadingJsonFirst: StartServer = (auth, options = {}) =>
  serveHono(
    honoApp(auth, (app) => {
      app.use(async (c, next) => {
        if (c.req.header("content-type")?.startsWith("application/json")) await c.req.json().catch(() => undefined);
        await next();
      });
      app.route("/", authApp(auth));
    }),
    auth,
    options,
  );

/** How the Fastify test app registers the plugin. */
type FastifyMount = (app: FastifyInstance, auth: Auth) => Promise<void>;

/**
 * The Fastify test app, with Fastify's own JSON parser on (its default), `trustProxy` set (which
 * the plugin must ignore: RL-3) and `frameworkErrors` answering Portcullis's paths (HTTP-5, as
 * docs/adapters/fastify.md shows): the plugin as `mount` registers it, then the same app routes
 * as Express, protected with `requireAuth` as their `preHandler`.
 */
async function fastifyApp(auth: Auth, options: ServerOptions, mount: FastifyMount): Promise<FastifyInstance> {
  const frameworkErrors = frameworkErrorHandler(auth);
  // Typed as the plain HTTP instance: the routes are the same over TLS.
  const app = (
    options.tls
      ? Fastify({ https: options.tls, trustProxy: true, frameworkErrors })
      : Fastify({ trustProxy: true, frameworkErrors })
  ) as FastifyInstance;
  await mount(app, auth);
  app.get("/api/v1/things", { preHandler: requireAuthFastify(auth) }, async (request) => ({
    code: 0,
    message: "OK",
    data: { userId: request.auth?.userId, roles: request.auth?.roles },
  }));
  app.delete<{ Params: { id: string } }>(
    "/api/v1/things/:id",
    { preHandler: requireAuthFastify(auth, { roles: ["admin"] }) },
    async (request) => ({ code: 0, message: "OK", data: { deleted: request.params.id, userId: request.auth?.userId } }),
  );
  for (const [path, options] of stepUpRoutes) {
    app.get(path, { preHandler: requireAuthFastify(auth, options) }, async (request) => ({
      code: 0,
      message: "OK",
      data: signInOf(request.auth),
    }));
  }
  app.get(orgAdminRoute, { preHandler: requireAuthFastify(auth, { org: { roles: ["admin"] } }) }, async (request) => ({
    code: 0,
    message: "OK",
    data: orgOf(request.auth),
  }));
  app.get(reportsRoute, { preHandler: requireAuthFastify(auth, reportsOptions) }, async (request: FastifyCredentialRequest) => ({
    code: 0,
    message: "OK",
    data: credentialOf(request.auth),
  }));
  app.get("/api/v1/health", async () => ({ app: "health" }));
  app.post("/api/v1/echo", async (request) => ({ app: "echo", body: request.body }));
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ app: "not found" }));
  await app.ready();
  return app;
}

/** Serves a Fastify test app on its own Node server, over TLS when `options.tls` is given. */
async function serveFastify(auth: Auth, options: ServerOptions, mount: FastifyMount): Promise<RunningServer> {
  const app = await fastifyApp(auth, options, mount);
  const running = await listen(app.server, auth, options);
  return {
    ...running,
    close: async () => {
      await running.close();
      await app.close();
    },
  };
}

/** Fastify 5, as `app.register(portcullis, { auth })`. */
export const startFastify: StartServer = (auth, options = {}) =>
  serveFastify(auth, options, async (app) => {
    await app.register(portcullis, { auth });
  });

/**
 * Fastify with the app's own JSON parser (`parseAs: "string"`, as users replace Fastify's) and a
 * hook that reads every request's body, registered before the plugin: core still gets the raw bytes.
 */
export const startFastifyWithJsonParser: StartServer = (auth, options = {}) =>
  serveFastify(auth, options, async (app) => {
    app.removeContentTypeParser("application/json");
    app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
      try {
        done(null, body === "" ? undefined : JSON.parse(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    await app.register(portcullis, { auth });
  });

/**
 * Fastify with the plugin registered inside an encapsulated plugin of the app, under the
 * prefix `/api` (the base path `/api/v1` starts with it).
 */
export const startFastifyUnderPrefix: StartServer = (auth, options = {}) =>
  serveFastify(auth, options, async (app) => {
    await app.register(
      async (child) => {
        await child.register(portcullis, { auth, prefix: "/v1" });
      },
      { prefix: "/api" },
    );
  });

/** The four adapters, each mounted directly: what a test that compares adapters starts. */
export const adapters: readonly (readonly [name: string, start: StartServer])[] = [
  ["Express 5", startExpress5],
  ["Express 4", startExpress4],
  ["Hono", startHono],
  ["Fastify", startFastify],
];
