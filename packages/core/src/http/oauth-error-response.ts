import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { responseHeaders } from "./envelope.js";
import type { HttpResponse } from "./types.js";

/** The `error` values a route with `errors: "oauth"` answers (RFC 6749 §5.2, and §4.1.2.1's two for the server's own state). */
export type OAuthErrorName =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "server_error"
  | "temporarily_unavailable";

const namedByFlows = new Set<string>([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
]);

/** The headers of every OAuth answer: never cached (RFC 6749 §5.1). */
export function oauthHeaders(): Record<string, string> {
  return { ...responseHeaders("no-store"), pragma: "no-cache" };
}

/**
 * The RFC 6749 error and HTTP status of a refusal: the `data.error` a flow named (`tokenError`),
 * else by its business code: 40001/40002 `invalid_request` 400; 40101 `invalid_client`; 42900
 * `temporarily_unavailable` 429 (the request is well formed and succeeds after `Retry-After`, so
 * not `invalid_request`, which would tell the client to change it); 50300 `temporarily_unavailable`
 * 503; 50000 and anything unexpected `server_error` 500; any other `invalid_request` 400.
 * `invalid_client` is 401 when the client authenticated with `Authorization: Basic` (§5.2), else 400.
 */
function oauthErrorOf(error: unknown, basicUsed: boolean): { status: number; name: OAuthErrorName } {
  if (!(error instanceof AuthError)) return { status: 500, name: "server_error" };
  const named = (error.data as { error?: unknown } | undefined)?.error;
  const name: OAuthErrorName =
    typeof named === "string" && namedByFlows.has(named)
      ? (named as OAuthErrorName)
      : error.code === ErrorCode.InvalidToken
        ? "invalid_client"
        : error.code === ErrorCode.TooManyAttempts || error.code === ErrorCode.Unavailable
          ? "temporarily_unavailable"
          : error.code === ErrorCode.Internal
            ? "server_error"
            : "invalid_request";
  if (name === "invalid_client") return { status: basicUsed ? 401 : 400, name };
  if (error.code === ErrorCode.TooManyAttempts) return { status: 429, name };
  if (error.code === ErrorCode.Unavailable) return { status: 503, name };
  if (name === "server_error") return { status: 500, name };
  return { status: 400, name };
}

/**
 * The answer of a refused request on a route with `errors: "oauth"` (the token endpoint): RFC 6749
 * §5.2's `{ error, error_description }`, never the envelope, whatever `http.statusMode` says (an
 * OAuth client reads the status). The description is the refusal's safe message; an unexpected
 * error is `server_error` with a fixed text, reported to `onInternalError` under the id `report`
 * gives. `invalid_client` after `Authorization: Basic` is 401 with `WWW-Authenticate: Basic
 * realm="<issuer>"`; a throttled request carries `Retry-After`.
 */
export function oauthErrorResponse(
  auth: Auth,
  error: unknown,
  basicUsed: boolean,
  report: (error: unknown) => string,
): HttpResponse {
  const { status, name } = oauthErrorOf(error, basicUsed);
  const safe = error instanceof AuthError && error.code < 50000;
  if (!safe) report(error);
  const text = safe ? error.message : name === "temporarily_unavailable" ? "Try again later" : "Internal error";
  // RFC 6749 §5.2: error_description is of %x20-21 / %x23-5B / %x5D-7E only.
  const description = text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "?");
  const headers = oauthHeaders();
  if (status === 401) headers["www-authenticate"] = `Basic realm="${auth.config.issuer.replace(/["\\]/g, "")}"`;
  if (status === 429) headers["retry-after"] = String((error as AuthError).retryAfterSeconds ?? 1);
  return { status, headers, body: JSON.stringify({ error: name, error_description: description }) };
}

/** Whether a request authenticated its client with `Authorization: Basic` (the scheme is case-insensitive, RFC 9110 §11.1). */
export const usesBasicAuthentication = (authorization: string | undefined): boolean =>
  authorization !== undefined && /^basic(?: |$)/i.test(authorization.trim());
