import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { HttpRequest } from "./types.js";

/** The messages of the body refusals, for adapters whose framework refused a body first (HTTP-5). */
export const bodyRefusals = {
  tooLarge: "The request body is too large",
  notJson: "The request body is not valid JSON",
} as const;

const tooLarge = () => new AuthError(ErrorCode.MalformedParameter, bodyRefusals.tooLarge);
const malformed = (message: string) => new AuthError(ErrorCode.MalformedParameter, message);
const forbiddenKeys = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Reads a body stream up to `limit` bytes, counting the bytes as they arrive, so that a
 * chunked body or a false `Content-Length` cannot pass the limit (HTTP-1).
 */
export async function readBodyWithLimit(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > limit) throw tooLarge();
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, total);
}

function assertSafeKeys(value: unknown, depth = 0): void {
  if (depth > 32) throw malformed("The JSON body is nested too deeply");
  if (Array.isArray(value)) {
    for (const item of value) assertSafeKeys(item, depth + 1);
  } else if (value !== null && typeof value === "object") {
    for (const key of Object.keys(value)) {
      if (forbiddenKeys.has(key)) throw malformed(`The key "${key}" is not allowed`);
      assertSafeKeys((value as Record<string, unknown>)[key], depth + 1);
    }
  }
}

/** True when the `Content-Type` is `application/json`, with or without parameters (HTTP-2). */
export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/**
 * Reads a request's JSON object body (HTTP-1, HTTP-2, PW-5): `application/json` only; at most
 * `limit` bytes; valid JSON; an object at the top; no `__proto__`, `constructor` or
 * `prototype` key anywhere. An empty body reads as `{}`. Every failure is 40002.
 */
export async function readJsonBody(request: HttpRequest, limit: number): Promise<Record<string, unknown>> {
  if (!isJsonContentType(request.header("content-type"))) throw malformed("The request body must be application/json");
  const declared = request.header("content-length");
  if (declared !== undefined && Number(declared) > limit) throw tooLarge();
  let value: unknown;
  if (request.body === null) {
    value = request.parsedBody ?? {};
    if (JSON.stringify(value).length > limit) throw tooLarge();
  } else {
    const text = (await readBodyWithLimit(request.body, limit)).toString("utf8");
    if (text.trim() === "") return {};
    try {
      value = JSON.parse(text);
    } catch {
      throw malformed(bodyRefusals.notJson);
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw malformed("The request body must be a JSON object");
  assertSafeKeys(value);
  return value as Record<string, unknown>;
}
