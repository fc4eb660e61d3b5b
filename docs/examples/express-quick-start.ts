import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import express, { type Express } from "express";

/** Builds the app without listening: `createApp().app.listen(3000)`. */
export function createApp(): { app: Express; auth: Auth } {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: process.env.AUTH_SIGNING_SECRET ?? "",
      encryption: process.env.AUTH_ENCRYPTION_KEY ?? "",
    },
  });

  const app = express();
  app.use(authRouter(auth)); // POST /api/v1/auth/login, /refresh, /2fa/…, GET /api/v1/auth/me
  app.get("/api/v1/things", requireAuth(auth), (req, res) => {
    res.json({ owner: req.auth?.userId });
  });
  app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), (_req, res) => {
    res.status(204).end();
  });
  return { app, auth };
}
