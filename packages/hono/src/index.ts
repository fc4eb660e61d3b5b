/**
 * The Hono adapter: {@link authApp} and {@link authRoutes} serve the auth routes, and
 * {@link requireAuth} protects a route of your own, setting `c.get("auth")`.
 *
 * @packageDocumentation
 * @module @portcullis/hono
 */
import {
  type AccessContext,
  type AccessTokensOnly,
  type ApiKeyContext,
  type Auth,
  type CredentialContext,
  type CredentialOptions,
  type FieldsOf,
  type HttpRequest,
  type HttpResponse,
  type OrganizationOptions,
  type RegisteredAuth,
  type ServiceAccountContext,
  type StepUpOptions,
  type UserFieldDefinitions,
  type WithoutServiceAccounts,
  assertAuthArgument,
  authorizeRequest,
  credentialRequirementOf,
  errorResponse,
  explainWholePathMount,
  handleRequest,
  organizationRequirementOf,
  resolvedTarget,
  servesPath,
  stepUpRequirementOf,
} from "@portcullis/core";
import { type Context, Hono, type MiddlewareHandler } from "hono";

/**
 * The variables {@link requireAuth} sets on the context: `c.get("auth")`. `A` is the auth
 * instance's type, whose additional user fields `c.get("auth").user` shows; by default the one
 * registered in `Register` (`@portcullis/core`).
 *
 * @example
 * ```ts
 * const app = new Hono<{ Variables: AuthVariables<typeof auth> }>();
 * ```
 */
export type AuthVariables<A = RegisteredAuth> = { auth: AccessContext<FieldsOf<A>> };

/**
 * The variables {@link requireAuth} sets on a route that accepts API keys (`scopes` or
 * `credentials`): `c.get("auth")` is the access token's context or the key's, told apart by
 * `kind` (`"access_token"` or `"api_key"`). Leave {@link AuthVariables} off the app's own type where
 * such routes live: Hono would intersect the two and hide the key's.
 */
export type CredentialVariables<A = RegisteredAuth> = { auth: AccessContext<FieldsOf<A>> | ApiKeyContext };

/**
 * The variables of a route whose `requireAuth` options name service accounts (`credentials:
 * "service_account"` or a list; SA-4): `c.get("auth")` may also be a `ServiceAccountContext`
 * (`kind: "service_account"`), which acts for no user.
 */
export type MachineVariables<A = RegisteredAuth> = {
  auth: AccessContext<FieldsOf<A>> | ApiKeyContext | ServiceAccountContext;
};

/** Options of {@link authRoutes} and {@link authApp}. */
export interface AuthRoutesOptions {
  /**
   * The address of the peer that sent the request. Default: the socket's remote address as
   * `@hono/node-server` provides it (`c.env.incoming.socket.remoteAddress`); on other runtimes
   * pass your platform's, e.g. `getConnInfo(c).remote.address`. Do not return a forwarded
   * address here: Portcullis reads `X-Forwarded-For` itself, and only from the proxies listed
   * in `http.trustedProxies` (RL-3). When no address is known, the routes answer 50000 rather
   * than skip the per-address throttle.
   */
  getPeerAddress?: (c: Context) => string | undefined;
  /**
   * Whether the connection to this process is TLS (HTTP-7). Default: the socket's `encrypted`
   * flag on `@hono/node-server`; on other runtimes, whether the request URL is `https:`. Behind
   * a TLS-terminating proxy, list the proxy in `http.trustedProxies` instead.
   */
  isSecureConnection?: (c: Context) => boolean;
}

/**
 * Options of {@link requireAuth}: the roles, the active organization and the roles in it (`org`:
 * OR-7), what the route asks of the sign-in (`maxAge`, `secondFactor`, `amr`: STUP-2), and how to
 * read the connection as for {@link authRoutes}.
 */
export interface RequireAuthOptions extends AuthRoutesOptions, StepUpOptions, OrganizationOptions, CredentialOptions {
  /** The user must hold at least one of these roles, or the answer is 40300; an empty list lets no one through. */
  roles?: readonly string[];
}

type NodeSocket = { remoteAddress?: string; encrypted?: boolean; destroyed?: boolean };
type NodeIncoming = { socket?: NodeSocket; headers?: Record<string, string | string[] | undefined> };

