/**
 * What went wrong, as an {@link AuthClientError} tells it:
 * - `"server"`: the server answered the envelope with a non-zero `code` (a refusal such as 40100,
 *   or 50000 with a `requestId`);
 * - `"network"`: no answer at all (offline, DNS, a refused connection, CORS);
 * - `"invalid_response"`: an answer that is not the Portcullis envelope (a proxy's HTML error page,
 *   a route that is not Portcullis's);
 * - `"passkey_ceremony"`: the browser's WebAuthn prompt did not complete (cancelled, timed out,
 *   no matching passkey); nothing was sent to the server;
 * - `"not_signed_in"`: an operation that needs tokens, on a client that has none (code 40101,
 *   status 0); nothing was sent.
 */
export type AuthClientErrorKind = "server" | "network" | "invalid_response" | "passkey_ceremony" | "not_signed_in";

/** The details of an {@link AuthClientError}. */
export interface AuthClientErrorDetails {
  kind: AuthClientErrorKind;
  /** The envelope's business code; null when there was no envelope. */
  code?: number | null;
  /** The HTTP status; 0 when there was no answer. */
  status?: number;
  requestId?: string;
  retryAfter?: number;
  /** The envelope's `data` of a refusal that carries one. */
  data?: unknown;
  cause?: unknown;
}

/**
 * The one error class of `@portcullis/client`. A refusal by the server keeps the contract's
 * business `code` (read it, not `status`: under `http.statusMode: "always-200"` every answer has
 * status 200), the HTTP `status`, the `requestId` of an internal error (50000, 50300) to quote to
 * the service's operators, and `retryAfter`, the seconds of a 42900's `Retry-After`. The message
 * is the server's fixed text or a fixed text of the client's: never a password, code, token or
 * URL. What caused a network or ceremony failure is kept as `cause`.
 *
 * @example
 * ```ts
 * try {
 *   await client.login({ username, password });
 * } catch (error) {
 *   if (error instanceof AuthClientError && error.code === 42900) showRetryIn(error.retryAfter);
 *   else if (error instanceof AuthClientError && error.kind === "network") showOffline();
 *   else throw error;
 * }
 * ```
 */
export class AuthClientError extends Error {
  override readonly name = "AuthClientError";
  readonly kind: AuthClientErrorKind;
  /** The contract's business code (40100, 40101, 42900, …); null for network, invalid-answer and ceremony failures. */
  readonly code: number | null;
  /** The HTTP status of the answer; 0 when there was none. */
  readonly status: number;
  /** The request id the server gave an internal error (50000, 50300), as its operators' logs know it. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again, from a 42900's `Retry-After` header. */
  readonly retryAfter: number | undefined;
  /**
   * The `data` a refusal carried, when it carried any: a 40104's `required` (and, switching to an
   * organization, `enrolmentRequired`), a 40300's `signInMethods`. Undefined otherwise.
   */
  readonly data: unknown;

  /** Made by the client for each failure; a test may make one to stand in for a server's refusal. */
  constructor(message: string, details: AuthClientErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = details.kind;
    this.code = details.code ?? null;
    this.status = details.status ?? 0;
    this.requestId = details.requestId;
    this.retryAfter = details.retryAfter;
    this.data = details.data;
  }
}
