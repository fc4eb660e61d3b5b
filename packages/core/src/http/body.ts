import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { HttpRequest } from "./types.js";

/** The messages of the body refusals, also for a body an adapter's framework refused first (HTTP-5). */
const bodyRefusals = {
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

const maxDepth = 32;

/**
 * Walks a JSON value with an explicit stack, so that no depth of nesting can exhaust the call
 * stack: refuses anything nested deeper than 32 levels, and any `__proto__`, `constructor` or
 * `prototype` key (PW-5, HTTP-5).
 */
function assertSafeStructure(root: unknown): void {
  const pending: [value: unknown, depth: number][] = [[root, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (depth > maxDepth) throw malformed("The JSON body is nested too deeply");
    if (value === null || typeof value !== "object") continue;
    for (const [key, child] of Object.entries(value)) {
      if (forbiddenKeys.has(key)) throw malformed(`The key "${key}" is not allowed`);
      pending.push([child, depth + 1]);
    }
  }
}

/** True when the `Content-Type` is `application/json`, with or without parameters (HTTP-2). */
export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());
}

/**
 * Reads a request's JSON object body (HTTP-1, HTTP-2, HTTP-5, PW-5): `application/json` only;
 * at most `limit` bytes; valid JSON; at most 32 levels deep; no `__proto__`, `constructor` or
 * `prototype` key anywhere; an object at the top. A body an earlier middleware parsed is
 * checked the same way, its depth and keys before its size is measured, so that no nesting
 * can reach `JSON.stringify`. An empty body reads as `{}`. Every failure is 40002.
 */
export async function readJsonBody(request: HttpRequest, limit: number): Promise<Record<string, unknown>> {
  if (!isJsonContentType(request.header("content-type"))) throw malformed("The request body must be application/json");
  if (request.bodyRefusal !== undefined) throw malformed(bodyRefusals[request.bodyRefusal]);
  if (Number(request.header("content-length")) > limit) throw tooLarge();
  let value: unknown;
  if (request.body !== null) {
    const text = (await readBodyWithLimit(request.body, limit)).toString("utf8");
    if (text.trim() === "") return {};
    try {
      value = JSON.parse(text);
    } catch {
      throw malformed(bodyRefusals.notJson);
    }
  } else if (request.parsedBody === undefined) {
    return {};
  } else {
    value = request.parsedBody;
  }
  assertSafeStructure(value);
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw malformed("The request body must be a JSON object");
  if (request.body === null && Buffer.byteLength(JSON.stringify(value)) > limit) throw tooLarge();
  return value as Record<string, unknown>;
}

/** True when the `Content-Type` is `application/x-www-form-urlencoded`, with no charset or UTF-8's. */
export function isFormContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type = "", ...parameters] = contentType.split(";").map((part) => part.trim().toLowerCase());
  if (type !== "application/x-www-form-urlencoded") return false;
  return parameters.every((parameter) => !parameter.startsWith("charset=") || /^charset="?utf-8"?$/.test(parameter));
}

/** Decodes one name or value of a form (`+` is a space, then percent-escapes as UTF-8), or throws 40002. */
function formComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw malformed("The form body holds a malformed percent-escape");
  }
}

const givenTwice = (name: string) => malformed(`${name.slice(0, 64)} must be given once`);

/** The parameters of a form's text, each given once (RFC 6749 §3.2), in an object without a prototype. */
function formParameters(text: string): Record<string, string> {
  const parameters: Record<string, string> = Object.create(null);
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    const name = formComponent(equals === -1 ? pair : pair.slice(0, equals));
    const value = equals === -1 ? "" : formComponent(pair.slice(equals + 1));
    if (Object.hasOwn(parameters, name)) throw givenTwice(name);
    parameters[name] = value;
  }
  return parameters;
}

/** The parameters of a body an earlier middleware parsed (`express.urlencoded()`): strings only, each once. */
function parsedFormParameters(value: unknown, limit: number): Record<string, string> {
  if (typeof value === "string") {
    if (Buffer.byteLength(value) > limit) throw tooLarge();
    return formParameters(value);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw malformed("The request body must be a form");
  const parameters: Record<string, string> = Object.create(null);
  let size = 0;
  for (const [name, given] of Object.entries(value)) {
    if (Array.isArray(given)) throw givenTwice(name);
    if (typeof given !== "string") throw malformed(`${name.slice(0, 64)} must be a plain form value`);
    size += Buffer.byteLength(name) + Buffer.byteLength(given) + 2;
    if (size > limit) throw tooLarge();
    parameters[name] = given;
  }
  return parameters;
}

/**
 * Reads a request's `application/x-www-form-urlencoded` body (RFC 6749 §4.4.2, the OAuth token
 * endpoint) as `readJsonBody` reads JSON: that content type only (JSON or any other is refused);
 * at most `limit` bytes, counted as they arrive; a parameter given twice refused (RFC 6749 §3.2);
 * a body an earlier middleware parsed (`express.urlencoded()`) checked the same way. An empty body
 * reads as no parameters. Every failure is 40002, which the token endpoint answers `invalid_request`.
 */
export async function readFormBody(request: HttpRequest, limit: number): Promise<Record<string, string>> {
  if (!isFormContentType(request.header("content-type"))) {
    throw malformed("The request body must be application/x-www-form-urlencoded");
  }
  if (request.bodyRefusal === "tooLarge") throw tooLarge();
  if (request.bodyRefusal !== undefined) throw malformed("The form body is malformed");
  if (Number(request.header("content-length")) > limit) throw tooLarge();
  if (request.body !== null) return formParameters((await readBodyWithLimit(request.body, limit)).toString("utf8"));
  if (request.parsedBody === undefined) return Object.create(null);
  return parsedFormParameters(request.parsedBody, limit);
}
