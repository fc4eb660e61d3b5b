import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { authApp, requireAuth } from "@portcullis/hono";
import { Hono } from "hono";

/** Builds the app without listening: `serve({ fetch: createApp().app.fetch, port: 3000 })`. */
export function createApp(): { app: Hono; auth: Auth } {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: process.env.AUTH_SIGNING_SECRET ?? "",
      encryption: process.env.AUTH_ENCRYPTION_KEY ?? "",
    },
  });

  const app = new Hono();
  app.route("/", authApp(auth)); // POST /api/v1/auth/login, /refresh, /2fa/…, GET /api/v1/auth/me
  app.get("/api/v1/things", requireAuth(auth), (c) => c.json({ owner: c.get("auth").userId }));
  app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), (c) => c.body(null, 204));
  return { app, auth };
}
