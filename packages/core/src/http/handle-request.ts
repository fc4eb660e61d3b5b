import type { Auth } from "../auth.js";
import { base64url } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode, defaultMessages, httpStatusFor } from "../errors/codes.js";
import { type AccessContext, verifyAccessToken } from "../flows/verify-access-token.js";
import { readJsonBody } from "./body.js";
import { resolveClientAddress } from "./client-address.js";
import { type Route, type RouteResult, routes } from "./routes.js";
import type { Envelope, HttpRequest, HttpResponse } from "./types.js";

const defaultBodyLimit = 64 * 1024;

/**
 * Collapses repeated slashes and drops a trailing one, so `//api/v1/auth//login/` is
 * `/api/v1/auth/login` for matching (RL-3).
 */
export function normalizePath(url: string): string {
  const path = url.split("?", 1)[0] as string;
  const collapsed = path.replace(/\/{2,}/g, "/");
  return collapsed.length > 1 && collapsed.endsWith("/") ? collapsed.slice(0, -1) : collapsed;
}

/** The client address of a request, resolved through the trusted-proxy setting (RL-3). */
export function clientAddressOf(auth: Auth, request: Pick<HttpRequest, "header" | "peerAddress">): string | undefined {
  return resolveClientAddress(request.peerAddress, request.header("x-forwarded-for"), auth.proxyTrust);
}

/** The headers every auth response carries (HTTP-4). */
function responseHeaders(cacheControl = "no-store"): Record<string, string> {
  return {
    "content-type": "application/json; charset=utf-8",
    "cache-control": cacheControl,
    "x-content-type-options": "nosniff",
  };
}

/** Builds the envelope response for a business code, honouring `statusMode`. */
export function envelopeResponse(auth: Auth, envelope: Envelope, retryAfterSeconds?: number): HttpResponse {
  const headers = responseHeaders();
  if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds);
  const status = auth.config.statusMode === "always-200" ? 200 : httpStatusFor(envelope.code);
  return { status, headers, body: JSON.stringify(envelope) };
}

/**
 * The response for an error thrown while serving a request (HTTP-5): an {@link AuthError}
 * keeps its code and safe message; anything else becomes 50000 with a request id and no
 * internal text, and is handed to `onInternalError`.
 */
export function errorResponse(auth: Auth, error: unknown): HttpResponse {
  if (error instanceof AuthError) {
    const envelope: Envelope = { code: error.code, message: error.message };
    if (error.code >= 50000) envelope.requestId = reportInternalError(auth, error);
    return envelopeResponse(
      auth,
      envelope,
      error.code === ErrorCode.TooManyAttempts ? (error.retryAfterSeconds ?? 1) : undefined,
    );
  }
  const requestId = reportInternalError(auth, error);
  return envelopeResponse(auth, { code: ErrorCode.Internal, message: defaultMessages[ErrorCode.Internal], requestId });
}

function reportInternalError(auth: Auth, error: unknown): string {
  const requestId = base64url(auth.randomBytes(9));
  try {
    auth.onInternalError(error, requestId);
  } catch {
    // The reporter's own failure must not turn into a second error.
  }
  return requestId;
}

function findRoute(auth: Auth, method: string, path: string): Route | "not_found" | null {
  const prefix = `${auth.config.basePath}/auth`;
  const ours = path === prefix || path.startsWith(`${prefix}/`) || routes.some((route) => route.atRoot && route.path === path);
  if (!ours) return null;
  const route = routes.find(
    (candidate) =>
      candidate.method === method && (candidate.atRoot ? candidate.path : `${auth.config.basePath}${candidate.path}`) === path,
  );
  return route ?? "not_found";
}

/**
 * True when `url` (a path, with or without a query) is one of Portcullis's: under
 * `<basePath>/auth`, or a root route such as `/.well-known/jwks.json`. An adapter uses it to
 * answer errors its framework raised before {@link handleRequest} ran (a body parser's).
 */
export function isAuthPath(auth: Auth, url: string): boolean {
  return findRoute(auth, "GET", normalizePath(url)) !== null;
}

/**
 * Extracts the bearer token of an `Authorization` header (AT-6): the only place an access
 * token is read from, never a query string.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
  return match ? (match[1] as string) : undefined;
}

/**
 * Verifies the bearer token of a request and, when `roles` is given, that the user holds at
 * least one of them. What `requireAuth` in each adapter calls.
 *
 * @throws {AuthError} 40101 missing or invalid token, 40300 none of the roles.
 */
export async function authorizeRequest(
  auth: Auth,
  authorization: string | undefined,
  options: { roles?: readonly string[] } = {},
): Promise<AccessContext> {
  const token = bearerToken(authorization);
  if (!token) throw new AuthError(ErrorCode.InvalidToken, "A bearer access token is required");
  const access = await verifyAccessToken(auth, { token });
  if (options.roles && options.roles.length > 0 && !options.roles.some((role) => access.roles.includes(role))) {
    throw new AuthError(ErrorCode.Forbidden, "A role this route requires is missing");
  }
  return access;
}

/**
 * Serves one request from the route table. Returns null when the path is not one of
 * Portcullis's (the adapter passes the request on); every other outcome, including unknown
 * routes under `<basePath>/auth`, malformed bodies and internal errors, is an envelope
 * response, never a thrown error.
 */
export async function handleRequest(auth: Auth, request: HttpRequest): Promise<HttpResponse | null> {
  const method = request.method.toUpperCase();
  const route = findRoute(auth, method, normalizePath(request.url));
  if (route === null) return null;
  try {
    if (route === "not_found") throw new AuthError(ErrorCode.NotFound, "No such route");
    const access = route.access === "bearer" ? await authorizeRequest(auth, request.header("authorization")) : undefined;
    const body = method === "POST" || method === "PUT" ? await readJsonBody(request, route.bodyLimit ?? defaultBodyLimit) : {};
    const result = await route.handle({ auth, body, ip: clientAddressOf(auth, request), access });
    return successResponse(auth, result);
  } catch (error) {
    return errorResponse(auth, error);
  }
}

function successResponse(auth: Auth, result: RouteResult): HttpResponse {
  if (result.bare) return { status: 200, headers: responseHeaders(result.bare.cacheControl), body: JSON.stringify(result.data) };
  const code = result.code ?? 0;
  return envelopeResponse(auth, { code, message: code === 0 ? "OK" : defaultMessages[code], data: result.data });
}
