import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { cookieValues, hostOnlyCookie } from "../http/cookies.js";
import type { ParameterDoc, RouteContext } from "../http/route-types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { readRefreshToken } from "../tokens/refresh-token.js";
import { requireSameOrigin } from "./same-origin.js";

/** The refresh cookie's name over plain HTTP (a development server on loopback), scoped to the auth routes. */
export const refreshCookieName = "portcullis_refresh";

/**
 * Its name over TLS: a `__Host-` cookie, which only this host can set (with `Secure`, `Path=/` and
 * no `Domain`), so a sibling subdomain can neither plant nor shadow it (RFC 6265bis 4.1.3.2).
 */
export const hostRefreshCookieName = `__Host-${refreshCookieName}`;

/**
 * The request header by which a browser client asks for cookie mode (CK-1): with the value `cookie`,
 * an answer that completes a sign-in, a refresh or a re-authentication puts the refresh token in
 * the refresh cookie and leaves it out of the body. Without it every answer is as before.
 */
export const tokenDeliveryHeader = "x-portcullis-token-delivery";

/** Whether the request asks for cookie mode: `X-Portcullis-Token-Delivery: cookie` (CK-1). */
export function asksCookieDelivery(context: Pick<RouteContext, "header">): boolean {
  return context.header(tokenDeliveryHeader)?.trim().toLowerCase() === "cookie";
}

/**
 * The `Set-Cookie` value of a refresh token (CK-1): HttpOnly, SameSite=Strict, for the token's
 * remaining lifetime (`expiresAt`, epoch milliseconds; 0 or past deletes it). Over TLS
 * `__Host-portcullis_refresh` on `/` with `Secure`; over plain HTTP `portcullis_refresh` on the
 * auth routes. Only refresh and logout read it.
 */
export function refreshCookie(auth: Auth, token: string, secure: boolean, expiresAt: number): string {
  return hostOnlyCookie({
    name: refreshCookieName,
    value: token,
    secure,
    plainPath: `${auth.config.basePath}/auth`,
    sameSite: "Strict",
    maxAgeSeconds: Math.max(0, Math.floor((expiresAt - auth.now()) / 1000)),
  });
}

/** The `Set-Cookie` value that deletes the refresh cookie (`Max-Age=0`): a logout's (CK-5). */
export function clearedRefreshCookie(auth: Auth, secure: boolean): string {
  return refreshCookie(auth, "", secure, 0);
}

/**
 * The refresh cookie of a token set, for its refresh token's remaining lifetime as stored (its idle
 * lifetime, cut at the session's absolute end: RT-4), read from the session the token names; the
 * configured idle lifetime should the store no longer hold it.
 */
export async function refreshCookieOf(auth: Auth, tokens: TokenSet, secure: boolean): Promise<string> {
  const token = await readRefreshToken(auth, tokens.refreshToken);
  const session = token === null ? null : await auth.storage.sessions.findSession(token.sessionId);
  const expiresAt = session?.refreshExpiresAt ?? auth.now() + auth.config.ttl.refreshIdle * 1000;
  return refreshCookie(auth, tokens.refreshToken, secure, expiresAt);
}

/** The refresh token a refresh or logout request presents, and whether the refresh cookie carried it. */
export interface PresentedRefreshToken {
  /** The body's `refreshToken` as it came (the flow checks it), the cookie's value, or undefined. */
  token: unknown;
  fromCookie: boolean;
}

const noCookie = () => new AuthError(ErrorCode.InvalidToken, "No session cookie was sent; sign in again");

/**
 * The refresh token of a refresh or logout request: the body's `refreshToken` when there is one
 * (bearer clients, unchanged), else the refresh cookie. Over TLS only `__Host-portcullis_refresh`
 * counts, over plain HTTP only `portcullis_refresh`. A request the cookie authenticates must come
 * from a page of this origin (CK-3, see {@link requireSameOrigin}).
 *
 * @throws {AuthError} 40300 a cookie sent from another origin (CK-3); 40101 the cookie sent more than
 * once (CK-4: one of them planted by another site) or empty, or, in cookie mode, no cookie at all.
 */
export function presentedRefreshToken(context: RouteContext): PresentedRefreshToken {
  if (context.body.refreshToken !== undefined) return { token: context.body.refreshToken, fromCookie: false };
  const values = cookieValues(context.header("cookie"), context.secure ? hostRefreshCookieName : refreshCookieName);
  if (values.length === 0) {
    if (asksCookieDelivery(context)) throw noCookie();
    // As before cookie mode: the flow answers 40001 for the missing `refreshToken`.
    return { token: undefined, fromCookie: false };
  }
  requireSameOrigin(context);
  if (values.length > 1) throw new AuthError(ErrorCode.InvalidToken, "The session cookie was sent more than once; sign in again");
  if (values[0] === "") throw noCookie();
  return { token: values[0], fromCookie: true };
}

/** The header parameter of every route that answers tokens, for the OpenAPI document. */
export const tokenDeliveryParameter: ParameterDoc = {
  name: "X-Portcullis-Token-Delivery",
  in: "header",
  description:
    "`cookie` asks for cookie mode (CK-1): the refresh token comes in the HttpOnly refresh cookie, `__Host-portcullis_refresh` (Secure, `Path=/`) over TLS or `portcullis_refresh` (path of the auth routes) over plain HTTP, SameSite=Strict, and is left out of `data`. Absent: `data.refreshToken`, as before",
  schema: { type: "string", enum: ["cookie"] },
};

/** The cookie parameters of refresh and logout, for the OpenAPI document. */
export const refreshCookieParameters: ParameterDoc[] = [
  {
    name: hostRefreshCookieName,
    in: "cookie",
    description:
      "Over TLS, the refresh token of cookie mode, read when the body has no `refreshToken`; sent twice, 40101 (CK-4); from a page of another origin, 40300 (CK-3)",
  },
  {
    name: refreshCookieName,
    in: "cookie",
    description: "The same over plain HTTP (development on loopback); ignored over TLS",
  },
];
