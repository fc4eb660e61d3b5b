import { randomBytes } from "node:crypto";
import {
  type Auth,
  type AuthConfig,
  type RevocationChannel,
  type Storage,
  type TokenSet,
  createApiKey,
  createAuth,
  createOrganization,
  createUser,
  login,
  memoryStorage,
  refresh,
  revocationChannelStatus,
  switchOrganization,
} from "@portcullis/core";
import { authRouter, requireAuth as requireAuthExpress } from "@portcullis/express";
import { authApp, requireAuth as requireAuthHono } from "@portcullis/hono";
import express from "express";
import { Hono } from "hono";
import {
  type BenchSecrets,
  type ServerOptions,
  type ServerReady,
  apiKeyProtectedPath,
  audience,
  issuer,
  orgProtectedPath,
  protectedPath,
  username,
} from "../common.js";
import { hashParameters, listenExpress, listenHono, ok } from "./listen.js";

/** Limits no benchmark reaches, at the default windows, so that every login of the login figures succeeds. */
export const generousThrottle: AuthConfig["throttle"] = {
  account: [{ limit: 1_000_000_000, window: "15m" }],
  ip: [{ limit: 1_000_000_000, window: "15m" }],
};

/**
 * Memory storage, PGlite in memory (`pglite`), or `connectStorage` (pool of 10) migrated on the
 * PostgreSQL or MariaDB URL the options name.
 */
async function storageFor(options: ServerOptions): Promise<Storage> {
  const url = options.postgresUrl ?? options.mysqlUrl;
  if (options.pglite) {
    if (url !== undefined) throw new Error("pglite takes no storage URL");
    const { pgliteStorage } = await import("@portcullis/kysely");
    return pgliteStorage({ dataDir: "memory://" });
  }
  if (url === undefined) return memoryStorage();
  const { connectStorage, migrate } = await import("@portcullis/kysely");
  const storage = await connectStorage({ url });
  await migrate(storage);
  return storage;
}

/** A Redis revocation channel on its own client, on a channel of this server's own. */
async function revocationChannelFor(url: string): Promise<RevocationChannel> {
  const { createClient } = await import("redis");
  const { redisRevocationChannel } = await import("@portcullis/redis");
  const client = createClient({ url });
  client.on("error", (error) => console.error(`redis: ${(error as Error).message}`));
  await client.connect();
  return redisRevocationChannel({ client, channel: `{portcullis-bench-${randomBytes(6).toString("hex")}}:revocations` });
}

/** Signs the user in `count` times, four at once (the hasher's default concurrency): one session each. */
async function signInMany(auth: Auth, password: string, count: number): Promise<TokenSet[]> {
  const sessions: TokenSet[] = [];
  while (sessions.length < count) {
    const batch = Array.from({ length: Math.min(4, count - sessions.length) }, () => login(auth, { username, password }));
    for (const result of await Promise.all(batch)) {
      if (result.status !== "authenticated") throw new Error(`login answered ${result.status}`);
      sessions.push(result.tokens);
    }
  }
  return sessions;
}

/**
 * Distinct valid access tokens: sessions of 100 tokens each, made by refreshing in a chain; a
 * refresh issues a new access token and leaves the earlier ones of its session valid.
 */
async function mintAccessTokens(auth: Auth, password: string, count: number): Promise<string[]> {
  const perSession = 100;
  const tokens: string[] = [];
  for (const session of await signInMany(auth, password, Math.ceil(count / perSession))) {
    tokens.push(session.accessToken);
    let refreshToken = session.refreshToken;
    for (let i = 1; i < perSession; i++) {
      const next = await refresh(auth, { refreshToken });
      tokens.push(next.accessToken);
      refreshToken = next.refreshToken;
    }
  }
  return tokens.slice(0, count);
}

/** The `sid` claim of an access token, read without verifying (the server just issued it). */
function sessionIdOf(accessToken: string): string {
  const payload = JSON.parse(Buffer.from(accessToken.split(".")[1] ?? "", "base64url").toString("utf8")) as { sid?: unknown };
  if (typeof payload.sid !== "string") throw new Error("the access token has no sid");
  return payload.sid;
}

/**
 * Makes the user the owner of a new organization and switches `session` to it: answers the
 * session's new access token, which carries `org` and `org_roles` (figure 14).
 */
