import type { Auth } from "../auth.js";

/** The cookie that binds a provider sign-in to the browser that began it (OA-1). */
export const bindingCookieName = "portcullis_oauth";

/**
 * The `Set-Cookie` value of the binding: HttpOnly, SameSite=Lax (it must come back on the
 * provider's top-level redirect), scoped to the OAuth routes, `Secure` over TLS. A `maxAgeSeconds`
 * of 0 deletes it.
 */
export function bindingCookie(auth: Auth, value: string, secure: boolean, maxAgeSeconds: number): string {
  const attributes = [`Path=${auth.config.basePath}/auth/oauth`, "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`];
  if (secure) attributes.push("Secure");
  return [`${bindingCookieName}=${value}`, ...attributes].join("; ");
}

/** The binding cookie's value in a `Cookie` request header, or undefined. */
export function bindingFrom(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const pair of cookieHeader.split(";")) {
    const separator = pair.indexOf("=");
    if (separator !== -1 && pair.slice(0, separator).trim() === bindingCookieName) return pair.slice(separator + 1).trim();
  }
  return undefined;
}
