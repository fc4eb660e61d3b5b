import { type Server, createServer } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { Auth } from "@portcullis/core";
import { withResolvedTargets } from "@portcullis/hono";
import type { Hono } from "hono";

/** Serves the app on Node, not listening yet: `serveOnNode(createApp()).listen(3000)`. */
export function serveOnNode({ app, auth }: { app: Hono; auth: Auth }): Server {
  // @hono/node-server refuses some request targets with an empty 400 before Hono runs
  // (`/api/v1/auth\login`, `HTTPS://HOST/api/v1/auth/me`): on Portcullis's paths, they reach
  // Hono as Portcullis reads them, and get its envelope as on the other adapters.
  return createServer(withResolvedTargets(auth, getRequestListener(app.fetch)));
}
