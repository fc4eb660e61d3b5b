/**
 * The Fastify 5 adapter: the {@link portcullis} plugin serves the auth routes, and
 * {@link requireAuth} protects a route of your own as its `preHandler`, setting `request.auth`.
 *
 * @packageDocumentation
 * @module @portcullis/fastify
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
  handleRequest,
  nodeRequestBody,
  organizationRequirementOf,
  routes,
  servesPath,
  stepUpRequirementOf,
} from "@portcullis/core";
import type {
  FastifyError,
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  HookHandlerDoneFunction,
  preHandlerAsyncHookHandler,
} from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Who the bearer token speaks for; set by {@link requireAuth} before your handler runs. On a
     * route whose `requireAuth` accepts API keys (`scopes` or `credentials`), type the request as
     * {@link CredentialRequest}: it may be a key's context.
     */
    auth?: AccessContext;
  }
}

/**
 * The request of a route whose `requireAuth` accepts API keys (`scopes` or `credentials`; AK-2):
 * `request.auth` is the access token's context or the key's, told apart by `kind`. Fastify's
 * request type is one for every route, so name this one in such a route's handler.
 *
 * @example
 * ```ts
 * app.get("/api/v1/reports", { preHandler: requireAuth(auth, { scopes: ["reports:read"] }) },
 *   async (request: CredentialRequest) => ({ by: request.auth?.kind }));
 * ```
 */
export type CredentialRequest = Omit<FastifyRequest, "auth"> & { auth?: AccessContext | ApiKeyContext };

/**
 * The request type of a handler behind `requireAuth` options that name service accounts
 * (`credentials: "service_account"` or a list; SA-4): `auth` may also be a `ServiceAccountContext`
 * (`kind: "service_account"`), which acts for no user.
 */
export type MachineRequest = Omit<FastifyRequest, "auth"> & { auth?: CredentialContext };

/** Options of the {@link portcullis} plugin, given to `app.register` (beside Fastify's own, such as `prefix`). */
export interface PortcullisOptions {
  /** The auth instance `createAuth()` returns. */
  auth: Auth;
  /**
   * Fastify's own option, honoured by the plugin for its routes: they are registered under it,
   * and it must be `http.basePath` or a leading part of it.
   */
  prefix?: string;
  /**
   * The address of the peer that sent the request. Default: the socket's remote address
   * (`request.raw.socket.remoteAddress`), whatever Fastify's `trustProxy` says. Do not return
   * `request.ip` or another forwarded address here: Portcullis reads `X-Forwarded-For` itself,
   * and only from the proxies listed in `http.trustedProxies` (RL-3). When it returns undefined,
   * the routes answer 50000 rather than skip the per-address throttle.
   */
  getPeerAddress?: (request: FastifyRequest) => string | undefined;
}

/** Options of {@link requireAuth}: the roles, the active organization and the roles in it (`org`: OR-7), what the route asks of the sign-in (`maxAge`, `secondFactor`, `amr`: STUP-2), and the peer address. */
export interface RequireAuthOptions extends StepUpOptions, OrganizationOptions, CredentialOptions {
  /** The user must hold at least one of these roles, or the answer is 40300; an empty list lets no one through. */
  roles?: readonly string[];
  /** As for {@link portcullis}: the address of the peer, for the loopback exemption of HTTP-7. */
  getPeerAddress?: (request: FastifyRequest) => string | undefined;
}

/** The body streams the plugin's content-type parser handed through unread, by request. */
const unreadBodies = new WeakMap<FastifyRequest, NodeJS.ReadableStream>();