async function switchedToOrganization(auth: Auth, userId: string, session: TokenSet): Promise<string> {
  const organization = await createOrganization(auth, { userId, name: "Bench Org" });
  const switched = await switchOrganization(auth, {
    userId,
    sessionId: sessionIdOf(session.accessToken),
    orgId: organization.id,
  });
  if (switched.org?.id !== organization.id) throw new Error("the session did not switch to the organization");
  return switched.accessToken;
}

/**
 * Portcullis with the default configuration (generous throttle limits when asked), its routes
 * mounted as the adapters' docs show, and the protected route behind `requireAuth`.
 */
export async function startPortcullis(
  framework: "express" | "hono",
  secrets: BenchSecrets,
  options: ServerOptions,
): Promise<ServerReady> {
  const { auth, ready } = await portcullisInstance(secrets, options);
  let port: number;
  if (framework === "express") {
    const app = express();
    app.use(authRouter(auth));
    app.get(protectedPath, requireAuthExpress(auth), (_req, res) => {
      res.json(ok);
    });
    if (options.organization) {
      app.get(orgProtectedPath, requireAuthExpress(auth, { org: true }), (_req, res) => {
        res.json(ok);
      });
    }
    if (options.apiKey) {
      app.get(apiKeyProtectedPath, requireAuthExpress(auth, { credentials: "any" }), (_req, res) => {
        res.json(ok);
      });
    }
    port = await listenExpress(app);
  } else {
    const app = new Hono();
    app.route("/", authApp(auth));
    app.get(protectedPath, requireAuthHono(auth), (c) => c.json(ok));
    port = await listenHono(app);
  }
  return { port, ...ready };
}

/**
 * The auth instance every Portcullis server uses, with the bench user and the credentials the
 * options ask for: everything but the framework and the port.
 */
export async function portcullisInstance(
  secrets: BenchSecrets,
  options: ServerOptions,
): Promise<{ auth: Auth; ready: Omit<ServerReady, "port"> }> {
  const auth = createAuth({
    storage: await storageFor(options),
    ...(options.tokenStateCacheSeconds ? { tokenStateCacheSeconds: options.tokenStateCacheSeconds } : {}),
    ...(options.revocationRedisUrl ? { revocationChannel: await revocationChannelFor(options.revocationRedisUrl) } : {}),
    issuer,
    audience,
    secrets: { signing: secrets.BENCH_SIGNING_SECRET, encryption: randomBytes(32).toString("base64url") },
    ...(options.generousThrottle ? { throttle: generousThrottle } : {}),
    ...(options.sweep === false ? { sweepInterval: false as const } : {}),
    ...(options.organization ? { organizations: { enabled: true } } : {}),
    ...(options.apiKey ? { apiKeys: { enabled: true } } : {}),
  });
  if (options.revocationRedisUrl) {
    while (revocationChannelStatus(auth) !== "connected") await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const roles = options.admin ? ["admin"] : ["user"];
  const user = await createUser(auth, { username, password: secrets.BENCH_PASSWORD, roles });
  const storedHash = (await auth.storage.users.findById(user.id))?.passwordHash;
  const [session, withoutOrganization] = await signInMany(auth, secrets.BENCH_PASSWORD, options.organization ? 2 : 1);
  const bearer = options.organization && session ? await switchedToOrganization(auth, user.id, session) : session?.accessToken;
  const accessTokens = await mintAccessTokens(auth, secrets.BENCH_PASSWORD, options.accessTokens ?? 0);
  const apiKey =
    options.apiKey && session
      ? await createApiKey(auth, {
          userId: user.id,
          sessionId: sessionIdOf(session.accessToken),
          password: secrets.BENCH_PASSWORD,
          name: "bench",
        })
      : undefined;
  const refreshTokens = (await signInMany(auth, secrets.BENCH_PASSWORD, options.refreshTokens ?? 0)).map((s) => s.refreshToken);
  return {
    auth,
    ready: {
      authHeaders: { authorization: `Bearer ${bearer}` },
      ...(apiKey ? { apiKeyHeaders: { authorization: `Bearer ${apiKey.key}` } } : {}),
      ...(withoutOrganization ? { noOrgAuthHeaders: { authorization: `Bearer ${withoutOrganization.accessToken}` } } : {}),
      accessTokens,
      refreshTokens,
      passwordHashParameters: storedHash ? hashParameters(storedHash) : undefined,
    },
  };
}
