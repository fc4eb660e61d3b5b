import {
  type AuthClient,
  AuthClientError,
  type AuthClientEventMap,
  type AuthClientOptions,
  type FetchFunction,
  createAuthClient,
} from "@portcullis/client";
import type { AuthConfig } from "@portcullis/core";
import { expect } from "vitest";
import { type TestAuth, generousThrottle, makeTestAuth } from "../fixtures/auth.js";
import { type RunningServer, type StartServer, startExpress5, startHono } from "../http/servers.js";

/** The server's `http.statusMode`s the client must work in. */
export const statusModes = ["standard", "always-200"] as const;
export type StatusModeName = (typeof statusModes)[number];

/** Every adapter and status mode the client tests run against: Express 5 and Hono, each in both modes. */
export const clientTargets = [
  ["Express 5, standard", startExpress5, "standard"],
  ["Express 5, always-200", startExpress5, "always-200"],
  ["Hono, standard", startHono, "standard"],
  ["Hono, always-200", startHono, "always-200"],
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
  overrides: Partial<AuthConfig> = {},
): Promise<ClientTestServer> {
  const testAuth = makeTestAuth({ throttle: generousThrottle, http: { statusMode }, ...overrides });
  const server = await start(testAuth.auth);
  const sent: SentRequest[] = [];
  const baseUrl = `${server.baseUrl}/api/v1`;
  return {
    ...testAuth,
    server,
    statusMode,
    baseUrl,
    sent,
    refreshesSent: () => sent.filter(({ method, path }) => method === "POST" && path === "/api/v1/auth/refresh").length,
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
