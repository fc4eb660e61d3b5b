import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/** How much of a provider's answer is read, and for how long (OA-11). */
export interface AnswerLimits {
  /** The most bytes of one answer's body (after content decoding) that are read. */
  maxBytes: number;
  /** How long one request may take, from sending it to the last byte of its answer. */
  timeoutMs: number;
}

/**
 * A provider request that failed before its answer could be judged: unreachable, slower than
 * the time limit, or longer than the size limit. Kept as the `cause` of a 50300 (OA-11).
 */
export class ProviderRequestFailed extends Error {
  override name = "ProviderRequestFailed";
}

/** The 50300 of a provider that cannot be reached or whose answer is over a limit; `cause` is kept for `onInternalError`. */
export function providerUnreachable(cause: unknown): AuthError {
  return new AuthError(ErrorCode.Unavailable, "The sign-in provider could not be reached", { cause });
}

/** Reads a body to its end, refusing it as soon as it passes `maxBytes`: never more than that is held. */
async function boundedBody(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new ProviderRequestFailed(`The provider's answer is longer than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
}

/**
 * A `fetch` for oauth4webapi's `customFetch` (discovery, JWKS, token, user-info): one deadline
 * for the request and its whole answer, and the body read as it streams, up to
 * `limits.maxBytes`. Answers a `Response` holding the body it read, so oauth4webapi parses
 * only an answer within the limits. A GET (discovery, JWKS, user-info) that fails before any
 * answer is sent once more; the token request, a POST, is not.
 *
 * @throws {ProviderRequestFailed} unreachable, over the deadline, or over the size, with the
 * underlying error as its `cause`.
 */
export async function boundedFetch(url: string, init: RequestInit, limits: AnswerLimits): Promise<Response> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal }).catch((error: unknown) => {
      // A pooled connection the provider closed as it was reused fails before any answer
      // (ECONNRESET): a GET is sent once more, on a new connection, within the same deadline.
      if (init.method !== "GET") throw error;
      return fetch(url, { ...init, signal });
    });
    const body = response.body === null ? null : await boundedBody(response.body, limits.maxBytes);
    const { status, statusText, headers } = response;
    return new Response(body?.byteLength ? body : null, { status, statusText, headers });
  } catch (cause) {
    if (cause instanceof ProviderRequestFailed) throw cause;
    const late = signal.aborted;
    throw new ProviderRequestFailed(
      late ? `The provider did not answer within ${limits.timeoutMs} ms` : "The provider could not be reached",
      { cause },
    );
  }
}