/** The headers, peer address and TLS state of a request: what core checks before anything else. */
function connectionOf(
  request: FastifyRequest,
  getPeerAddress: PortcullisOptions["getPeerAddress"],
): Pick<HttpRequest, "header" | "peerAddress" | "secure"> {
  const { headers, socket } = request.raw;
  return {
    header(name) {
      const value = headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    // The socket's own address, never `request.ip`: with Fastify's `trustProxy` that is the
    // forwarded one, and only core's `http.trustedProxies` decides whom to believe (RL-3).
    peerAddress: getPeerAddress ? getPeerAddress(request) : socket.remoteAddress,
    secure: (socket as TLSSocket).encrypted === true,
  };
}

function toHttpRequest(request: FastifyRequest, options: Pick<PortcullisOptions, "getPeerAddress">): HttpRequest {
  const unread = unreadBodies.get(request);
  // No parser ran (a method without a body, or no body at all): the socket's stream, empty or
  // not read by anyone. A body some hook parsed on its own is taken as parsed, like Express's `req.body`.
  const parsedEarlier = unread === undefined && request.body !== undefined;
  return {
    ...connectionOf(request, options.getPeerAddress),
    method: request.raw.method ?? request.method,
    // The URL as the client sent it, prefix included: core matches it against `http.basePath`.
    url: request.raw.url ?? request.url,
    body: parsedEarlier ? null : nodeRequestBody(unread ?? request.raw),
    parsedBody: parsedEarlier ? request.body : undefined,
  };
}

function send(reply: FastifyReply, response: HttpResponse): FastifyReply {
  reply.code(response.status);
  reply.headers(response.headers);
  if (response.cookies) reply.header("set-cookie", response.cookies);
  return reply.send(response.body);
}

/** The Fastify errors raised about a body before the handler, which core answers in its own words instead (HTTP-5). */
const bodyErrors = new Set(["FST_ERR_CTP_INVALID_MEDIA_TYPE", "FST_ERR_CTP_EMPTY_TYPE", "FST_ERR_CTP_INVALID_CONTENT_LENGTH"]);

/** The key of the plugin's routes' `config` holding their handler (Fastify keeps only a bound copy in `routeOptions.handler`). */
const routeMark = "portcullisHandler";

/** The `config` of the route a request was routed to (the 404 handler's when none). */
const routeConfig = (request: FastifyRequest): Record<string, unknown> =>
  (request.routeOptions.config ?? {}) as unknown as Record<string, unknown>;

/** Removes a trailing slash from a Fastify prefix (`"/"` is the root, `""`). */
const trimmedPrefix = (prefix: string): string => (prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);

/**
 * The route paths, relative to the plugin's prefix, that reach `<basePath>/auth/*`: the
 * prefix must be `http.basePath` or a leading part of it, since core matches the full path
 * (and cookies and the OpenAPI document name it).
 */
function relativeAuthPath(auth: Auth, prefix: string): string {
  const { basePath } = auth.config;
  if (prefix === "" || basePath === prefix || basePath.startsWith(`${prefix}/`)) return `${basePath.slice(prefix.length)}/auth`;
  throw new Error(
    `portcullis is registered under the prefix "${prefix}", and http.basePath is "${basePath}": its routes are at "<http.basePath>/auth/…" as the client sees them. Set http.basePath to "${prefix}" (or one that starts with it), or register the plugin without a prefix.`,
  );
}

/** Registers the routes in an encapsulated context of their own, under the plugin's `prefix`. */
function routesPlugin(
  auth: Auth,
  serve: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>,
): FastifyPluginCallback {
  return (fastify, _options, done) => {
    try {
      registerRoutes(fastify, auth, serve);
    } catch (error) {
      done(error as Error);
      return;
    }
    done();
  };
}

function registerRoutes(
  fastify: FastifyInstance,
  auth: Auth,
  serve: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>,
): void {
  const prefix = trimmedPrefix(fastify.prefix);
  const authPath = relativeAuthPath(auth, prefix);
  // In this context only: every body reaches core unread, whatever parsers the app registered
  // (its JSON parser included), so that core applies its own byte limit on the streamed bytes
  // and its own content-type and JSON checks (HTTP-1, HTTP-2, HTTP-5).
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser("*", (request, payload, parsed) => {
    unreadBodies.set(request, payload);
    parsed(null, undefined);
  });
  // A content type Fastify cannot even read is refused by it before any parser; core decides instead.
  fastify.setErrorHandler((error: { code?: string }, request, reply) => {
    if (typeof error.code !== "string" || !bodyErrors.has(error.code) || reply.sent) throw error;
    return serve(request, reply);
  });
  // Marked, so that the hook of the registering context leaves what they serve to them.
  const options = { config: { [routeMark]: serve } };
  fastify.all(authPath, options, serve);
  fastify.all(`${authPath}/*`, options, serve);
  // The aliases under the base path but outside its `/auth` (`/users/me/password` with
  // `http.passwordChangeAlias`), each only when this auth turns it on.
  const basePath = authPath.slice(0, -"/auth".length);
  for (const route of routes.filter((route) => !route.atRoot && !route.path.startsWith("/auth/") && route.enabled?.(auth))) {
    fastify.all(`${basePath}${route.path}`, options, serve);
  }
  for (const route of routes.filter((route) => route.atRoot)) {
    if (prefix === "") fastify.all(route.path, options, serve);
    else if (!route.enabled || route.enabled(auth)) {
      throw new Error(
        `portcullis is registered under the prefix "${prefix}", so it cannot serve "${route.path}", which is at the root. Register it without a prefix (http.basePath already places the other routes).`,
      );
    }
  }
}

/** Serves a request with core, or hands it to Fastify's not-found handler when its path is not one of core's. */
function requestServer(
  auth: Auth,
  options: Pick<PortcullisOptions, "getPeerAddress">,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (request, reply) => {
    // The client is gone: nothing can answer it, and its address can no longer be read.
    if (request.raw.socket.destroyed) {
      reply.hijack();
      return reply;
    }
    const response = await handleRequest(auth, toHttpRequest(request, options));
    if (response === null) return reply.callNotFound() ?? reply;
    return send(reply, response);
  };
}

const portcullisPlugin: FastifyPluginCallback<PortcullisOptions> = (fastify: FastifyInstance, options, done) => {
  const { auth } = options ?? {};
  try {
    assertAuthArgument(auth, "portcullis", "app.register(portcullis, { auth })");
  } catch (error) {
    done(error as Error);
    return;
  }
  const serve = requestServer(auth, options);
  // In the context the plugin is registered in (the plugin is not encapsulated, but its routes
  // are): a request that core resolves to one of its paths but Fastify's router sent elsewhere
  // or nowhere (`//api/v1/auth/login`, `/api/v1/things/../auth/me`) is answered by core too,
  // as by the other adapters, so it never reaches an app route (RL-3). Its body is still unread.
  // A callback hook, so that the requests it passes on (all but a few) take no promise and no
  // microtask; the path test comes first, so they do not build `request.routeOptions` either.
  fastify.addHook("onRequest", (request, reply, done) => {
    if (!servesPath(auth, request.url) || routeConfig(request)[routeMark] === serve) {
      done();
      return;
    }
    serve(request, reply).then(() => done(), done);
  });
  // Declared up front, so that requireAuth setting it keeps every request of the same shape.
  if (!fastify.hasRequestDecorator("auth")) fastify.decorateRequest("auth", undefined);
  fastify.register(routesPlugin(auth, serve), { prefix: options.prefix ?? "" });
  done();
};

/**
 * The Fastify plugin that serves the Portcullis routes (`<basePath>/auth/*`,
 * `/.well-known/jwks.json`, and `<basePath>/users/me/password` with `http.passwordChangeAlias`):
 * `app.register(portcullis, { auth })`. All auth rules (TLS,
 * limits, JSON checks, tokens, status codes) are in `@portcullis/core`; this only translates
 * the request and the response.
 *
 * The routes are in an encapsulated context of their own, where the content-type parsers are
 * replaced by one that hands the body through unread, so core reads the raw bytes with the
 * route's limit whatever parsers (Fastify's JSON parser included) the rest of the app uses. The
 * plugin itself is not encapsulated (as with `fastify-plugin`): it adds an `onRequest` hook to the
 * context it is registered in, which has core answer a request whose path core resolves to one
 * of its routes but Fastify's router sent elsewhere or nowhere (`//api/v1/auth/login`), as the
 * other adapters do (RL-3); every other request passes on at once. It may be
 * registered inside another plugin and under a `prefix`; the prefix must be `http.basePath`
 * or a leading part of it, because core matches the path as the client sent it
 * (`register(portcullis, { auth, prefix: "/api" })` with the default base path `/api/v1`
 * serves `/api/v1/auth/…`). `/.well-known/jwks.json` is at the root, so with an asymmetric
 * signing key the plugin must be registered without a prefix.
 *
 * The client address is the socket's, whatever Fastify's `trustProxy` says: list your proxies
 * in `http.trustedProxies` instead (RL-3). The connection is TLS when the socket is (Fastify's
 * `https` option); behind a TLS-terminating proxy, list the proxy in `http.trustedProxies` (HTTP-7).
 *
 * @example
 * ```ts
 * import Fastify from "fastify";
 * import { portcullis, requireAuth } from "@portcullis/fastify";
 *
 * const app = Fastify();
 * await app.register(portcullis, { auth });
 * app.get("/api/v1/things", { preHandler: requireAuth(auth) }, async (request) => ({ owner: request.auth?.userId }));
 * await app.listen({ port: 3000 });
 * ```
 */
export const portcullis: FastifyPluginCallback<PortcullisOptions> = Object.assign(portcullisPlugin, {
  // Not encapsulated itself (fastify-plugin's flag), so that its hook covers the context it is
  // registered in; its routes and their content-type parser are in a context of their own.
  [Symbol.for("skip-override")]: true,
  [Symbol.for("fastify.display-name")]: "@portcullis/fastify",
  [Symbol.for("plugin-meta")]: { name: "@portcullis/fastify", fastify: "5.x" },
});

export default portcullis;

/** What Fastify's `frameworkErrors` server option takes. */
export type FrameworkErrorsHandler = NonNullable<FastifyServerOptions["frameworkErrors"]>;

/** Options of {@link frameworkErrorHandler}. */
export interface FrameworkErrorHandlerOptions {
  /** The same function as the plugin's `getPeerAddress`, if you pass one there. */
  getPeerAddress?: (request: FastifyRequest) => string | undefined;
  /**
   * Answers a framework error on a path that is not Portcullis's. Default: `reply.send(error)`,
   * which answers as Fastify does without the option: the error's status (400 for
   * `FST_ERR_BAD_URL`) and its JSON.
   */
  otherwise?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;
}

/**
 * A handler for Fastify's `frameworkErrors` server option, so that Portcullis answers the requests
 * on its paths that Fastify's router refuses before any route, hook or plugin runs (HTTP-5): a
 * path whose percent-escapes are malformed or not UTF-8 (`/api/v1/auth/%ff`,
 * `/api/v1/auth/sessions/%ZZ`: `FST_ERR_BAD_URL`). Core answers any framework error on its paths
 * as the other adapters answer the request, in the envelope; one on any other path goes to
 * `otherwise`, or is answered as Fastify answers it without the option.
 * Fastify takes the option only where the instance is made, so the plugin cannot set it itself.
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: frameworkErrorHandler(auth) });
 * await app.register(portcullis, { auth });
 * ```
 */
export function frameworkErrorHandler(auth: Auth, options: FrameworkErrorHandlerOptions = {}): FrameworkErrorsHandler {
  assertAuthArgument(auth, "frameworkErrorHandler", "Fastify({ frameworkErrors: frameworkErrorHandler(auth) })");
  const serve = requestServer(auth, options);
  const handle = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    if (!servesPath(auth, request.url)) {
      if (options.otherwise) options.otherwise(error, request, reply);
      else reply.send(error);
      return;
    }
    // No route runs this, so nothing else would answer a failure (a throwing getPeerAddress): core's 50000.
    serve(request, reply).catch((failure: unknown) => send(reply, errorResponse(auth, failure)));
  };
  return handle;
}

