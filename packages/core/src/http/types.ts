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
  /** The socket's peer address. */
  peerAddress: string | undefined;
}

/** A response for the adapter to send as it is. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The response envelope of every route (contract: Envelope). */
export interface Envelope {
  code: number;
  message: string;
  data?: unknown;
  requestId?: string;
}
