import {
  type AuthClient,
  AuthClientError,
  type AuthClientEventMap,
  type AuthClientOptions,
  type FetchFunction,
  type Reauthenticate,
  type ReauthenticationRequest,
  createAuthClient,
} from "@portcullis/client";
import type { Auth, AuthConfig, AuthEventOf, AuthEventType, CreateAuthOptions } from "@portcullis/core";
import { afterEach, expect } from "vitest";
import { type TestAuth, type TestUser, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type RunningServer, type StartServer, startExpress5, startFastify, startHono } from "../http/servers.js";

/** The server's `http.statusMode`s the client must work in. */
export const statusModes = ["standard", "always-200"] as const;
export type StatusModeName = (typeof statusModes)[number];

/** Every adapter and status mode the client tests run against: Express 5, Hono and Fastify, each in both modes. */
export const clientTargets = [
  ["Express 5, standard", startExpress5, "standard"],
  ["Express 5, always-200", startExpress5, "always-200"],
  ["Hono, standard", startHono, "standard"],
  ["Hono, always-200", startHono, "always-200"],
  ["Fastify, standard", startFastify, "standard"],
  ["Fastify, always-200", startFastify, "always-200"],
] as const satisfies readonly (readonly [name: string, start: StartServer, statusMode: StatusModeName])[];

/** One request as the client sent it. */
export interface SentRequest {
  method: string;
  /** The path and query. */
  path: string;
}

/** A server on loopback with its test auth, and what its clients sent. */
export interface ClientTestServer extends TestAuth {
  server: RunningServer;
  statusMode: StatusModeName;
  /** `<server>/api/v1`: the clients' base URL. */
  baseUrl: string;
  /** Every request the clients of {@link ClientTestServer.client} sent, in order. */
  sent: SentRequest[];
  /** How many `POST /api/v1/auth/refresh` the clients sent. */
  refreshesSent(): number;
  /** How many requests with this method and path (and query) the clients sent. */
  countSent(method: string, path: string): number;
  /** A client of this server, on the test clock, whose requests are recorded in `sent`. */
  client(options?: AuthClientOptions): AuthClient;
  close(): Promise<void>;
}

/** A fetch that records each request in `sent` before passing it to `inner`. */
export function recordingFetch(sent: SentRequest[], inner: FetchFunction = (input, init) => fetch(input, init)): FetchFunction {
  return (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    sent.push({ method: request.method, path: `${url.pathname}${url.search}` });
    return inner(request);
  };
}

/**
 * Starts an adapter's test app around a test auth (frozen clock, memory storage, passkeys at the
 * test origin, generous throttling) in a status mode, and makes clients of it.
 */
export async function startClientServer(
  start: StartServer,
  statusMode: StatusModeName,
  overrides: Partial<AuthConfig> & CreateAuthOptions = {},
): Promise<ClientTestServer> {
  const testAuth = makeTestAuth({ throttle: generousThrottle, http: { statusMode }, ...overrides });
  const server = await start(testAuth.auth);
  const sent: SentRequest[] = [];
  const baseUrl = `${server.baseUrl}/api/v1`;
  const countSent = (method: string, path: string) =>
    sent.filter((request) => request.method === method && request.path === path).length;
  return {
    ...testAuth,
    server,
    statusMode,
    baseUrl,
    sent,
    refreshesSent: () => countSent("POST", "/api/v1/auth/refresh"),
    countSent,
    client: (options = {}) =>
      createAuthClient({
        baseUrl,
        statusMode,
        now: () => testAuth.clock.now,
        ...options,
        fetch: recordingFetch(sent, options.fetch),
      }),
    close: () => server.close(),
  };
}

/** The envelope of an app route's answer. */
export async function envelopeOf(response: Response): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  return (await response.json()) as { code: number; message: string; data?: Record<string, unknown> };
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<AuthClientError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AuthClientError);
  return error as AuthClientError;
}

