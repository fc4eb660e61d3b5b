// The test apps of the service-account and impersonation tests (SA-4, IMP-1): each adapter's
// Portcullis routes, then an app's own routes behind requireAuth with the credentials a machine
// brings, and one answering who acts in an impersonated session.
import { type RequestListener, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Auth, ServiceAccountContext } from "@portcullis/core";
import { type CredentialRequest, authRouter, requireAuth as requireAuthExpress } from "@portcullis/express";
import {
  type CredentialRequest as FastifyCredentialRequest,
  portcullis,
  requireAuth as requireAuthFastify,
} from "@portcullis/fastify";
import { authApp, requireAuth as requireAuthHono, withResolvedTargets } from "@portcullis/hono";
import express5, { type Response } from "express";
import express4 from "express4";
import Fastify from "fastify";
import { Hono } from "hono";
import type { RunningServer } from "./servers.js";

/** `requireAuth(auth, { credentials: "service_account", scopes: ["invoices:read"] })`: a service account's token with the scope. */
export const invoicesRoute = "/api/v1/invoices";
const invoicesOptions = { credentials: "service_account", scopes: ["invoices:read"] } as const;

/** `requireAuth(auth, { credentials: ["access_token", "service_account"] })`: a person's token or a service account's. */
export const eitherRoute = "/api/v1/either";
const eitherOptions = { credentials: ["access_token", "service_account"] } as const;

/** `requireAuth(auth)`: access tokens only; answers the user and who acts for them (`req.auth.actor`, IMP-1). */
export const whoRoute = "/api/v1/who";

/** What the app's routes answer of the request's credential. */
type Credential = {
  kind: string;
  userId?: string;
  serviceAccountId?: string;
  scopes?: readonly string[];
  roles?: readonly string[];
};

function credentialOf(
  access: { readonly kind: string; readonly userId?: string } | ServiceAccountContext | undefined,
): Credential {
  if (access === undefined) return { kind: "none" };
  if ("serviceAccountId" in access) {
    return { kind: access.kind, serviceAccountId: access.serviceAccountId, scopes: access.scopes, roles: access.roles };
  }
  return { kind: access.kind, userId: access.userId };
}

const answer = (data: unknown) => ({ code: 0, message: "OK", data });

async function listen(listener: RequestListener | Server, auth: Auth): Promise<RunningServer> {
  const server = typeof listener === "function" ? createServer(listener) : listener;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    host: "127.0.0.1",
    port,
    auth,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Express 4 or 5; with `parseForms`, `express.urlencoded()` runs before `authRouter`, so core gets the parsed form. */
function expressApp(express: typeof express5, auth: Auth, parseForms: boolean) {
  const app = express();
  if (parseForms) app.use(express.urlencoded({ extended: false }));
  app.use(authRouter(auth));
  app.get(invoicesRoute, requireAuthExpress(auth, invoicesOptions), (req: CredentialRequest, res: Response) => {
    res.json(answer(credentialOf(req.auth)));
  });
  app.get(eitherRoute, requireAuthExpress(auth, eitherOptions), (req: CredentialRequest, res: Response) => {
    res.json(answer(credentialOf(req.auth)));
  });
  app.get(whoRoute, requireAuthExpress(auth), (req, res) => {
    res.json(answer({ userId: req.auth?.userId, actor: req.auth?.actor }));
  });
  return app;
}

function honoApp(auth: Auth, readsBodyFirst = false) {
  const app = new Hono();
  // A middleware that reads every body first (as text), as logging or signature checks do: the token endpoint's form still arrives.
  if (readsBodyFirst) {
    app.use(async (c, next) => {
      if (c.req.method === "POST") await c.req.text();
      await next();
    });
  }
  app.route("/", authApp(auth));
  app.get(invoicesRoute, requireAuthHono(auth, invoicesOptions), (c) => c.json(answer(credentialOf(c.get("auth")))));
  app.get(eitherRoute, requireAuthHono(auth, eitherOptions), (c) => c.json(answer(credentialOf(c.get("auth")))));
  const people = new Hono();
  people.get(whoRoute, requireAuthHono(auth), (c) => {
    const access = c.get("auth");
    return c.json(answer({ userId: access.userId, actor: access.actor }));
  });
  app.route("/", people);
  return app;
}

async function fastifyServer(auth: Auth): Promise<RunningServer> {
  const app = Fastify();
  await app.register(portcullis, { auth });
  app.get(invoicesRoute, { preHandler: requireAuthFastify(auth, invoicesOptions) }, async (request: FastifyCredentialRequest) =>
    answer(credentialOf(request.auth)),
  );
  app.get(eitherRoute, { preHandler: requireAuthFastify(auth, eitherOptions) }, async (request: FastifyCredentialRequest) =>
    answer(credentialOf(request.auth)),
  );
  app.get(whoRoute, { preHandler: requireAuthFastify(auth) }, async (request) =>
    answer({ userId: request.auth?.userId, actor: request.auth?.actor }),
  );
  await app.ready();
  const running = await listen(app.server, auth);
  return {
    ...running,
    close: async () => {
      await running.close();
      await app.close();
    },
  };
}

/** The adapters the service-account and impersonation tests run on, each with the app routes above. */
export const machineAdapters: readonly (readonly [name: string, start: (auth: Auth) => Promise<RunningServer>])[] = [
  ["Express 5", (auth) => listen(expressApp(express5, auth, false) as RequestListener, auth)],
  ["Express 4", (auth) => listen(expressApp(express4 as unknown as typeof express5, auth, false) as RequestListener, auth)],
  ["Express 5 after express.urlencoded()", (auth) => listen(expressApp(express5, auth, true) as RequestListener, auth)],
  ["Hono", (auth) => listen(withResolvedTargets(auth, getRequestListener(honoApp(auth).fetch)), auth)],
  [
    "Hono after a middleware that read the body",
    (auth) => listen(withResolvedTargets(auth, getRequestListener(honoApp(auth, true).fetch)), auth),
  ],
  ["Fastify", fastifyServer],
];
