import {
  type AccessContext,
  type Auth,
  AuthError,
  ErrorCode,
  type HttpRequest,
  type HttpResponse,
  authorizeRequest,
  bodyRefusals,
  errorResponse,
  handleRequest,
  isAuthPath,
} from "@portcullis/core";
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from "express";

declare global {
  namespace Express {
    interface Request {
      /** Who the bearer token speaks for; set by {@link requireAuth} before your handler runs. */
      auth?: AccessContext;
    }
  }
}

/** Options of {@link authRouter}. */
export interface AuthRouterOptions {
  /**
   * The address of the peer that sent the request. Default: the socket's remote address.
   * Do not return a forwarded address here: Portcullis reads `X-Forwarded-For` itself, and
   * only from the proxies listed in `http.trustedProxies` (RL-3).
   */
  getPeerAddress?: (req: Request) => string | undefined;
}

/** Options of {@link requireAuth}. */
export interface RequireAuthOptions {
  /** The user must hold at least one of these roles, or the answer is 40300. */
  roles?: readonly string[];
}

/** What {@link authRouter} returns: the route handler, then the handler of errors raised before it on its paths. */
export type AuthRouter = [RequestHandler, ErrorRequestHandler];

/** True once some earlier middleware (`express.json()`, body-parser) has read the request body. */
function bodyWasConsumed(req: Request): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded;
}

function toHttpRequest(req: Request, options: AuthRouterOptions): HttpRequest {
  const consumed = bodyWasConsumed(req);
  return {
    method: req.method,
    url: req.url,
    header(name) {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    // Iterating without destroying on an early stop: when core refuses an oversized body
    // halfway, the socket must stay open for the 40002 answer (HTTP-1).
    body: consumed ? null : { [Symbol.asyncIterator]: () => req.iterator({ destroyOnReturn: false }) },
    parsedBody: consumed ? req.body : undefined,
    peerAddress: options.getPeerAddress ? options.getPeerAddress(req) : req.socket.remoteAddress,
  };
}

function send(res: Response, response: HttpResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.end(response.body);
}

/** The words core uses for the same refusals, so an answer does not depend on who read the body (HTTP-5). */
const bodyParserMessages: Record<string, string> = {
  "entity.too.large": bodyRefusals.tooLarge,
  "entity.parse.failed": bodyRefusals.notJson,
};

/** The error a body parser (`express.json()`) passes to `next` for a body it refused, or undefined. */
function bodyParserFailure(error: unknown): string | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof type === "string" && typeof status === "number" && status >= 400 && status < 500 ? type : undefined;
}

/**
 * Mounts the Portcullis routes (`<basePath>/auth/*` and `/.well-known/jwks.json`) in an
 * Express 4 or 5 app. Requests for other paths go on to the rest of the app untouched.
 *
 * It returns two middleware for `app.use`: the routes, and an error handler that answers, in
 * the Portcullis envelope (40002), a body that an earlier `express.json()` refused on these
 * paths. Everything else (limits, JSON checks, tokens, status codes) is decided by
 * `@portcullis/core`; the body is read from the stream with the route's byte limit, or taken
 * from `req.body` when a body parser ran first.
 *
 * Mounted under a path (`app.use("/x", authRouter(auth))`), the routes are matched against
 * the path below it, so set `http.basePath` to match.
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
  const routesHandler: RequestHandler = (req, res, next) => {
    handleRequest(auth, toHttpRequest(req, options)).then((response) => {
      if (response === null) next();
      else send(res, response);
    }, next);
  };
  const bodyErrorHandler: ErrorRequestHandler = (error: unknown, req: Request, res: Response, next: NextFunction) => {
    const failure = bodyParserFailure(error);
    if (failure === undefined || res.headersSent || !isAuthPath(auth, req.url)) {
      next(error);
      return;
    }
    const message = bodyParserMessages[failure];
    send(res, errorResponse(auth, new AuthError(ErrorCode.MalformedParameter, message, { cause: error })));
  };
  return [routesHandler, bodyErrorHandler];
}

/**
 * Middleware that lets a request through only with a live access token in the
 * `Authorization: Bearer` header (never the query string; AT-6), and, when `roles` is given,
 * only for a user holding one of them. It sets `req.auth` to the token's
 * {@link AccessContext}. Otherwise it answers in the Portcullis envelope: 40101 for a
 * missing, invalid, expired or revoked token, 40300 for a missing role.
 *
 * @example
 * ```ts
 * app.get("/api/v1/things", requireAuth(auth), (req, res) => res.json({ owner: req.auth?.userId }));
 * app.delete("/api/v1/things/:id", requireAuth(auth, { roles: ["admin"] }), deleteThing);
 * ```
 */
export function requireAuth(auth: Auth, options: RequireAuthOptions = {}): RequestHandler {
  return (req, res, next) => {
    authorizeRequest(auth, req.headers.authorization, options).then(
      (access) => {
        req.auth = access;
        next();
      },
      (error: unknown) => send(res, errorResponse(auth, error)),
    );
  };
}
