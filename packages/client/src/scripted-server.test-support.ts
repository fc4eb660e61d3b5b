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

export const scriptedUser: AuthUser = { id: "user-1", username: "alice", roles: ["user"], totpEnabled: false, createdAt: 0 };

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
