import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { clientAddressOf, isLoopbackAddress } from "./client-address.js";
import type { HttpRequest } from "./types.js";

type ConnectionFacts = Pick<HttpRequest, "header" | "peerAddress" | "secure">;

/** The answer to plain HTTP: it says how to fix a proxy setup and holds nothing the client sent. */
const tlsRequired =
  "TLS is required. If a proxy terminates TLS in front of this service, list its address in http.trustedProxies so that its X-Forwarded-Proto is believed.";

/**
 * True when the request reached this service over TLS (HTTP-7). When the socket's peer is a
 * trusted proxy (`http.trustedProxies`, RL-3) that sent `X-Forwarded-Proto`, every
 * comma-separated value must be `https` (a proxy that appends its own hop's scheme to the
 * header rather than setting it fails closed); otherwise the connection itself decides.
 */
export function isTlsRequest(auth: Auth, request: ConnectionFacts): boolean {
  const forwardedProto = request.header("x-forwarded-proto");
  if (forwardedProto !== undefined && request.peerAddress !== undefined && auth.proxyTrust(request.peerAddress)) {
    return forwardedProto.split(",").every((proto) => proto.trim().toLowerCase() === "https");
  }
  return request.secure;
}

/**
 * Refuses a request that did not arrive over TLS (HTTP-7; interface document §5.6), unless its
 * client address, resolved through the trusted proxies, is loopback (local development, like
 * Keycloak's "external requests" default) or `http.unsafeAllowPlainHttp` is set. An unknown
 * peer address is not exempt. Call it before reading any credential or body.
 *
 * @throws {AuthError} 40300, with a message that says how to declare a TLS-terminating proxy.
 */
export function requireTls(auth: Auth, request: ConnectionFacts): void {
  if (auth.config.unsafeAllowPlainHttp || isTlsRequest(auth, request)) return;
  const client = clientAddressOf(auth, request);
  if (client !== undefined && isLoopbackAddress(client)) return;
  throw new AuthError(ErrorCode.Forbidden, tlsRequired);
}
