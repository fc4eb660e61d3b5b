import { type IncomingMessage, type RequestListener, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import {
  type Auth,
  type AuthConfig,
  type CreateAuthOptions,
  type PasskeyConfig,
  createAuth,
  createUser,
  memoryStorage,
} from "@portcullis/core";
import { portcullis, requireAuth as requireAuthFastify } from "@portcullis/fastify";
import { authApp, requireAuth } from "@portcullis/hono";
import Fastify from "fastify";
import { Hono } from "hono";
import {
  type DemoProvider,
  contentSecurityPolicy,
  createDemoApp,
  demoPageFiles,
  randomSecret,
  startDemoProvider,
} from "../../examples/express/src/app.js";
import { type DemoMailServer, startDemoMailServer } from "../../examples/express/src/mail.js";
import { createExampleApp } from "../../examples/react/src/app.js";

/** An app serving the demo page and the Portcullis routes, running on loopback. */
export interface PageApp {
  /** `http://localhost:<port>`: where the browser opens the page (WebAuthn refuses IP addresses). */
  origin: string;
  /** `http://127.0.0.1:<port>`: the same server, for the test's own requests. */
  apiBase: string;
  auth: Auth;
  /** Moves the server's clock forward by `ms` milliseconds: it runs from the real time, plus every move so far. */
  advanceClock(ms: number): void;
  close(): Promise<void>;
}

/** A clock that follows the real time, moved forward by hand: the apps' `now`, and the test's control of it. */
function movableClock(): { now: () => number; advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms) {
      offset += ms;
    },
  };
}

/** The users' password in these tests. */
export const browserTestPassword = "correct horse battery staple";

/**
 * Listens on 127.0.0.1 on an ephemeral port before the app exists, because the app's passkey
 * origin must name the port; the app is then handed to the server. The browser reaches it as
 * `localhost` (Chromium resolves that name to loopback itself).
 */
