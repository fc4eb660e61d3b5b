import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { frameworkErrorHandler, portcullis, requireAuth } from "@portcullis/fastify";
import Fastify, { type FastifyInstance } from "fastify";

/** Builds the app without listening: `await (await createApp()).app.listen({ port: 3000 })`. */
export async function createApp(): Promise<{ app: FastifyInstance; auth: Auth }> {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: process.env.AUTH_SIGNING_SECRET ?? "",
      encryption: process.env.AUTH_ENCRYPTION_KEY ?? "",
    },
  });

  // frameworkErrors: what Fastify's router refuses before any plugin runs (`/api/v1/auth/%ff`)
  // is answered by Portcullis on its paths, in its envelope, as on the other adapters.
  const app = Fastify({ frameworkErrors: frameworkErrorHandler(auth) });
  await app.register(portcullis, { auth }); // POST /api/v1/auth/login, /refresh, /2fa/…, GET /api/v1/auth/me
  app.get("/api/v1/things", { preHandler: requireAuth(auth) }, async (request) => ({ owner: request.auth?.userId }));
  app.delete("/api/v1/things/:id", { preHandler: requireAuth(auth, { roles: ["admin"] }) }, async (_request, reply) => {
    await reply.code(204).send();
  });
  return { app, auth };
}
