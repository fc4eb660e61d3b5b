import type { Auth } from "../auth.js";
import { httpStatusFor } from "../errors/codes.js";
import type { Envelope, HttpResponse } from "./types.js";

/** The headers every auth response carries (HTTP-4). */
export function responseHeaders(cacheControl = "no-store"): Record<string, string> {
  return {
    "content-type": "application/json; charset=utf-8",
    "cache-control": cacheControl,
    "x-content-type-options": "nosniff",
  };
}

/**
 * The HTTP status an envelope with this business code travels with: {@link httpStatusFor}, or
 * 200 for every code under `http.statusMode: "always-200"`.
 *
 * @example
 * ```ts
 * envelopeStatus(auth, 42900); // 429, or 200 in "always-200" mode
 * ```
 */
export function envelopeStatus(auth: Auth, code: number): number {
  return auth.config.statusMode === "always-200" ? 200 : httpStatusFor(code);
}

/** Builds the envelope response for a business code, honouring `statusMode`. */
export function envelopeResponse(auth: Auth, envelope: Envelope, retryAfterSeconds?: number): HttpResponse {
  const headers = responseHeaders();
  if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds);
  return { status: envelopeStatus(auth, envelope.code), headers, body: JSON.stringify(envelope) };
}
