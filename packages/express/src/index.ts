/**
 * The Express adapter (Express 4 and 5): {@link authRouter} mounts the auth routes, and
 * {@link requireAuth} protects a route of your own, setting `req.auth`.
 *
 * @packageDocumentation
 * @module @portcullis/express
 */
import type { TLSSocket } from "node:tls";
import {
  type AccessContext,
  type ApiKeyContext,
  type Auth,
  type CredentialContext,
  type CredentialOptions,
  type HttpRequest,
  type HttpResponse,
  type OrganizationOptions,
  type StepUpOptions,
  assertAuthArgument,
  authorizeRequest,
  credentialRequirementOf,
  errorResponse,
  explainMountPath,
  handleRequest,
  nodeRequestBody,
  organizationRequirementOf,
  servesPath,
  stepUpRequirementOf,
} from "@portcullis/core";
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from "express";

declare global {
  namespace Express {
    interface Request {
      /**
       * Who the bearer token speaks for; set by {@link requireAuth} before your handler runs. On a
       * route whose `requireAuth` accepts API keys (`scopes` or `credentials`), type the request as
       * {@link CredentialRequest}: it may be a key's context.
       */
      auth?: AccessContext;
    }
  }
}

/**
 * The request of a route whose `requireAuth` accepts API keys (`scopes` or `credentials`; AK-2):
 * `req.auth` is the access token's context or the key's, told apart by `kind`. Express's request
 * type is one for every route, so name this one in such a route's handler.
 *
 * @example
 * ```ts
 * app.get("/api/v1/reports", requireAuth(auth, { scopes: ["reports:read"] }), (req: CredentialRequest, res) => {
 *   res.json({ by: req.auth?.kind === "api_key" ? req.auth.keyId : req.auth?.sessionId });
 * });
 * ```
 */
export type CredentialRequest = Omit<Request, "auth"> & { auth?: AccessContext | ApiKeyContext };

/**
 * The request type of a handler behind `requireAuth` options that name service accounts
 * (`credentials: "service_account"` or a list; SA-4): `auth` may also be a `ServiceAccountContext`
 * (`kind: "service_account"`), which acts for no user.
 */
export type MachineRequest = Omit<Request, "auth"> & { auth?: CredentialContext };

/** Options of {@link authRouter}. */
export interface AuthRouterOptions {
  /**
   * The address of the peer that sent the request. Default: the socket's remote address.
   * Do not return a forwarded address here: Portcullis reads `X-Forwarded-For` itself, and
   * only from the proxies listed in `http.trustedProxies` (RL-3). When it returns undefined
   * (a Unix socket has no peer address), the routes answer 50000 rather than skip the
   * per-address throttle.
   */
  getPeerAddress?: (req: Request) => string | undefined;
}

/** Options of {@link requireAuth}: the roles, the active organization and the roles in it (`org`: OR-7), what the route asks of the sign-in (`maxAge`, `secondFactor`, `amr`: STUP-2), and the peer address. */
export interface RequireAuthOptions extends StepUpOptions, OrganizationOptions, CredentialOptions {
  /** The user must hold at least one of these roles, or the answer is 40300; an empty list lets no one through. */
  roles?: readonly string[];
  /** As for {@link authRouter}: the address of the peer, for the loopback exemption of HTTP-7. */
  getPeerAddress?: (req: Request) => string | undefined;
}

/** What {@link authRouter} returns: the route handler, then the handler of errors raised before it on its paths. */
export type AuthRouter = [RequestHandler, ErrorRequestHandler];

/** True once some earlier middleware (`express.json()`, body-parser) has read the request body. */
function bodyWasConsumed(req: Request): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded;
}

/**
 * The headers, peer address and TLS state of a request: what core checks before anything else.
 * Core asks for headers by lower-case name, as Node keys them. Each property of `req` is read
 * once: on Express every read of one is a slow lookup (see {@link declareRequestAuth}).
 */
