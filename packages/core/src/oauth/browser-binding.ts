import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { cookieValues, hostOnlyCookie } from "../http/cookies.js";

/** The cookie that binds a provider sign-in to the browser that began it (OA-1), over plain HTTP. */
export const bindingCookieName = "portcullis_oauth";

/**
 * Its name over TLS (OA-10). A browser accepts a `__Host-` cookie only from the host itself,
 * with `Secure`, `Path=/` and no `Domain`, so a sibling subdomain can neither set it nor shadow
 * it with a cookie of its own (cookie tossing; RFC 6265bis 4.1.3.2).
 */
export const hostBindingCookieName = `__Host-${bindingCookieName}`;

/**
 * The `Set-Cookie` value of the binding: HttpOnly, SameSite=Lax (it must come back on the
 * provider's top-level redirect). Over TLS it is `__Host-portcullis_oauth`, `Secure`, on `/`
 * (OA-10); over plain HTTP (a development server on localhost) `portcullis_oauth`, scoped to the
 * OAuth routes. A `maxAgeSeconds` of 0 deletes it.
 */
export function bindingCookie(auth: Auth, value: string, secure: boolean, maxAgeSeconds: number): string {
  const plainPath = `${auth.config.basePath}/auth/oauth`;
  return hostOnlyCookie({ name: bindingCookieName, value, secure, plainPath, sameSite: "Lax", maxAgeSeconds });
}

/**
 * The binding cookie's value in a `Cookie` request header, or undefined: over TLS only
 * `__Host-portcullis_oauth` counts, over plain HTTP only `portcullis_oauth`.
 *
 * @throws {AuthError} 40100 when the request carries that cookie more than once (OA-10): a
 * cookie another subdomain set beside this host's own, which a browser may send first.
 */
export function bindingFrom(cookieHeader: string | undefined, secure: boolean): string | undefined {
  const values = cookieValues(cookieHeader, secure ? hostBindingCookieName : bindingCookieName);
  if (values.length > 1) {
    throw new AuthError(ErrorCode.AuthenticationFailed, "The sign-in cookie was sent more than once; start the sign-in again");
  }
  return values[0];
}
