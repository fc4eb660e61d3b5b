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

/** What {@link hostOnlyCookie} makes a `Set-Cookie` value of. */
export interface HostOnlyCookie {
  /** The name over plain HTTP; over TLS it gets the `__Host-` prefix. */
  name: string;
  value: string;
  /** Whether the request arrived over TLS (`RouteContext.secure`). */
  secure: boolean;
  /** The `Path` over plain HTTP; over TLS a `__Host-` cookie must have `Path=/`. */
  plainPath: string;
  sameSite: "Strict" | "Lax";
  /** 0 deletes the cookie. */
  maxAgeSeconds: number;
}

/**
 * The `Set-Cookie` value of an HttpOnly cookie of this host, never of a `Domain`. Over TLS
 * `__Host-<name>` on `/` with `Secure`, which only this host can set, so a sibling subdomain cannot
 * plant or shadow it (RFC 6265bis 4.1.3.2); over plain HTTP (a development server on loopback) `<name>`
 * scoped to `plainPath`.
 */
export function hostOnlyCookie({ name, value, secure, plainPath, sameSite, maxAgeSeconds }: HostOnlyCookie): string {
  const attributes = [`Path=${secure ? "/" : plainPath}`, "HttpOnly", `SameSite=${sameSite}`, `Max-Age=${maxAgeSeconds}`];
  if (secure) attributes.push("Secure");
  return [`${secure ? `__Host-${name}` : name}=${value}`, ...attributes].join("; ");
}

/**
 * The `Set-Cookie` value that hands a browser its device token (RL-5): HttpOnly,
 * SameSite=Strict (only the app's own pages sign in with it), for `throttle.deviceTokenLifetime`.
 * Over TLS `__Host-portcullis_device` on `/` with `Secure`; over plain HTTP `portcullis_device`
 * scoped to the auth routes.
 */
export function deviceCookie(auth: Auth, token: string, secure: boolean): string {
  return hostOnlyCookie({
    name: deviceCookieName,
    value: token,
    secure,
    plainPath: `${auth.config.basePath}/auth`,
    sameSite: "Strict",
    maxAgeSeconds: auth.config.throttle.deviceTokenLifetimeSeconds,
  });
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
