import { type AuthClientOptions, createAuthClient } from "./client.js";
import type { SignOutReason } from "./events.js";
import type { FetchFunction } from "./transport.js";
import type { AuthUser } from "./types.js";

/** One request the client sent to a {@link scriptedServer}. */
export interface ScriptedRequest {
  /** The whole URL. */
  url: string;
  method: string;
  /** The path under the base URL, with its query. */
  path: string;
  authorization: string | null;
  headers: Headers;
  credentials: string;
  body: unknown;
}

/** What a script answers: an envelope with its HTTP status (200 by default), or a Response as it is. */
export type ScriptedAnswer = { code: number; message?: string; data?: unknown; status?: number; requestId?: string } | Response;

/** The base URL a scripted server is reached at. */
export const scriptedBaseUrl = "https://api.example.com/api/v1";

export const scriptedUser: AuthUser = {
  id: "user-1",
  username: "alice",
  roles: ["user"],
  totpEnabled: false,
  email: null,
  emailVerified: false,
  createdAt: 0,
};

/** The data of a completed sign-in, numbered so each one's tokens differ. */
export function tokenSet(n: number, expiresIn = 900) {
  return { accessToken: `access-${n}`, refreshToken: `refresh-${n}`, tokenType: "Bearer", expiresIn, user: scriptedUser };
}

/**
 * A `fetch` that answers every request of a client from `script`, without a network, and records
 * what was sent: for unit tests of the client's handling of answers the real server rarely gives.
 */
export function scriptedServer(script: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>): {
  fetch: FetchFunction;
  sent: ScriptedRequest[];
  sentTo(path: string): ScriptedRequest[];
} {
  const sent: ScriptedRequest[] = [];
  const fetch: FetchFunction = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const text = await request.text();
    const recorded: ScriptedRequest = {
      url: request.url,
      method: request.method,
      path: `${url.pathname.slice(new URL(scriptedBaseUrl).pathname.length)}${url.search}`,
      authorization: request.headers.get("authorization"),
      headers: request.headers,
      credentials: request.credentials,
      body: text === "" ? undefined : JSON.parse(text),
    };
    sent.push(recorded);
    const answer = await script(recorded);
    if (answer instanceof Response) return answer;
    const { status = 200, requestId, ...envelope } = answer;
    return new Response(JSON.stringify({ message: "OK", ...envelope, ...(requestId ? { requestId } : {}) }), {
      status,
      headers: { "content-type": "application/json" },
    });
  };
  return { fetch, sent, sentTo: (path) => sent.filter((request) => request.path === path) };
}

/**
 * A client of a scripted server, signed in: its login answers {@link tokenSet} 1 (with
 * `accessToken` instead when given), `route` answers every other request. Records the reasons of
 * its `signedOut` events.
 *
 * @example
 * ```ts
 * const { client, server, signedOut } = await signedInScriptedClient(() => ({ code: 0, data: { ended: 1 } }));
 * ```
 */
export async function signedInScriptedClient(
  route: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
  { accessToken, ...options }: AuthClientOptions & { accessToken?: string } = {},
) {
  const server = scriptedServer((request) =>
    request.path === "/auth/login"
      ? { code: 0, data: { ...tokenSet(1), ...(accessToken ? { accessToken } : {}) } }
      : route(request),
  );
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, ...options, fetch: server.fetch });
  const signedOut: SignOutReason[] = [];
  client.on("signedOut", ({ reason }) => signedOut.push(reason));
  await client.login({ username: "alice", password: "pw" });
  return { client, server, signedOut };
}