/**
 * A `preHandler` hook that lets a request through only over TLS (HTTP-7: loopback clients and
 * `http.unsafeAllowPlainHttp` excepted) with a live access token in the
 * `Authorization: Bearer` header (never the query string; AT-6), when `roles` is given only
 * for a user holding one of them, with `org` only for a token carrying an active organization
 * (and with `org: { roles }` only for a member holding one of them there; OR-7), and when
 * `maxAge`, `secondFactor` or `amr` is given only for
 * a session whose sign-in or latest re-authentication meets them (STUP-2). It sets
 * `request.auth` to the token's {@link AccessContext} (with `authTime` and `amr`). Otherwise it
 * answers in the Portcullis envelope: 40300 for plain HTTP, before the token is read; 40101 for
 * a missing, invalid, expired or revoked token; 40300 for a missing role or organization role, or no active organization; 40104 (HTTP 401) with
 * `data.required` when the session must step up. With `scopes` or `credentials` it accepts API
 * keys too (AK-2): `request.auth` is then an `ApiKeyContext` for a key (`kind: "api_key"`; type the
 * handler's request as {@link CredentialRequest}); a key lacking a scope, or where a sign-in is
 * asked, is 40300.
 *
 * @throws {TypeError} at once, for a `maxAge`, `secondFactor`, `amr`, `org`, `scopes` or `credentials` that is not one.
 * @example
 * ```ts
 * app.get("/api/v1/things", { preHandler: requireAuth(auth) }, async (request) => ({ owner: request.auth?.userId }));
 * app.delete("/api/v1/things/:id", { preHandler: requireAuth(auth, { roles: ["admin"] }) }, deleteThing);
 * app.post("/api/v1/payouts", { preHandler: requireAuth(auth, { maxAge: "5m", secondFactor: true }) }, sendPayout);
 * app.get("/api/v1/billing", { preHandler: requireAuth(auth, { org: { roles: ["owner"] } }) }, async (request) => ({ org: request.auth?.org?.id }));
 * ```
 */