/** Every event of a client, in order. */
export function recordEvents(client: AuthClient): Array<[keyof AuthClientEventMap, unknown]> {
  const seen: Array<[keyof AuthClientEventMap, unknown]> = [];
  client.on("signedIn", (detail) => seen.push(["signedIn", detail]));
  client.on("signedOut", (detail) => seen.push(["signedOut", detail]));
  return seen;
}

/** Starts a client test server for one target; every server it started is closed after each test. */
export type ServeClient = (overrides?: Partial<AuthConfig> & CreateAuthOptions) => Promise<ClientTestServer>;

/**
 * Registers an `afterEach` that closes the servers of the test, and answers the function that
 * starts them for a target: call it once in a `describe.each(clientTargets)` body.
 *
 * @example
 * ```ts
 * describe.each(clientTargets)("against %s", (_name, start, statusMode) => {
 *   const serve = servedPerTest(start, statusMode);
 *   it("…", async () => {
 *     const harness = await serve();
 *   });
 * });
 * ```
 */
export function servedPerTest(start: StartServer, statusMode: StatusModeName): ServeClient {
  const running: ClientTestServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((server) => server.close()));
  });
  return async (overrides) => {
    const server = await startClientServer(start, statusMode, overrides);
    running.push(server);
    return server;
  };
}

/**
 * Creates a local user with {@link testPassword} and a client of the server signed in as it.
 *
 * @example
 * ```ts
 * const { client, user } = await signedInClient(harness, "alice");
 * ```
 */
export async function signedInClient(
  harness: ClientTestServer,
  username: string,
  options: AuthClientOptions = {},
): Promise<{ client: AuthClient; user: TestUser }> {
  const user = await createTestUser(harness.auth, username);
  const client = harness.client(options);
  const step = await client.login({ username, password: testPassword });
  expect(step.status).toBe("authenticated");
  return { client, user };
}

/**
 * Moves the test clock past the access tokens' lifetime and the verifier's leeway (AT-3): every
 * access token issued so far is refused with 40101, while the refresh tokens still work.
 *
 * @example
 * ```ts
 * expireAccessTokens(harness);
 * await client.me(); // refreshed once, then answered
 * ```
 */
export function expireAccessTokens(testAuth: TestAuth): void {
  testAuth.clock.advance((testAuth.auth.config.ttl.access + 120) * 1000);
}

/**
 * A `reauthenticate` option that notes every request in `asked` and gives `answer`'s proof.
 *
 * @example
 * ```ts
 * const { reauthenticate, asked } = reauthenticateWith(() => ({ password: testPassword }));
 * const { client } = await signedInClient(harness, "alice", { reauthenticate });
 * ```
 */
export function reauthenticateWith(answer: Reauthenticate): { reauthenticate: Reauthenticate; asked: ReauthenticationRequest[] } {
  const asked: ReauthenticationRequest[] = [];
  return {
    asked,
    reauthenticate: (request) => {
      asked.push(request);
      return answer(request);
    },
  };
}

/**
 * Moves the test clock past the server's `reauthentication.recentSignIn`: the sign-in is no longer
 * recent, and TOTP setup and enable and passkey registration ask for a proof (40001).
 *
 * @example
 * ```ts
 * signInGrowsOld(harness);
 * await client.totp.setup(); // 40001, then reauthenticate is asked
 * ```
 */
export function signInGrowsOld(testAuth: TestAuth): void {
  testAuth.clock.advance((testAuth.auth.config.reauthentication.recentSignInSeconds + 60) * 1000);
}

/**
 * Every event of one type the server's auth emits from now on, in order.
 *
 * @example
 * ```ts
 * const reused = serverEvents(harness.auth, "refresh_token.reused");
 * expect(reused).toEqual([]);
 * ```
 */
export function serverEvents<T extends AuthEventType>(auth: Auth, type: T): AuthEventOf<T>[] {
  const seen: AuthEventOf<T>[] = [];
  auth.events.on(type, (event) => {
    seen.push(event);
  });
  return seen;
}

/** The status an envelope with this HTTP status travels with in a status mode: 200 for every one under `always-200`. */
export const statusIn = (statusMode: StatusModeName, status: number) => (statusMode === "always-200" ? 200 : status);
