/** A request as an adapter hands it to core: nothing framework-specific. */
export interface HttpRequest {
  method: string;
  /** The path relative to where the adapter is mounted, with the query string if any. */
  url: string;
  /** A header's value by lower-case name, or undefined. */
  header(name: string): string | undefined;
  /** The raw body bytes as they stream in; read with the route's byte limit (HTTP-1). */
  body: AsyncIterable<Uint8Array> | null;
  /**
   * A body some earlier middleware already parsed (Express with `express.json()`), used only
   * when the stream was consumed; it is checked like a parsed body.
   */
  parsedBody?: unknown;
  /**
   * Set when an earlier body parser refused the body (Express's `express.json()` passes its
   * error on): core answers the refusal where it would have read the body, after the TLS and
   * token checks, so the answer does not depend on who read the body (HTTP-5).
   */
  bodyRefusal?: "tooLarge" | "notJson";
  /**
   * The socket's peer address. Undefined (or empty) means the adapter could not tell; core
   * then answers 50000 rather than skip the per-address throttle (RL-3).
   */
  peerAddress: string | undefined;
  /**
   * True when the connection to this process is TLS. Behind a TLS-terminating proxy it is
   * false, and core believes the proxy's `X-Forwarded-Proto` only when the peer is one of
   * `http.trustedProxies` (HTTP-7).
   */
  secure: boolean;
}

/** A response for the adapter to send as it is. */
export interface HttpResponse {
  status: number;
  /** Single-valued headers by lower-case name. */
  headers: Record<string, string>;
  /** `Set-Cookie` values, each sent as a header of its own. */
  cookies?: string[];
  body: string;
}

/** The response envelope of every route (contract: Envelope). */
export interface Envelope {
  code: number;
  message: string;
  data?: unknown;
  requestId?: string;
}
