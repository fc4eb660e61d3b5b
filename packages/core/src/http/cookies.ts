import type { Auth } from "../auth.js";

/** Every value of the cookie `name` in a `Cookie` request header, in the order the client sent them. */
export function cookieValues(cookieHeader: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const pair of cookieHeader?.split(";") ?? []) {
    const separator = pair.indexOf("=");
    if (separator !== -1 && pair.slice(0, separator).trim() === name) values.push(pair.slice(separator + 1).trim());
  }
  return values;
}

/** The device cookie's name over plain HTTP (a development server on loopback). */
export const deviceCookieName = "portcullis_device";

/**
 * Its name over TLS: a `__Host-` cookie, which only this host can set (with `Secure`, `Path=/`
 * and no `Domain`), so a sibling subdomain cannot plant one (RFC 6265bis 4.1.3.2).
 */
export const hostDeviceCookieName = `__Host-${deviceCookieName}`;

/**
 * The `Set-Cookie` value that hands a browser its device token (RL-5): HttpOnly,
 * SameSite=Strict (only the app's own pages sign in with it), for `throttle.deviceTokenLifetime`.
 * Over TLS `__Host-portcullis_device` on `/` with `Secure`; over plain HTTP `portcullis_device`
 * scoped to the auth routes.
 */
export function deviceCookie(auth: Auth, token: string, secure: boolean): string {
  const [name, path] = secure ? [hostDeviceCookieName, "/"] : [deviceCookieName, `${auth.config.basePath}/auth`];
  const attributes = [
    `Path=${path}`,
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${auth.config.throttle.deviceTokenLifetimeSeconds}`,
  ];
  if (secure) attributes.push("Secure");
  return [`${name}=${token}`, ...attributes].join("; ");
}

/**
 * The device token of a request's device cookie: over TLS only the `__Host-` one counts. None
 * when the cookie is absent or sent more than once (one of them planted by another site); the
 * sign-in then spends the account's budget, as a client without a token does.
 */
export function deviceTokenFromCookie(cookieHeader: string | undefined, secure: boolean): string | undefined {
  const values = cookieValues(cookieHeader, secure ? hostDeviceCookieName : deviceCookieName);
  return values.length === 1 ? values[0] : undefined;
}
