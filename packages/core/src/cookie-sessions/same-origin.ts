import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { RouteContext } from "../http/route-types.js";

const crossOrigin = () =>
  new AuthError(ErrorCode.Forbidden, "The session cookie is accepted only from a page of this site's own origin");

/**
 * The origin a request was sent to: its scheme (TLS directly or per a trusted proxy, as
 * `RouteContext.secure` says) and its `Host` header, lower-cased. Undefined without a `Host`.
 */
function ownOrigin(context: Pick<RouteContext, "header" | "secure">): string | undefined {
  const host = context.header("host")?.trim().toLowerCase();
  return host ? `${context.secure ? "https" : "http"}://${host}` : undefined;
}

/**
 * Lets a request that the refresh cookie authenticates through only when a page of this origin sent
 * it (CK-3; the Fetch Metadata check, then the
 * Origin check, of OWASP's CSRF prevention cheat sheet): `Sec-Fetch-Site:
 * same-origin`; a browser that sends no `Sec-Fetch-Site` must send an `Origin` equal to the
 * request's own (scheme and `Host`). Any other `Sec-Fetch-Site` (`same-site`, `cross-site`, `none`),
 * another `Origin` (or `null`), or neither header is refused. Bearer and body-token requests never
 * come here: they carry no ambient credential.
 *
 * @throws {AuthError} 40300 for a request from anywhere else.
 */
export function requireSameOrigin(context: Pick<RouteContext, "header" | "secure">): void {
  const site = context.header("sec-fetch-site");
  if (site !== undefined) {
    if (site.trim().toLowerCase() === "same-origin") return;
    throw crossOrigin();
  }
  const origin = context.header("origin")?.trim().toLowerCase();
  if (origin === undefined || origin !== ownOrigin(context)) throw crossOrigin();
}
