import type { Auth } from "../auth.js";
import { base64url } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode, defaultMessages } from "../errors/codes.js";
import { telemetryOf } from "../telemetry/telemetry.js";
import type { RequestObserver } from "../telemetry/types.js";
import { verifyBearer } from "./authorize-request.js";
import { readFormBody, readJsonBody } from "./body.js";
import { clientAddressOf } from "./client-address.js";
import { envelopeResponse, responseHeaders } from "./envelope.js";
import { oauthErrorResponse, oauthHeaders, usesBasicAuthentication } from "./oauth-error-response.js";
import { isTlsRequest, requireTls } from "./require-tls.js";

export {
  type AccessTokensOnly,
  type AuthorizeOptions,
  type CredentialContext,
  type WithoutServiceAccounts,
  authorizeRequest,
  bearerToken,
} from "./authorize-request.js";

import type { Route, RouteResult } from "./route-types.js";
import { routes } from "./routes/index.js";
import type { Envelope, HttpRequest, HttpResponse } from "./types.js";

const defaultBodyLimit = 64 * 1024;

/** A fixed origin to resolve paths against; `.invalid` can never be a real host (RFC 2606). */
const pathOrigin = "http://portcullis.invalid";

/**
 * The scheme and authority of an absolute-form request target (RFC 9112 §3.2.2), `http://` or
 * `https://` in any case: the authority ends where the URL parser ends an http URL's host.
 */