/** The Node request of a request served by `@hono/node-server`, or undefined on other runtimes. */
function nodeIncoming(c: Context): NodeIncoming | undefined {
  return (c.env as { incoming?: NodeIncoming } | undefined)?.incoming;
}

/** The Node socket of a request served by `@hono/node-server`, or undefined on other runtimes. */
function nodeSocket(c: Context): NodeSocket | undefined {
  return nodeIncoming(c)?.socket;
}

/**
 * Reads a request header: from Node's own header object under `@hono/node-server` (asking
 * `c.req` there makes the adapter build a whole `Headers` object first), else through Hono.
 */
function headerReader(c: Context): HttpRequest["header"] {
  const headers = nodeIncoming(c)?.headers;
  if (!headers) return (name) => c.req.header(name);
  return (name) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
}

function nodePeerAddress(c: Context): string | undefined {
  return nodeSocket(c)?.remoteAddress;
}

function isTlsConnection(c: Context): boolean {
  const socket = nodeSocket(c);
  return socket ? socket.encrypted === true : new URL(c.req.url).protocol === "https:";
}

/** The headers, peer address and TLS state of a request: what core checks before anything else. */
function connectionOf(c: Context, options: AuthRoutesOptions): Pick<HttpRequest, "header" | "peerAddress" | "secure"> {
  return {
    header: headerReader(c),
    peerAddress: (options.getPeerAddress ?? nodePeerAddress)(c),
    secure: (options.isSecureConnection ?? isTlsConnection)(c),
  };
}

/**
 * The body an earlier middleware read, which Hono keeps: blank is no body; what is not JSON
 * reaches core as text, which it refuses.
 */
async function bodyReadEarlier(c: Context): Promise<unknown> {
  const text = await c.req.text().catch(() => undefined);
  if (text !== undefined && text.trim() === "") return undefined;
  // Not JSON: the text itself (a form for the token endpoint; any JSON route refuses a string).
  return c.req.json().catch(() => text ?? "");
}

/** The path and query of a request URL, without the scheme and host. */
function pathAndQuery(href: string): string {
  const start = href.indexOf("/", href.indexOf("://") + 3);
  return start === -1 ? "/" : (href.slice(start).split("#", 1)[0] as string);
}

/** The request body as a stream that is opened only when iterated. */
function lazyBody(request: Request): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: () => {
      const stream = request.body;
      return stream ? stream[Symbol.asyncIterator]() : (async function* empty() {})();
    },
  };
}

/**
 * Whether an earlier middleware read the body. Through `c.req.json()` and the like Hono keeps it
 * in `c.req.bodyCache`. Under `@hono/node-server`, `c.req.raw.bodyUsed` is not asked: touching
 * the raw request's body makes the server wrap the request in a web stream, and a body core then
 * refuses unread (by its Content-Length) stalls the server's drain of it, which drops the
 * keep-alive connection. There, a body must be read through `c.req`, not `c.req.raw`.
 */
function bodyConsumed(c: Context): boolean {
  if (Object.keys(c.req.bodyCache).length > 0) return true;
  return nodeSocket(c) === undefined && c.req.raw.bodyUsed;
}

async function toHttpRequest(c: Context, options: AuthRoutesOptions): Promise<HttpRequest> {
  const consumed = bodyConsumed(c);
  return {
    ...connectionOf(c, options),
    method: c.req.method,
    url: pathAndQuery(c.req.url),
    // Streamed: core counts the bytes as they arrive, so a chunked body cannot pass the limit (HTTP-1).
    // Opened only when core reads it: @hono/node-server turns the request into a web stream once
    // `body` is touched, and a body refused unread (by its Content-Length) must not be, or the
    // server's drain of it stalls and the keep-alive connection is dropped.
    body: consumed ? null : lazyBody(c.req.raw),
    parsedBody: consumed ? await bodyReadEarlier(c) : undefined,
  };
}

function toResponse(response: HttpResponse): Response {
  const headers = new Headers(response.headers);
  for (const cookie of response.cookies ?? []) headers.append("set-cookie", cookie);
  return new Response(response.body, { status: response.status, headers });
}