async function listenFirst(): Promise<{
  origin: string;
  apiBase: string;
  use(listener: RequestListener): void;
  close(): Promise<void>;
}> {
  let app: RequestListener | undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (app) app(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    apiBase: `http://127.0.0.1:${port}`,
    use(listener) {
      app = listener;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The Express demo as {@link startExpressDemo} (or, with its API on Fastify, {@link startFastifyDemo})
 * runs it: its demo user, its local provider with that provider's account, and its local SMTP
 * server, whose messages the outbox page shows.
 */
export interface ExpressDemo extends PageApp {
  username: string;
  password: string;
  userId: string;
  localProvider: DemoProvider;
  mail: DemoMailServer;
}

/**
 * The Express demo (examples/express) as it is, in process, with its local OpenID provider and
 * its local SMTP server as `pnpm demo` starts them; sign-up on with `signUp` (as `pnpm demo` has it).
 */
export function startExpressDemo({ signUp = false }: { signUp?: boolean } = {}): Promise<ExpressDemo> {
  return startDemo(false, signUp);
}

/**
 * The same demo (its auth, demo user, local provider and SMTP server) with its API on Fastify:
 * every request under `/api/` goes to a Fastify app that registers `@portcullis/fastify`
 * (`app.register(portcullis, { auth })`, Fastify's own JSON parser on) and serves the demo's
 * protected list behind `requireAuth` as its `preHandler`. The page, its script, the provider's
 * callback page and the demo's own routes (`/demo/qr`, the outbox) stay on the demo's Express
 * app: they are not the adapter's.
 */
export function startFastifyDemo(): Promise<ExpressDemo> {
  return startDemo(true);
}

async function startDemo(apiOnFastify: boolean, signUp = false): Promise<ExpressDemo> {
  const listening = await listenFirst();
  const clock = movableClock();
  const localProvider = await startDemoProvider({ origin: listening.origin });
  const mail = await startDemoMailServer();
  const demo = await createDemoApp({
    origin: listening.origin,
    demoPassword: browserTestPassword,
    oauthProvider: localProvider.registration,
    mailServer: mail,
    now: clock.now,
    signUp,
  });
  const page = demo.app as unknown as RequestListener;
  const api = apiOnFastify ? await fastifyApi(demo.auth) : null;
  listening.use(api ? (req, res) => (req.url?.startsWith("/api/") ? api.listener : page)(req, res) : page);
  return {
    origin: listening.origin,
    apiBase: listening.apiBase,
    auth: demo.auth,
    advanceClock: clock.advance,
    username: demo.demoUser.username,
    password: demo.demoUser.password,
    userId: demo.demoUser.id,
    localProvider,
    mail,
    close: async () => {
      await listening.close();
      await api?.close();
      await localProvider.provider.close();
      await mail.close();
    },
  };
}

/** A Fastify app that a server already listening hands requests to. */
export interface FastifyApi {
  /** Fastify's request listener, from `serverFactory`: the server calls it for the requests the app serves. */
  listener: RequestListener;
  close(): Promise<void>;
}

/**
 * A Fastify app with the Portcullis plugin (Fastify's own JSON parser on) and the demo's
 * protected list (`GET /api/v1/things`; `DELETE /api/v1/things/:id` for the `admin` role with a sign-in in the last 5 minutes, as the demo has it), for a
 * server that already listens (over TLS or not) to hand requests to.
 */
export async function fastifyApi(auth: Auth): Promise<FastifyApi> {
  let listener: RequestListener | undefined;
  const app = Fastify({
    serverFactory: (handler) => {
      listener = handler;
      return createServer();
    },
  });
  await app.register(portcullis, { auth });
  const things = [
    { id: "1", name: "portcullis" },
    { id: "2", name: "drawbridge" },
    { id: "3", name: "moat" },
  ];
  app.get("/api/v1/things", { preHandler: requireAuthFastify(auth) }, async (_request, reply) =>
    reply.header("cache-control", "no-store").send({ code: 0, message: "OK", data: things }),
  );
  app.delete<{ Params: { id: string } }>(
    "/api/v1/things/:id",
    { preHandler: requireAuthFastify(auth, { roles: ["admin"], maxAge: "5m" }) },
    async (request, reply) => {
      const index = things.findIndex((thing) => thing.id === request.params.id);
      if (index === -1) return reply.code(404).send({ code: 40400, message: "No such thing" });
      things.splice(index, 1);
      return reply.header("cache-control", "no-store").send({ code: 0, message: "OK", data: { deleted: true } });
    },
  );
  await app.ready();
  if (!listener) throw new Error("Fastify did not hand over its request listener");
  return { listener, close: () => app.close() };
}

/**
 * A small Hono app: `authApp(auth)`, the demo's page (its `public/` folder and its bundled client,
 * under the same content security policy) and the protected list the page reads,
 * `GET /api/v1/things`, on `@hono/node-server`'s request listener. Passkeys for its origin, with
 * `passkeys` overriding the defaults, and `config` merged over the whole configuration.
 */
export async function startHonoPageApp(
  passkeys: Partial<PasskeyConfig> = {},
  config: Partial<AuthConfig & CreateAuthOptions> = {},
): Promise<PageApp> {
  const listening = await listenFirst();
  const clock = movableClock();
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: listening.origin,
    audience: "portcullis-browser-test",
    secrets: { signing: randomSecret(), encryption: randomSecret() },
    passkeys: { rpId: "localhost", rpName: "Portcullis on Hono", origins: [listening.origin], ...passkeys },
    now: clock.now,
    ...config,
  });

  const { publicDirectory, pageClientPath, bundlePageClient } = demoPageFiles;
  const { javascript } = await bundlePageClient();
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.header("content-security-policy", contentSecurityPolicy);
    c.header("x-content-type-options", "nosniff");
  });
  app.route("/", authApp(auth));
  app.get("/api/v1/things", requireAuth(auth), (c) =>
    c.json({ code: 0, message: "OK", data: [{ id: "1", name: "portcullis" }] }),
  );
  app.get(pageClientPath, (c) => c.body(javascript, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.use("/*", serveStatic({ root: publicDirectory }));
  // As `serve()` of @hono/node-server does, with the socket in `c.env.incoming` for the adapter.
  listening.use(getRequestListener(app.fetch));
  return { origin: listening.origin, apiBase: listening.apiBase, auth, advanceClock: clock.advance, close: listening.close };
}

/**
 * The React example (examples/react) as its server runs it, on Hono's node listener, with a clock
 * the test moves: its page, its bundle and `GET /api/v1/payouts` behind `maxAge: "1m"`.
 */
export async function startReactExample(): Promise<PageApp> {
  const listening = await listenFirst();
  const clock = movableClock();
  const { app, auth } = createExampleApp({ origin: listening.origin, now: clock.now });
  listening.use(getRequestListener(app.fetch));
  return { origin: listening.origin, apiBase: listening.apiBase, auth, advanceClock: clock.advance, close: listening.close };
}

/** Creates a local user with {@link browserTestPassword}. */
export async function createBrowserTestUser(auth: Auth, username: string): Promise<{ id: string; username: string }> {
  const user = await createUser(auth, { username, password: browserTestPassword, roles: ["user"] });
  return { id: user.id, username: user.username };
}
