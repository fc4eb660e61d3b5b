/**
 * Lines for the operator on stderr: internal errors (by default), explained refusals (with
 * `debug: true`) and mistakes in how the library is mounted. One line each, prefixed
 * `[portcullis]`, never holding a request body, token, password or code (HTTP-6): what they
 * print comes from errors and settings, never from what a client sent, except where a line
 * says so and the value is quoted and cut short.
 */

/** Writes one line to stderr, prefixed `[portcullis]`; line breaks inside `text` become spaces. */
export function writeOperatorLine(text: string): void {
  process.stderr.write(`[portcullis] ${oneLine(text)}\n`);
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]\s*/g, " ");
}

const maxCauses = 5;

/** `Class: message`, for an error or a thrown non-error. */
function headline(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `thrown ${typeof error}`;
}

/** The frames of an error's stack after its headline, as ` at …` items. */
function framesOf(error: unknown): string[] {
  if (!(error instanceof Error) || typeof error.stack !== "string") return [];
  return error.stack
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("at "));
}

/**
 * The one line of an internal error: the request id, each error of the `cause` chain as
 * `Class: message` with its stack frames, separated by ` | `. A value thrown that is not an
 * `Error` is named by its type only, as it may be anything a client sent.
 */
export function describeInternalError(error: unknown, requestId: string): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < maxCauses && current !== undefined; depth++) {
    parts.push(`${depth === 0 ? "" : "caused by "}${headline(current)}`, ...framesOf(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return `internal error, request ${requestId}: ${parts.join(" | ")}`;
}

/**
 * What `onInternalError` does unless replaced: one line on stderr per internal error, with the
 * request id the client was given (or `"sweep"` for the background sweep), the error's class,
 * message and stack, and its causes'.
 */
export function printInternalError(error: unknown, requestId: string): void {
  writeOperatorLine(describeInternalError(error, requestId));
}
