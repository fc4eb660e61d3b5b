import { type Auth, createAuth } from "@portcullis/core";
import { authRouter, requireAuth } from "@portcullis/express";
import { type KyselyStorage, pgliteStorage } from "@portcullis/kysely";
import express, { type Express } from "express";

/**
 * Builds the app without listening. Users and sessions are kept in embedded PostgreSQL (PGlite) in
 * `dataDir`, which survives restarts; its tables are created or brought up to date as it opens.
 */
export async function createApp(dataDir: string): Promise<{ app: Express; auth: Auth; storage: KyselyStorage }> {
  const storage = await pgliteStorage({ dataDir });
  const auth = createAuth({
    storage,
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
  return { app, auth, storage };
}
