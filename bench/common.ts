// What the orchestrator (run.ts) and the server processes (server.ts) agree on.

/** The protected GET route every server of figures 1–3, 5 and 11 answers `{"ok":true}` on. */
export const protectedPath = "/api/v1/things";
/** Portcullis' default `http.basePath` is `/api/v1`. */
export const loginPath = "/api/v1/auth/login";
export const refreshPath = "/api/v1/auth/refresh";
/** Bare Express: a JSON POST answering a body shaped like a refresh answer, and raw argon2id `verify` of one stored hash. */
export const jsonPostPath = "/api/v1/json";
export const argon2LoginPath = "/api/v1/argon2-login";
/** Figure 14: the protected route that also asks for an active organization (`requireAuth(auth, { org: true })`). */
export const orgProtectedPath = "/api/v1/org-things";
/** Figure 15: the protected route that accepts API keys too (`requireAuth(auth, { credentials: "any" })`). */
export const apiKeyProtectedPath = "/api/v1/key-things";
/** The administrators' user list, first page (figure 10). */
export const adminUsersPath = "/api/v1/auth/admin/users";

export const issuer = "https://api.example.com";
export const audience = "bench-api";
export const username = "bench-user";

/** The kinds of server `server.ts` runs, one per process. */
export const serverModes = [
  "bare-express",
  "bare-hono",
  "portcullis-express",
  "portcullis-hono",
  "bare-fastify",
  "portcullis-fastify",
  "express-jwt-keyobject",
  "express-jwt-string",
  "passport-jwt-keyobject",
  "passport-jwt-string",
  "better-auth-cookie",
  "better-auth-bearer",
] as const;
export type ServerMode = (typeof serverModes)[number];

/** Settings of one server process, passed as JSON on its command line. */
export interface ServerOptions {
  /**
   * Portcullis storage: memory (default), or the URL of a PostgreSQL schema for `connectStorage`.
   * Bare Express: the schema whose `bench_rows` its JSON POST updates one row of (figure 7's ceiling).
   */
  postgresUrl?: string;
  /**
   * Portcullis storage: the URL (`mysql://`) of a MariaDB or MySQL database for `connectStorage`.
   * Bare Express: the database whose `bench_rows` its JSON POST updates one row of (the MariaDB
   * ceiling of figure 7). Not with `postgresUrl`.
   */
  mysqlUrl?: string;
  /** Portcullis storage: PGlite in memory, in the server process (`pgliteStorage({ dataDir: "memory://" })`). Not with a URL. */
  pglite?: boolean;
  /**
   * Portcullis (Express): organizations on; the bench user owns one and its session (`authHeaders`)
   * has it active, so the access token carries `org`; `orgProtectedPath` is guarded by
   * `requireAuth(auth, { org: true })` beside `protectedPath` (figure 14). `noOrgAuthHeaders`: a
   * session of the same user without an organization.
   */
  organization?: boolean;
  /**
   * Portcullis (Express): API keys on (`apiKeys: { enabled: true }`); the bench user makes a key in
   * the session of `authHeaders` (`apiKeyHeaders`), and `apiKeyProtectedPath` is guarded by
   * `requireAuth(auth, { credentials: "any" })` beside `protectedPath` (figure 15).
   */
  apiKey?: boolean;
  /** Bare Express with `postgresUrl` or `mysqlUrl`: its pool's size (default 10). */
  pool?: number;
  /** Portcullis: throttle limits no benchmark reaches (for the login figures) instead of the defaults. */
  generousThrottle?: boolean;
  /** Portcullis: distinct valid access tokens to mint before listening. */
  accessTokens?: number;
  /** Portcullis: unused refresh tokens of distinct sessions to mint before listening. */
  refreshTokens?: number;
  /** Portcullis: the bench user holds the administrator role, so `authHeaders` also list users (figure 10). */
  admin?: boolean;
  /** Portcullis: false turns the sweep's timer off (`sweepInterval: false`), so only a figure's own sweep deletes rows. */
  sweep?: boolean;
  /** Portcullis: `tokenStateCacheSeconds` (default 0: the token state read from storage on every request). */
  tokenStateCacheSeconds?: number;
  /** Portcullis: a revocation channel (`redisRevocationChannel`) on the Redis at this URL; the server waits until it is connected. */
  revocationRedisUrl?: string;
}

/** The line a server prints on stdout once it listens: `BENCH_READY <json>`. */
export const readyMarker = "BENCH_READY ";

/** What a server reports once it listens. */
export interface ServerReady {
  port: number;
  /** Headers that let a request through the protected route, when the server made its own credentials. */
  authHeaders?: Record<string, string>;
  /** With `organization`: the headers of a session without an active organization, which `orgProtectedPath` refuses (40300). */
  noOrgAuthHeaders?: Record<string, string>;
  /** With `apiKey`: the bench user's API key as a bearer, which `apiKeyProtectedPath` accepts and `protectedPath` refuses. */
  apiKeyHeaders?: Record<string, string>;
  accessTokens?: string[];
  refreshTokens?: string[];
  /** The `$argon2id$v=19$m=…,t=…,p=…` prefix of the stored password hash, where there is one. */
  passwordHashParameters?: string;
}

/** The environment every server process gets from the orchestrator. */
export interface BenchSecrets {
  /** HS256 secret shared by Portcullis and the JWT peers, so they verify the same token. */
  BENCH_SIGNING_SECRET: string;
  /** The password of {@link username} on every server that has one. */
  BENCH_PASSWORD: string;
}
