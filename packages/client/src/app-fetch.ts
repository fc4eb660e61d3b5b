import type { AuthClientError } from "./errors.js";
import { type Session, invalidTokenCode } from "./session.js";
import { type StepUp, type StepUpRequirement, requirementOf, stepUpRequiredCode } from "./step-up.js";
import { type FetchFunction, type Transport, answerError, networkError, readEnvelope } from "./transport.js";

/** How the server sends its envelopes' HTTP status: `http.statusMode` of its configuration. */
export type StatusMode = "standard" | "always-200";

/** What {@link createAppFetch} needs. */
export interface AppFetchOptions {
  transport: Transport;
  session: Session;
  statusMode: StatusMode;
  /** Origins besides the API's that may receive the access token (`https://files.example.com`). */
  bearerOrigins: readonly string[];
  /** What a 40104 waits for: the client's step-up (STUP-2). Without it a 40104 is answered as it came. */
  stepUp?: StepUp;
}

/** The browser global the app fetch resolves relative URLs against, when there is one. */
const pageUrl = () => (globalThis as { location?: { href: string } }).location?.href;

/** The origin of the API's base URL, absolute or relative to the page; null when it has none (a relative base URL in Node). */
function originOf(baseUrl: string): string | null {
  try {
    return new URL(baseUrl, pageUrl()).origin;
  } catch {
    return null;
  }
}

/** A string or URL input made absolute against the API's base URL, or the page where the base URL is relative. */
function absoluteInput(input: string | URL | Request, baseUrl: string): string | URL | Request {
  if (typeof input !== "string") return input;
  try {
    return new URL(input, new URL(baseUrl, pageUrl()));
  } catch {
    return input;
  }
}

const isAbort = (error: unknown) => error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError");

/**
 * Makes `client.fetch`: `fetch` that sends the access token to the API's origin (and the
 * `bearerOrigins`), and on an answer refused for the token (40101 in the envelope, with status
 * 401, or any status under `always-200`) refreshes once, shared with every other request, and
 * sends the request again. An answer that asks for a step-up (40104, STUP-2) waits for
 * `options.stepUp` (the `stepUpRequired` event's listener re-authenticating), then the request is
 * sent once more; refused or unanswered, the 40104 is the answer. Requests to other origins go out
 * untouched, without the token.
 *
 * @example
 * ```ts
 * const appFetch = createAppFetch({ transport, session, statusMode: "standard", bearerOrigins: [] });
 * const response = await appFetch("/api/v1/things");
 * ```
 */
export function createAppFetch(options: AppFetchOptions): FetchFunction {
  const { transport, session, statusMode } = options;
  // A null origin (a relative base URL in Node) matches no request's origin.
  const trusted = new Set([originOf(transport.baseUrl), ...options.bearerOrigins.map(originOf)]);

  const send = async (request: Request): Promise<Response> => {
    try {
      return await transport.fetch(request);
    } catch (error) {
      throw isAbort(error) ? error : networkError(error);
    }
  };

  /** The envelope of an answer that may carry a refusal's code (status 401, or 200 under `always-200`), read from a copy. */
  const refusedEnvelope = async (response: Response) => {
    const mayCarryCode = response.status === 401 || (statusMode === "always-200" && response.status === 200);
    if (!mayCarryCode || !response.headers.get("content-type")?.includes("json")) return null;
    return readEnvelope(response.clone()).catch(() => null);
  };

  /** The 40101 error of an answer refused for its token, or null. Reads a copy; the answer's own body stays unread. */
  const refusal = async (response: Response): Promise<AuthClientError | null> => {
    const envelope = await refusedEnvelope(response);
    if (envelope?.code !== invalidTokenCode) return null;
    await response.body?.cancel().catch(() => undefined);
    return answerError(envelope);
  };

  /** What a 40104 answer requires (STUP-2), or null for any other answer. */
  const stepUpRequired = async (response: Response): Promise<StepUpRequirement | null> => {
    const envelope = await refusedEnvelope(response);
    return envelope?.code === stepUpRequiredCode ? requirementOf(envelope.data) : null;
  };

  return async (input, init) => {
    const template = new Request(absoluteInput(input, transport.baseUrl), init);
    if (!trusted.has(new URL(template.url).origin)) return send(template);
    const withToken = () =>
      session.withBearer((accessToken) => {
        const headers = new Headers(template.headers);
        if (accessToken) headers.set("authorization", `Bearer ${accessToken}`);
        return send(new Request(template.clone(), { headers }));
      }, refusal);
    const first = await withToken();
    const required = options.stepUp ? await stepUpRequired(first) : null;
    if (required === null || !(await options.stepUp?.satisfy(required))) return first;
    await first.body?.cancel().catch(() => undefined);
    return withToken();
  };
}