/**
 * Middleware that serves the Portcullis routes (`<basePath>/auth/*`,
 * `/.well-known/jwks.json`, and `<basePath>/users/me/password` with `http.passwordChangeAlias`) and passes every other request on with `next()`. All auth rules
 * (TLS, limits, JSON checks, tokens, status codes) are in `@portcullis/core`; this only
 * translates the request and the response. Paths are matched as the client sent them,
 * whatever the middleware is mounted under, so `http.basePath` must be the full prefix.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { authRoutes } from "@portcullis/hono";
 *
 * const app = new Hono();
 * app.use(authRoutes(auth));
 * ```
 */
export function authRoutes(auth: Auth, options: AuthRoutesOptions = {}): MiddlewareHandler {
  assertAuthArgument(auth, "authRoutes", "app.use(authRoutes(auth))");
  const serve: MiddlewareHandler = async (c, next) => {
    // The client is gone (Node's parser closed the socket on what followed the request): nothing
    // can answer it, and its address, which the throttles need, can no longer be read.
    if (nodeSocket(c)?.destroyed === true) return c.body(null, 400);
    const response = await handleRequest(auth, await toHttpRequest(c, options));
    if (response === null) {
      await next();
      return;
    }
    return toResponse(response);
  };
  return (c, next) => {
    const target = pathAndQuery(c.req.url);
    if (servesPath(auth, target)) return serve(c, next);
    // Mounted under a prefix (app.route("/svc", authApp(auth))): its routes are still matched from the root.
    const mountPath = c.req.routePath.replace(/\/?\*$/, "");
    if (mountPath !== "") explainWholePathMount(auth, mountPath, target);
    return next();
  };
}

/**
 * A Hono app serving the Portcullis routes, to mount at the root of yours; requests for
 * other paths fall through to your routes. The same as `app.use(authRoutes(auth, options))`.
 *
 * @example
 * ```ts
 * import { serve } from "@hono/node-server";
 * import { Hono } from "hono";
 * import { authApp, requireAuth } from "@portcullis/hono";
 *
 * const app = new Hono();
 * app.route("/", authApp(auth));
 * app.get("/api/v1/things", requireAuth(auth), (c) => c.json({ owner: c.get("auth").userId }));
 * serve(app);
 * ```
 */
export function authApp(auth: Auth, options: AuthRoutesOptions = {}): Hono {
  assertAuthArgument(auth, "authApp", 'app.route("/", authApp(auth))');
  const app = new Hono();
  app.use(authRoutes(auth, options));
  return app;
}

/** Whether `@hono/node-server` reads a target as it is: origin-form, with no backslash before the query. */
const readAsIs = (target: string): boolean => target.startsWith("/") && !/^[^?]*\\/.test(target);

/**
 * Wraps the request listener of `@hono/node-server` (`getRequestListener(app.fetch)`) so that
 * Portcullis answers, in the envelope, the requests on its paths whose target that server refuses
 * with an empty 400 before Hono runs (HTTP-5): a backslash in the path (`/api/v1/auth\login`), an
 * absolute-form target it cannot read (`HTTPS://HOST/api/v1/auth/me`). Such a request reaches Hono
 * with its target as core reads it ({@link resolvedTarget}: `/api/v1/auth/login`), which core
 * answers as it would the original; every other request passes as it came, so the server's
 * refusals on your app's paths stay its own.
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { getRequestListener } from "@hono/node-server";
 *
 * createServer(withResolvedTargets(auth, getRequestListener(app.fetch))).listen(3000);
 * ```
 */
export function withResolvedTargets<Incoming extends { url?: string }, Rest extends unknown[], Result>(
  auth: Auth,
  listener: (incoming: Incoming, ...rest: Rest) => Result,
): (incoming: Incoming, ...rest: Rest) => Result {
  assertAuthArgument(auth, "withResolvedTargets", "withResolvedTargets(auth, getRequestListener(app.fetch))");
  return (incoming, ...rest) => {
    const target = incoming.url;
    if (target !== undefined && !readAsIs(target) && servesPath(auth, target)) incoming.url = resolvedTarget(target);
    return listener(incoming, ...rest);
  };
}

