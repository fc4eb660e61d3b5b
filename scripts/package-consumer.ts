// Type-checked by scripts/check-packages.sh inside the empty project where the packed tarballs are
// installed: the public types must resolve and compile the way a TypeScript user writes them.

import { type AuthClient, AuthClientError, type SignInStep, createAuthClient, memoryTokenStore } from "@portcullis/client";
import {
  type AccessContext,
  AuthError,
  type AuthEvent,
  type Directory,
  ErrorCode,
  type LoginResult,
  type OpenApiDocument,
  createAuth,
  login,
  memoryStorage,
  openApiDocument,
} from "@portcullis/core";
import { runStorageConformance } from "@portcullis/core/testing";
import { authRouter, requireAuth } from "@portcullis/express";
import { portcullis, requireAuth as requireFastifyAuth } from "@portcullis/fastify";
import { type AuthVariables, authApp, requireAuth as requireHonoAuth } from "@portcullis/hono";
import { type KyselyStorage, kyselyStorage, migrate, pgliteStorage } from "@portcullis/kysely";
import { ldapDirectory } from "@portcullis/ldap";
import {
  AuthProvider,
  type SessionState,
  type SignInState,
  type StepUpState,
  useAuthClient,
  useSession,
} from "@portcullis/react";
import {
  type LocalProvider,
  type SoftwareAuthenticator,
  createSoftwareAuthenticator,
  runStorageConformance as runKitConformance,
  startLocalProvider,
  totpCode,
} from "@portcullis/testing";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import type { Kysely } from "kysely";

const auth = createAuth({
  storage: memoryStorage(),
  issuer: "https://api.example.com",
  audience: "example-api",
  secrets: { signing: "s".repeat(43), encryption: "e".repeat(64) },
  ttl: { access: "15m", refresh: "30d" },
});
auth.events.on("login.failed", (event) => {
  const reason: "invalid_credentials" | "disabled" | "no_role" | "passkey_required" = event.reason;
  void reason;
});
auth.events.on("*", (event: AuthEvent) => void event.type);

const app = express();
app.use(authRouter(auth));
app.get("/api/v1/things", requireAuth(auth, { roles: ["admin"] }), (req, res) => {
  const access: AccessContext | undefined = req.auth;
  res.json({ owner: access?.userId });
});

const hono = new Hono<{ Variables: AuthVariables }>();
hono.route("/", authApp(auth));
hono.get("/api/v1/things", requireHonoAuth(auth), (c) => c.json({ owner: c.get("auth").userId }));

const fastify = Fastify();
void fastify.register(portcullis, { auth, prefix: "/api" });
fastify.get("/api/v1/things", { preHandler: requireFastifyAuth(auth, { roles: ["admin"] }) }, async (request) => {
  const access: AccessContext | undefined = request.auth;
  return { owner: access?.userId };
});

export async function signInOnce(): Promise<string> {
  const result: LoginResult = await login(auth, { username: "alice", password: "a long passphrase" });
  if (result.status === "totp_required" || result.status === "enrolment_required") return result.tempToken;
  return result.tokens.accessToken;
}

export const document: OpenApiDocument = openApiDocument(auth, { servers: [{ url: "https://api.example.com" }] });
export const isThrottled = (error: unknown) => error instanceof AuthError && error.code === ErrorCode.TooManyAttempts;
export const conformance = runStorageConformance;
export const directory: Directory = ldapDirectory();

export async function sqlStorage(db: Kysely<Record<string, never>>): Promise<KyselyStorage> {
  const embedded: KyselyStorage = await pgliteStorage({ dataDir: "memory://", prefix: "auth_" });
  await embedded.close();
  const storage = kyselyStorage({ db, dialect: "postgres" });
  const { from, to }: { from: number; to: number } = await migrate(storage);
  void from;
  void to;
  return storage;
}

export async function signInFromAClient(code: () => Promise<string>): Promise<number> {
  const client: AuthClient = createAuthClient({ baseUrl: "https://api.example.com/api/v1", store: memoryTokenStore() });
  client.on("signedOut", ({ reason }) => void reason);
  try {
    const step: SignInStep = await client.login({ username: "alice", password: "a long passphrase" });
    if (step.status === "totp_required") await step.verifyTotp(await code());
    return (await client.fetch("https://api.example.com/api/v1/things")).status;
  } catch (error) {
    if (error instanceof AuthClientError) return error.code ?? error.status;
    throw error;
  }
}

export async function kit(): Promise<{ authenticator: SoftwareAuthenticator; code: string; provider: LocalProvider }> {
  const authenticator = createSoftwareAuthenticator({ origin: "https://app.example.com", algorithm: "EdDSA" });
  const code: string = totpCode({ secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", at: new Date() });
  const provider = await startLocalProvider({ clients: [{ clientId: "app", redirectUris: ["https://app.example.com/cb"] }] });
  return { authenticator, code, provider };
}
export const sameConformance: typeof runStorageConformance = runKitConformance;

/** What a React page reads from the packed hooks' types: the session's user once signed in, a sign-in's step. */
export function sessionLabel(session: SessionState, signIn: SignInState, stepUp: StepUpState | null): string {
  if (stepUp !== null) return `step-up: ${stepUp.required.maxAge ?? 0}`;
  if (session.status === "signedIn") return session.user.username;
  return signIn.step === "totp_required" ? "code" : session.status;
}
export const reactHooks: [typeof AuthProvider, () => AuthClient, typeof useSession] = [AuthProvider, useAuthClient, useSession];