function connectionOf(
  req: Request,
  getPeerAddress: AuthRouterOptions["getPeerAddress"],
): Pick<HttpRequest, "header" | "peerAddress" | "secure"> {
  const headers = req.headers;
  const socket = req.socket;
  return {
    header(name) {
      const value = headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    peerAddress: getPeerAddress ? getPeerAddress(req) : socket.remoteAddress,
    secure: (socket as TLSSocket).encrypted === true,
  };
}

const accessOfRequest = new WeakMap<object, CredentialContext>();

/** `req.auth` as an accessor over {@link accessOfRequest}: reading and setting it adds no property to the request. */
const authAccessor: PropertyDescriptor = {
  configurable: true,
  get(this: object): CredentialContext | undefined {
    return accessOfRequest.get(this);
  },
  set(this: object, access: CredentialContext) {
    accessOfRequest.set(this, access);
  },
};

/**
 * Declares `auth` on the prototype Express gives the requests of an app (`app.request`, which a
 * mounted app's inherits from), as Fastify's `decorateRequest` does, unless something declared
 * it there first. Express gives every request an object shape of its own (it swaps the request's
 * prototype), so adding a property to one builds a new shape each time: the costliest step of a
 * protected request. With the accessor, `req.auth = access` adds none. A request whose prototype
 * is not an app's (no own `app`) keeps `auth` as an own property.
 */
function declareRequestAuth(prototype: object | null): void {
  if (prototype !== null && Object.hasOwn(prototype, "app") && !Object.hasOwn(prototype, "auth")) {
    Object.defineProperty(prototype, "auth", authAccessor);
  }
}

function toHttpRequest(req: Request, options: AuthRouterOptions): HttpRequest {
  const consumed = bodyWasConsumed(req);
  return {
    ...connectionOf(req, options.getPeerAddress),
    method: req.method,
    url: req.url,
    // Read without destroying the stream on an early stop: when core refuses an oversized body
    // halfway, the socket must stay open for the 40002 answer (HTTP-1).
    body: consumed ? null : nodeRequestBody(req),
    parsedBody: consumed ? req.body : undefined,
  };
}

function send(res: Response, response: HttpResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.cookies) res.setHeader("set-cookie", response.cookies);
  res.end(response.body);
}

/** The refusals of a body parser (`express.json()`) that core answers in its own words (HTTP-5). */
const bodyParserRefusals = new Map<unknown, HttpRequest["bodyRefusal"]>([
  ["entity.too.large", "tooLarge"],
  ["entity.parse.failed", "notJson"],
]);

/** What a body parser's error passed to `next` says about a body it refused, or undefined. */
function bodyParserRefusal(error: unknown): HttpRequest["bodyRefusal"] {
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status !== "number" || status < 400 || status >= 500) return undefined;
  return bodyParserRefusals.get((error as { type?: unknown }).type);
}

/**
 * Mounts the Portcullis routes (`<basePath>/auth/*`, `/.well-known/jwks.json`, and
 * `<basePath>/users/me/password` with `http.passwordChangeAlias`) in an Express 4 or 5 app. Requests for other paths go on to the rest of the app untouched.
 *
 * It returns two middleware for `app.use`: the routes, and an error handler that answers, in
 * the Portcullis envelope, a body that an earlier `express.json()` refused on these paths
 * (40002, once the checks that come before the body have passed). Everything else (TLS,
 * limits, JSON checks, tokens, status codes) is decided by `@portcullis/core`; the body is
 * read from the stream with the route's byte limit, or taken from `req.body` when a body
 * parser ran first. The connection is TLS when the socket is (`req.socket.encrypted`); behind
 * a TLS-terminating proxy, list the proxy in `http.trustedProxies` (HTTP-7).
 *
 * Mounted under a path (`app.use("/x", authRouter(auth))`), the routes are matched against
 * the path below it, so set `http.basePath` to match; a request that names a route under another
 * base path is explained once on stderr. `app.use(authRouter)`, without the call, throws a
 * `TypeError` saying what to write at its first request.
 *
 * @example
 * ```ts
 * import express from "express";
 * import { authRouter, requireAuth } from "@portcullis/express";
 *
 * const app = express();
 * app.use(authRouter(auth));
 * app.get("/api/v1/things", requireAuth(auth), (req, res) => res.json({ owner: req.auth?.userId }));
 * app.listen(3000);
 * ```
 */