/**
 * Middleware that lets a request through only over TLS (HTTP-7: loopback clients and
 * `http.unsafeAllowPlainHttp` excepted) with a live access token in the
 * `Authorization: Bearer` header (never the query string; AT-6), when `roles` is given only
 * for a user holding one of them, with `org` only for a token carrying an active organization
 * (and with `org: { roles }` only for a member holding one of them there; OR-7), and when
 * `maxAge`, `secondFactor` or `amr` is given only for
 * a session whose sign-in or latest re-authentication meets them (STUP-2). It sets
 * `c.get("auth")` to the token's {@link AccessContext} (with `authTime` and `amr`). Otherwise it
 * answers in the Portcullis envelope: 40300 for plain HTTP, before the token is read; 40101 for
 * a missing, invalid, expired or revoked token; 40300 for a missing role or organization role, or no active organization; 40104 (HTTP 401) with
 * `data.required` when the session must step up. With `scopes` or `credentials` it accepts API
 * keys too (AK-2): `c.get("auth")` is then an `ApiKeyContext` for a key (`kind: "api_key"`), see
 * {@link CredentialVariables}; a key lacking a scope, or where a sign-in is asked, is 40300. Off `@hono/node-server`, pass
 * `getPeerAddress` (and, if the URL's scheme does not tell, `isSecureConnection`) as to
 * {@link authRoutes}.
 *
 * @throws {TypeError} at once, for a `maxAge`, `secondFactor`, `amr`, `org`, `scopes` or `credentials` that is not one.
 * @example
 * ```ts
 * const app = new Hono<{ Variables: AuthVariables<typeof auth> }>();
 * app.get("/api/v1/things", requireAuth(auth), (c) => c.json({ owner: c.get("auth").userId, plan: c.get("auth").user.plan }));
 * app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), deleteThing);
 * app.post("/api/v1/payouts", requireAuth(auth, { maxAge: "5m", secondFactor: true }), sendPayout);
 * app.get("/api/v1/billing", requireAuth(auth, { org: { roles: ["owner"] } }), (c) => c.json({ org: c.get("auth").org?.id }));
 * // On an app whose type does not set AuthVariables: c.get("auth") is AccessContext | ApiKeyContext.
 * api.get("/api/v1/reports", requireAuth(auth, { scopes: ["reports:read"] }), (c) => c.json({ by: c.get("auth").kind }));
 * ```
 */
export function requireAuth<A extends Auth<UserFieldDefinitions>>(
  auth: A,
  options?: RequireAuthOptions & AccessTokensOnly,
): MiddlewareHandler<{ Variables: AuthVariables<A> }>;
export function requireAuth<A extends Auth<UserFieldDefinitions>>(
  auth: A,
  options: RequireAuthOptions & WithoutServiceAccounts,
): MiddlewareHandler<{ Variables: CredentialVariables<A> }>;
export function requireAuth<A extends Auth<UserFieldDefinitions>>(
  auth: A,
  options: RequireAuthOptions,
): MiddlewareHandler<{ Variables: MachineVariables<A> }>;
export function requireAuth<A extends Auth<UserFieldDefinitions>>(
  auth: A,
  options: RequireAuthOptions = {},
):
  | MiddlewareHandler<{ Variables: AuthVariables<A> }>
  | MiddlewareHandler<{ Variables: CredentialVariables<A> }>
  | MiddlewareHandler<{ Variables: MachineVariables<A> }> {
  assertAuthArgument(auth, "requireAuth", 'requireAuth(auth) or requireAuth(auth, { roles: ["admin"] })');
  stepUpRequirementOf(options);
  organizationRequirementOf(options);
  credentialRequirementOf(options);
  const refuse = (error: unknown) => toResponse(errorResponse(auth, error));
  // Not an async function: the check's promise is handed to Hono with one step chained, not awaited.
  const handler: MiddlewareHandler<{ Variables: MachineVariables<A> }> = (c, next) => {
    let authorized: Promise<CredentialContext>;
    try {
      authorized = authorizeRequest(auth, connectionOf(c, options), options as RequireAuthOptions);
    } catch (error) {
      return Promise.resolve(refuse(error));
    }
    return authorized.then((access) => {
      // The token's fields are the instance's declared inToken ones: what AccessContext<FieldsOf<A>> says.
      c.set("auth", access as AccessContext<FieldsOf<A>> | ApiKeyContext | ServiceAccountContext);
      return next();
    }, refuse);
  };
  return handler;
}
