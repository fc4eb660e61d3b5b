import { randomBytes } from "node:crypto";
import { betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { fromNodeHeaders, toNodeHandler } from "better-auth/node";
import { bearer } from "better-auth/plugins/bearer";
import express from "express";
import { type BenchSecrets, type ServerReady, protectedPath, username } from "../common.js";
import { listenExpress, ok } from "./listen.js";

/**
 * Better Auth with its memory adapter and email-and-password sign-in, mounted on Express as its
 * docs show; the protected route asks `auth.api.getSession`. The session travels in its cookie,
 * or as `Authorization: Bearer` through the bearer plugin.
 */
export async function startBetterAuth(transport: "cookie" | "bearer", secrets: BenchSecrets): Promise<ServerReady> {
  const auth = betterAuth({
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    secret: randomBytes(32).toString("base64url"),
    baseURL: "http://127.0.0.1",
    emailAndPassword: { enabled: true },
    plugins: transport === "bearer" ? [bearer()] : [],
  });
  const signedUp = await auth.api.signUpEmail({
    body: { email: `${username}@example.com`, password: secrets.BENCH_PASSWORD, name: username },
    returnHeaders: true,
  });
  const app = express();
  app.all("/api/auth/*splat", toNodeHandler(auth));
  app.get(protectedPath, async (req, res) => {
    const session = await auth.api.getSession({ headers: fromNodeHeaders(req.headers) });
    if (session) res.json(ok);
    else res.status(401).json({ ok: false });
  });
  const cookie = signedUp.headers.get("set-cookie")?.split(";", 1)[0];
  const bearerToken = signedUp.headers.get("set-auth-token");
  if (!cookie) throw new Error("Better Auth's sign-up set no session cookie");
  if (transport === "bearer" && !bearerToken) throw new Error("Better Auth's bearer plugin gave no set-auth-token");
  return {
    port: await listenExpress(app),
    authHeaders: transport === "cookie" ? { cookie } : { authorization: `Bearer ${bearerToken}` },
  };
}
