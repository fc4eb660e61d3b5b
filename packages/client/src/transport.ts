import { AuthClientError } from "./errors.js";

/** A `fetch` function: the global one by default, or one of your own (a cookie jar in Node, a test double). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** One call of a Portcullis route. */
export interface EnvelopeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path under the base URL, with its query: `/auth/login`. */
  path: string;
  /**
   * Sent as JSON. POST and PUT always send a JSON body, `{}` when none is given (HTTP-2); DELETE
   * sends one only when given (a re-authentication proof).
   */
  body?: unknown;
  /** Sent as `Authorization: Bearer …`. */
  accessToken?: string | null;
  headers?: Record<string, string>;
  /** `"include"` for the OAuth routes, whose binding cookie must travel. */
  credentials?: RequestInit["credentials"];
}

/** A Portcullis envelope as it arrived, with what its HTTP answer said about it. */
export interface EnvelopeAnswer {
  code: number;
  message: string;
  data: unknown;
  status: number;
  requestId?: string;
  retryAfter?: number;
}

/**
 * Where the server puts the refresh token: `"body"`, the contract's token set (every client before
 * cookie mode), or `"cookie"`, an HttpOnly cookie of the API's origin that no script can read
 * (cookie mode; the server's CK-1 … CK-6).
 */
export type RefreshTokenDelivery = "body" | "cookie";

/** The header by which a request asks the server for cookie mode. */
export const tokenDeliveryHeader = "x-portcullis-token-delivery";

/** Sends requests to the Portcullis routes under one base URL and reads their envelopes. */
export interface Transport {
  /** The base URL without a trailing slash: `/api/v1`, or `https://api.example.com/api/v1`. */
  readonly baseUrl: string;
  readonly fetch: FetchFunction;
  /** Where this client has the server put the refresh token. */
  readonly refreshTokenIn: RefreshTokenDelivery;
  /**
   * Sends one request and reads its envelope, whatever its code.
   *
   * @throws {AuthClientError} `network` when no answer came, `invalid_response` when the answer is not an envelope.
   */
  send(request: EnvelopeRequest): Promise<EnvelopeAnswer>;
}

/**
 * Makes the {@link Transport} of a base URL. The server marks every answer `Cache-Control: no-store`,
 * so no cache keeps one. With `refreshTokenIn` `"cookie"` every request asks for cookie mode
 * (`X-Portcullis-Token-Delivery: cookie`) and carries the origin's cookies (`credentials:
 * "same-origin"` unless the request says otherwise).
 *
 * @example
 * ```ts
 * const transport = createTransport("/api/v1", (input, init) => globalThis.fetch(input, init));
 * const answer = await transport.send({ method: "GET", path: "/auth/oauth/providers" });
 * ```
 */
export function createTransport(
  baseUrl: string,
  fetchFunction: FetchFunction,
  refreshTokenIn: RefreshTokenDelivery = "body",
): Transport {
  const base = baseUrl.replace(/\/+$/, "");
  const inCookie = refreshTokenIn === "cookie";
  return {
    baseUrl: base,
    fetch: fetchFunction,
    refreshTokenIn,
    async send(request) {
      const headers: Record<string, string> = {
        accept: "application/json",
        ...(inCookie ? { [tokenDeliveryHeader]: "cookie" } : {}),
        ...request.headers,
      };
      const credentials = request.credentials ?? (inCookie ? "same-origin" : undefined);
      const hasBody = request.method === "POST" || request.method === "PUT" || request.body !== undefined;
      if (hasBody) headers["content-type"] = "application/json";
      if (request.accessToken) headers.authorization = `Bearer ${request.accessToken}`;
      let response: Response;
      try {
        response = await fetchFunction(`${base}${request.path}`, {
          method: request.method,
          headers,
          ...(hasBody ? { body: JSON.stringify(request.body ?? {}) } : {}),
          ...(credentials ? { credentials } : {}),
        });
      } catch (cause) {
        throw networkError(cause);
      }
      return readEnvelope(response);
    },
  };
}

/** The error for a request that got no answer. The message names no URL: an OAuth callback's holds a code. */
export function networkError(cause: unknown): AuthClientError {
  return new AuthClientError("The server could not be reached", { kind: "network", cause });
}

function isEnvelope(value: unknown): value is { code: number; message: string; data?: unknown; requestId?: unknown } {
  const { code, message } = (value ?? {}) as Record<string, unknown>;
  return Number.isInteger(code) && typeof message === "string";
}

/** The seconds of a `Retry-After` header, when it holds a number of seconds. */
function retryAfterSeconds(header: string | null): number | undefined {
  return header !== null && /^\d+$/.test(header) ? Number(header) : undefined;
}

/**
 * Reads the envelope of an answer, with its status, `requestId` and `Retry-After`.
 *
 * @throws {AuthClientError} `invalid_response` when the body is not JSON or not an envelope,
 * `network` when the body could not be read to its end.
 * @example
 * ```ts
 * const answer = await readEnvelope(await fetch("/api/v1/auth/me", { headers }));
 * if (answer.code === 40101) …
 * ```
 */
export async function readEnvelope(response: Response): Promise<EnvelopeAnswer> {
  let text: string;
  try {
    text = await response.text();
  } catch (cause) {
    throw networkError(cause);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON, so not an envelope: `parsed` stays undefined.
  }
  if (!isEnvelope(parsed)) {
    throw new AuthClientError(`The server answered HTTP ${response.status} without a Portcullis envelope`, {
      kind: "invalid_response",
      status: response.status,
    });
  }
  return {
    code: parsed.code,
    message: parsed.message,
    data: parsed.data,
    status: response.status,
    requestId: typeof parsed.requestId === "string" ? parsed.requestId : undefined,
    retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
  };
}

/**
 * The {@link AuthClientError} of an envelope that is not a success.
 *
 * @example
 * ```ts
 * if (answer.code !== 0) throw answerError(answer);
 * ```
 */
export function answerError(answer: EnvelopeAnswer): AuthClientError {
  return new AuthClientError(answer.message, {
    kind: "server",
    code: answer.code,
    status: answer.status,
    requestId: answer.requestId,
    retryAfter: answer.retryAfter,
    ...(answer.data === undefined || answer.data === null ? {} : { data: answer.data }),
  });
}

/**
 * The `data` of a successful answer.
 *
 * @throws {AuthClientError} the answer's error when its code is not 0.
 * @example
 * ```ts
 * const providers = dataOf<OAuthProviderInfo[]>(await transport.send({ method: "GET", path: "/auth/oauth/providers" }));
 * ```
 */
export function dataOf<T>(answer: EnvelopeAnswer): T {
  if (answer.code !== 0) throw answerError(answer);
  return answer.data as T;
}

/**
 * The error for an answer whose `data` lacks what the contract promises: a server of another
 * version, or not Portcullis.
 *
 * @example
 * ```ts
 * if (typeof data?.tempToken !== "string") throw malformedAnswer(answer);
 * ```
 */
export function malformedAnswer(answer: EnvelopeAnswer): AuthClientError {
  return new AuthClientError("The server's answer lacks what the Portcullis contract promises", {
    kind: "invalid_response",
    code: answer.code,
    status: answer.status,
  });
}