export function requireAuth(auth: Auth, options: RequireAuthOptions = {}): preHandlerAsyncHookHandler {
  assertAuthArgument(auth, "requireAuth", 'requireAuth(auth) or requireAuth(auth, { roles: ["admin"] })');
  stepUpRequirementOf(options);
  organizationRequirementOf(options);
  credentialRequirementOf(options);
  const refuse = (reply: FastifyReply, error: unknown) => send(reply, errorResponse(auth, error));
  // Fastify calls a hook with `done`: then this is a callback hook, and Fastify chains no promise
  // of its own on each request. Called as its type says, with the request and reply only, it
  // returns the promise of the check.
  function requirePortcullisAuth(
    request: FastifyRequest,
    reply: FastifyReply,
    done?: HookHandlerDoneFunction,
  ): Promise<void> | undefined {
    let authorized: Promise<CredentialContext>;
    try {
      authorized = authorizeRequest(auth, connectionOf(request, options.getPeerAddress), options);
    } catch (error) {
      authorized = Promise.reject(error);
    }
    const checked = authorized.then(
      (access) => {
        // A key's context only where the options accept keys: CredentialRequest types it there.
        request.auth = access as AccessContext;
        done?.();
      },
      (error: unknown) => {
        try {
          refuse(reply, error);
        } catch (failure) {
          if (done === undefined) throw failure;
          done(failure as Error);
        }
      },
    );
    return done === undefined ? checked : undefined;
  }
  return requirePortcullisAuth as preHandlerAsyncHookHandler;
}