const absoluteForm = /^https?:\/\/[^/?#\\]+/i;

/**
 * A request target in origin-form: an absolute-form target (`http://host/api/v1/auth/me`, which
 * a server must accept, RFC 9112 §3.2.2, and which Express's, Fastify's and Hono's own routers
 * read as its path) without its scheme and authority; any other target as it is.
 */
function originForm(url: string): string {
  const authority = absoluteForm.exec(url);
  return authority === null ? url : url.slice(authority[0].length);
}

/** A request target (path and query, as the adapter gives it) parsed against a fixed origin. */
function requestTarget(url: string): URL {
  const target = originForm(url);
  return new URL(`${pathOrigin}${target.startsWith("/") ? "" : "/"}${target}`);
}

/** A path of single-slash-separated segments of unreserved characters, none starting with a dot. */
const plainPath = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*\/?$/;

/**
 * The path of a request target as routes are matched (RL-3): resolved exactly as the WHATWG
 * URL parser resolves an http URL's path, as Hono's request URL already is (dot segments, also
 * percent-encoded as `%2e`, are applied; `\` reads as `/`; the query and fragment are dropped),
 * then with repeated slashes collapsed and a trailing one dropped. So
 * `//api/v1/auth/../auth//login/` is `/api/v1/auth/login` on every adapter. The target is
 * appended to a fixed origin, never parsed as a URL relative to one, so `//host/…` stays a path;
 * an absolute-form target's path is its URL's (`http://host/api/v1/auth/me` is
 * `/api/v1/auth/me`, whatever the host). Percent-escapes are never decoded, so a malformed or
 * non-UTF-8 one (`%ZZ`, `%ff`) names no route, or is a parameter's value that nothing has.
 */
export function normalizePath(target: string): string {
  const url = originForm(target);
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  // Segments of unreserved characters that are not dot segments come out of the URL parser as
  // they went in: such a path (most requests) skips it.
  if (path.startsWith("/") && plainPath.test(path)) return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  const { pathname } = requestTarget(url);
  const collapsed = pathname.replace(/\/{2,}/g, "/");
  return collapsed.length > 1 && collapsed.endsWith("/") ? collapsed.slice(0, -1) : collapsed;
}

/**
 * A request target as core reads it, in origin-form: the path as routes are matched (dot
 * segments applied, `\` read as `/`, repeated slashes collapsed, a trailing one dropped) and the
 * query, without a fragment or an absolute-form's scheme and host. Core answers it exactly
 * as it answers `url`, so an adapter may hand it on in place of a target its server refuses before
 * the adapter runs (`@portcullis/hono`'s `withResolvedTargets` does, for `@hono/node-server`).
 *
 * @example
 * ```ts
 * resolvedTarget("HTTP://host/api/v1/auth\\login?x=1#y"); // "/api/v1/auth/login?x=1"
 * ```
 */
export function resolvedTarget(url: string): string {
  return `${normalizePath(url)}${requestTarget(url).search}`;
}

/**
 * The response for an error thrown while serving a request (HTTP-5): an {@link AuthError}
 * keeps its code and safe message; anything else becomes 50000 with a request id and no
 * internal text, and is handed to `onInternalError`.
 */
export function errorResponse(auth: Auth, error: unknown): HttpResponse {
  if (error instanceof AuthError) {
    const envelope: Envelope = { code: error.code, message: error.message };
    if (error.data !== undefined) envelope.data = error.data;
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

/** The route a method and path name, with the values of its `:name` segments. */
interface MatchedRoute {
  route: Route;
  params: Record<string, string>;
}

/** A route with its pattern split into segments. */
interface CompiledRoute {
  route: Route;
  segments: string[];
}

/** The route table of one auth instance, with its base path applied, made once. */
interface CompiledRoutes {
  routes: CompiledRoute[];
  /** `<basePath>/auth`: every route not at the root is under it, but the aliases of `outsidePaths`. */
  prefix: string;
  /**
   * The paths outside the prefix that are Portcullis's: those of the routes served at the root
   * (`/.well-known/jwks.json`), and those of the routes under the base path but outside its
   * `/auth` that this auth turns on (`<basePath>/users/me/password` with `http.passwordChangeAlias`).
   */
  outsidePaths: ReadonlySet<string>;
}

/** True for a route under the base path but not under its `/auth`: an alias only some configurations serve. */
const outsideAuthPrefix = (route: Route): boolean => !route.atRoot && !route.path.startsWith("/auth/");

const compiledRoutes = new WeakMap<Auth, CompiledRoutes>();

function routesOf(auth: Auth): CompiledRoutes {
  let compiled = compiledRoutes.get(auth);
  if (!compiled) {
    compiled = {
      routes: routes.map((route) => ({
        route,
        segments: (route.atRoot ? route.path : `${auth.config.basePath}${route.path}`).split("/"),
      })),
      prefix: `${auth.config.basePath}/auth`,
      outsidePaths: new Set([
        ...routes.filter((route) => route.atRoot).map((route) => route.path),
        ...routes
          .filter((route) => outsideAuthPrefix(route) && route.enabled?.(auth) === true)
          .map((route) => `${auth.config.basePath}${route.path}`),
      ]),
    };
    compiledRoutes.set(auth, compiled);
  }
  return compiled;
}

/** Matches the segments of a normalised path (no empty segments: see {@link normalizePath}) against a route's. */
function matchPath(expected: string[], actual: string[]): Record<string, string> | null {
  if (expected.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (const [index, segment] of expected.entries()) {
    const value = actual[index] as string;
    if (segment.startsWith(":")) params[segment.slice(1)] = value;
    else if (segment !== value) return null;
  }
  return params;
}

/**
 * True for a normalised path under `<basePath>/auth`, one of the routes served at the root, or an
 * alias outside `<basePath>/auth` this auth turns on.
 */
function isOurPath(auth: Auth, path: string): boolean {
  const { prefix, outsidePaths } = routesOf(auth);
  return path.startsWith(prefix) ? path.length === prefix.length || path[prefix.length] === "/" : outsidePaths.has(path);
}

/**
 * True when `url` (the request target: path and query) is one of Portcullis's paths, which
 * {@link handleRequest} answers; for any other, it returns null. Adapters ask this first, so
 * the rest of an app's requests pass by without being translated.
 *
 * @example
 * ```ts
 * if (!servesPath(auth, req.url)) return next();
 * ```
 */
export function servesPath(auth: Auth, url: string): boolean {
  return isOurPath(auth, normalizePath(url));
}

function findRoute(auth: Auth, method: string, path: string): MatchedRoute | "not_found" | null {
  if (!isOurPath(auth, path)) return null;
  const actual = path.split("/");
  for (const { route, segments } of routesOf(auth).routes) {
    if (route.method !== method || (route.enabled && !route.enabled(auth))) continue;
    const params = matchPath(segments, actual);
    if (params) return { route, params };
  }
  return "not_found";
}

/**
 * Serves one request from the route table. Returns null when the path is not one of
 * Portcullis's (the adapter passes the request on); every other outcome, including unknown
 * routes under `<basePath>/auth`, malformed bodies and internal errors, is an envelope
 * response, never a thrown error.
 *
 * Before anything else: a request whose peer address the adapter could not tell is 50000 (the
 * per-address throttle must never be skipped silently; `onInternalError` is told to pass
 * `getPeerAddress`), and one over plain HTTP is 40300 (HTTP-7). Then the bearer token, then
 * the body.
 */
export async function handleRequest(auth: Auth, request: HttpRequest): Promise<HttpResponse | null> {
  const method = request.method.toUpperCase();
  const matched = findRoute(auth, method, normalizePath(request.url));
  if (matched === null) return null;
  const telemetry = telemetryOf(auth);
  if (telemetry === null) return await serve(auth, request, method, matched);
  const route = matched === "not_found" ? null : matched.route;
  return await telemetry.traceRoute(
    route?.doc.operationId ?? null,
    method,
    route && (route.atRoot ? route.path : `${auth.config.basePath}${route.path}`),
    (observer) => serve(auth, request, method, matched, observer),
  );
}

/** Serves a request of a matched route (or of no route under the base path), telling `observer` how it ended. */
async function serve(
  auth: Auth,
  request: HttpRequest,
  method: string,
  matched: MatchedRoute | "not_found",
  observer?: RequestObserver,
): Promise<HttpResponse> {
  try {
    if (!request.peerAddress) {
      throw new TypeError("Portcullis could not read the client address of this request; pass getPeerAddress to the adapter");
    }
    requireTls(auth, request);
    if (matched === "not_found") throw new AuthError(ErrorCode.NotFound, "No such route");
    const { route, params } = matched;
    const roles = route.access === "admin" ? [auth.config.adminRole] : undefined;
    const access = route.access === "public" ? undefined : await verifyBearer(auth, request.header("authorization"), roles);
    if (access !== undefined) observer?.user(access.userId);
    const limit = route.bodyLimit ?? defaultBodyLimit;
    const body = !readsBody(method, request)
      ? {}
      : route.body === "form"
        ? await readFormBody(request, limit)
        : await readJsonBody(request, limit);
    const ip = clientAddressOf(auth, request);
    const result = await route.handle({
      auth,
      body,
      params,
      query: requestTarget(request.url).search.slice(1),
      secure: isTlsRequest(auth, request),
      header: (name) => request.header(name),
      ip,
      access,
    });
    observer?.answered(result.code ?? 0);
    return successResponse(auth, result);
  } catch (error) {
    observer?.failed(error);
    if (matched !== "not_found" && matched.route.errors === "oauth") {
      const basicUsed = usesBasicAuthentication(request.header("authorization"));
      return oauthErrorResponse(auth, error, basicUsed, (internal) => reportInternalError(auth, internal));
    }
    return errorResponse(auth, error);
  }
}

/** Whether a request's body is read: always for POST, PUT and PATCH; for a DELETE that says it has one. */
const readsBody = (method: string, request: HttpRequest): boolean =>
  method === "POST" ||
  method === "PUT" ||
  method === "PATCH" ||
  (method === "DELETE" && request.header("content-type") !== undefined);

function successResponse(auth: Auth, result: RouteResult): HttpResponse {
  let response: HttpResponse;
  if (result.redirectTo !== undefined) {
    response = { status: 302, headers: { ...responseHeaders(), location: result.redirectTo }, body: "" };
  } else if (result.bare) {
    response = { status: 200, headers: responseHeaders(result.bare.cacheControl), body: JSON.stringify(result.data) };
  } else if (result.oauth) {
    response = { status: 200, headers: oauthHeaders(), body: JSON.stringify(result.data) };
  } else {
    const code = result.code ?? 0;
    response = envelopeResponse(auth, { code, message: code === 0 ? "OK" : defaultMessages[code], data: result.data });
  }
  if (result.cookies !== undefined && result.cookies.length > 0) response.cookies = [...result.cookies];
  return response;
}
