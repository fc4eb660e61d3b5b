import { portcullis, requireAuth } from "@portcullis/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import { type BenchSecrets, type ServerOptions, type ServerReady, protectedPath } from "../common.js";
import { ok } from "./listen.js";
import { portcullisInstance } from "./portcullis.js";

/** Serves a Fastify app on a random port of 127.0.0.1 and returns the port. */
async function listenFastify(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("Fastify listens on no TCP port");
  return address.port;
}

/** Bare Fastify 5 with its defaults: the protected route with no check. */
export async function startBareFastify(): Promise<ServerReady> {
  const app = Fastify();
  app.get(protectedPath, async () => ok);
  return { port: await listenFastify(app) };
}

/**
 * Portcullis on Fastify 5, as its adapter's docs show: the plugin registered, and the protected
 * route behind `requireAuth` as its `preHandler`.
 */
export async function startPortcullisFastify(secrets: BenchSecrets, options: ServerOptions): Promise<ServerReady> {
  const { auth, ready } = await portcullisInstance(secrets, options);
  const app = Fastify();
  await app.register(portcullis, { auth });
  app.get(protectedPath, { preHandler: requireAuth(auth) }, async () => ok);
  return { port: await listenFastify(app), ...ready };
}