export function authRouter(auth: Auth, options: AuthRouterOptions = {}): AuthRouter {
  assertAuthArgument(auth, "authRouter", "app.use(authRouter(auth))");
  const routesHandler: RequestHandler = (req, res, next) => {
    if (!servesPath(auth, req.url)) {
      if (req.baseUrl !== "") explainMountPath(auth, req.baseUrl, req.url);
      next();
      return;
    }
    // The client is gone (Node's parser closed the socket on what followed the request): nothing
    // can answer it, and its address, which the throttles need, can no longer be read.
    if (req.socket.destroyed) return;
    handleRequest(auth, toHttpRequest(req, options)).then((response) => {
      if (response === null) next();
      else send(res, response);
    }, next);
  };
  const bodyErrorHandler: ErrorRequestHandler = (error: unknown, req: Request, res: Response, next: NextFunction) => {
    const bodyRefusal = bodyParserRefusal(error);
    if (bodyRefusal === undefined || res.headersSent) {
      next(error);
      return;
    }
    handleRequest(auth, { ...toHttpRequest(req, options), body: null, parsedBody: undefined, bodyRefusal }).then((response) => {
      if (response === null) next(error);
      else send(res, response);
    }, next);
  };
  return [routesHandler, bodyErrorHandler];
}

/**
 * Middleware that lets a request through only over TLS (HTTP-7: loopback clients and
 * `http.unsafeAllowPlainHttp` excepted) with a live access token in the
 * `Authorization: Bearer` header (never the query string; AT-6), when `roles` is given only
 * for a user holding one of them, with `org` only for a token carrying an active organization
 * (and with `org: { roles }` only for a member holding one of them there; OR-7), and when
 * `maxAge`, `secondFactor` or `amr` is given only for
 * a session whose sign-in or latest re-authentication meets them (STUP-2). It sets `req.auth` to
 * the token's {@link AccessContext} (with `authTime` and `amr`). Otherwise it answers in the
 * Portcullis envelope: 40300 for plain HTTP, before the token is read; 40101 for a missing,
 * invalid, expired or revoked token; 40300 for a missing role or organization role, or no active organization; 40104 (HTTP 401) with
 * `data.required` when the session must step up. With `scopes` or `credentials` it accepts API
 * keys too (AK-2): `req.auth` is then an `ApiKeyContext` for a key (`kind: "api_key"`; type the
 * handler's request as {@link CredentialRequest}); a key lacking a scope, or where a sign-in is
 * asked, is 40300.
 *
 * @throws {TypeError} at once, for a `maxAge`, `secondFactor`, `amr`, `org`, `scopes` or `credentials` that is not one.
 * @example
 * ```ts
 * app.get("/api/v1/things", requireAuth(auth), (req, res) => res.json({ owner: req.auth?.userId }));
 * app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), deleteThing);
 * app.post("/api/v1/payouts", requireAuth(auth, { maxAge: "5m", secondFactor: true }), sendPayout);
 * app.get("/api/v1/billing", requireAuth(auth, { org: { roles: ["owner"] } }), (req, res) => res.json({ org: req.auth?.org?.id }));
 * ```
 */
export function requireAuth(auth: Auth, options: RequireAuthOptions = {}): RequestHandler {
  assertAuthArgument(auth, "requireAuth", 'requireAuth(auth) or requireAuth(auth, { roles: ["admin"] })');
  stepUpRequirementOf(options);
  organizationRequirementOf(options);
  credentialRequirementOf(options);
  let declaredFor: object | null = null;
  return (req, res, next) => {
    const prototype = Object.getPrototypeOf(req);
    if (prototype !== declaredFor) {
      declareRequestAuth(prototype);
      declaredFor = prototype;
    }
    authorizeRequest(auth, connectionOf(req, options.getPeerAddress), options).then(
      (access) => {
        // A key's context only where the options accept keys: CredentialRequest types it there.
        req.auth = access as AccessContext;
        next();
      },
      (error: unknown) => send(res, errorResponse(auth, error)),
    );
  };
}
