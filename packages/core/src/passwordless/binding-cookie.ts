import type { Auth } from "../auth.js";
import { cookieValues, hostOnlyCookie } from "../http/cookies.js";
import { invalidSignIn } from "./sign-in-challenge.js";

/** The cookie that binds an email sign-in to the client that began it (PL-2), over plain HTTP. */
export const emailBindingCookieName = "portcullis_email_sign_in";

/** Its name over TLS: a `__Host-` cookie, which only this host can set or shadow (RFC 6265bis 4.1.3.2), as OAuth's binding (OA-10). */
export const hostEmailBindingCookieName = `__Host-${emailBindingCookieName}`;

/**
 * The `Set-Cookie` value of an email sign-in's binding: HttpOnly, SameSite=Lax, for the sign-in's
 * lifetime. Over TLS `__Host-portcullis_email_sign_in`, `Secure`, on `/`; over plain HTTP (a
 * development server on loopback) `portcullis_email_sign_in` on the email sign-in routes. A
 * `maxAgeSeconds` of 0 deletes it.
 */
export function emailBindingCookie(auth: Auth, value: string, secure: boolean, maxAgeSeconds: number): string {
  const plainPath = `${auth.config.basePath}/auth/email-sign-in`;
  return hostOnlyCookie({ name: emailBindingCookieName, value, secure, plainPath, sameSite: "Lax", maxAgeSeconds });
}

/**
 * The binding cookie's value in a `Cookie` request header, or undefined: over TLS only the
 * `__Host-` one counts, over plain HTTP only the plain one.
 *
 * @throws {AuthError} 40100 when the request carries it more than once: one was planted beside this host's own.
 */
export function emailBindingFrom(cookieHeader: string | undefined, secure: boolean): string | undefined {
  const values = cookieValues(cookieHeader, secure ? hostEmailBindingCookieName : emailBindingCookieName);
  if (values.length > 1) throw invalidSignIn();
  return values[0];
}
