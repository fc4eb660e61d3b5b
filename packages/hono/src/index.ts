import {
  type AccessContext,
  type Auth,
  type HttpRequest,
  type HttpResponse,
  authorizeRequest,
  errorResponse,
  handleRequest,
} from "@portcullis/core";
import { type Context, Hono, type MiddlewareHandler } from "hono";

/** The variables {@link requireAuth} sets on the context: `c.get("auth")`. */
export type AuthVariables = { auth: AccessContext };

/** Options of {@link authRoutes} and {@link authApp}. */
export interface AuthRoutesOptions {
  /**
   * The address of the peer that sent the request. Default: the socket's remote address as
   * `@hono/node-server` provides it (`c.env.incoming.socket.remoteAddress`); on other runtimes
   * pass your platform's, e.g. `getConnInfo(c).remote.address`. Do not return a forwarded
   * address here: Portcullis reads `X-Forwarded-For` itself, and only from the proxies listed
   * in `http.trustedProxies` (RL-3).
   */
  getPeerAddress?: (c: Context) => string | undefined;
}

/** Options of {@link requireAuth}. */
export interface RequireAuthOptions {
  /** The user must hold at least one of these roles, or the answer is 40300. */
  roles?: readonly string[];
}

function nodePeerAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/** The path and query of a request URL, without the scheme and host. */
function pathAndQuery(href: string): string {
  const start = href.indexOf("/", href.indexOf("://") + 3);
  return start === -1 ? "/" : (href.slice(start).split("#", 1)[0] as string);
}

async function toHttpRequest(c: Context, options: AuthRoutesOptions): Promise<HttpRequest> {
  const consumed = c.req.raw.bodyUsed;
  return {
    method: c.req.method,
    url: pathAndQuery(c.req.url),
    header: (name) => c.req.header(name),
    // Streamed: core counts the bytes as they arrive, so a chunked body cannot pass the limit (HTTP-1).
    body: consumed ? null : c.req.raw.body,
    // An earlier middleware read the body: Hono keeps it; what is not JSON reaches core as text, which it refuses.
    parsedBody: consumed ? await c.req.json().catch(() => "") : undefined,
    peerAddress: (options.getPeerAddress ?? nodePeerAddress)(c),
  };
}

function toResponse(response: HttpResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}

/**
 * Middleware that serves the Portcullis routes (`<basePath>/auth/*` and
 * `/.well-known/jwks.json`) and passes every other request on with `next()`. All auth rules
 * (limits, JSON checks, tokens, status codes) are in `@portcullis/core`; this only translates
 * the request and the response. Paths are matched as the client sent them, whatever the
 * middleware is mounted under, so `http.basePath` must be the full prefix.
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
  return async (c, next) => {
    const response = await handleRequest(auth, await toHttpRequest(c, options));
    if (response === null) {
      await next();
      return;
    }
    return toResponse(response);
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
  const app = new Hono();
  app.use(authRoutes(auth, options));
  return app;
}

/**
 * Middleware that lets a request through only with a live access token in the
 * `Authorization: Bearer` header (never the query string; AT-6), and, when `roles` is given,
 * only for a user holding one of them. It sets `c.get("auth")` to the token's
 * {@link AccessContext}. Otherwise it answers in the Portcullis envelope: 40101 for a missing,
 * invalid, expired or revoked token, 40300 for a missing role.
 *
 * @example
 * ```ts
 * const app = new Hono<{ Variables: AuthVariables }>();
 * app.get("/api/v1/things", requireAuth(auth), (c) => c.json({ owner: c.get("auth").userId }));
 * app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), deleteThing);
 * ```
 */
export function requireAuth(auth: Auth, options: RequireAuthOptions = {}): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    let access: AccessContext;
    try {
      access = await authorizeRequest(auth, c.req.header("authorization"), options);
    } catch (error) {
      return toResponse(errorResponse(auth, error));
    }
    c.set("auth", access);
    await next();
  };
}
