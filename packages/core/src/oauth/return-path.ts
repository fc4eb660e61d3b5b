import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

const origin = "http://portcullis.invalid";

/** Control characters and backslashes: never in a return path, raw or decoded. */
const forbidden = /[\p{Cc}\\]/u;

/** Decodes percent-escapes repeatedly (at most a few rounds), or null when one is malformed. */
function fullyDecoded(value: string): string | null {
  let current = value;
  for (let round = 0; round < 4; round += 1) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (next === current) return current;
    current = next;
  }
  return null;
}

/**
 * Checks where the browser may be sent back after a provider sign-in (OA-8): a path of this
 * app only. It must start with a single `/`, hold no backslash, white space or control
 * character, and stay so however many times it is percent-decoded (`/%2F%2Fevil`, `/%5Cevil`);
 * a space is allowed only percent-encoded; then it must resolve to a path on this origin (`//evil`, `/\evil`, `https:evil` and the like
 * are refused). Returns the path as given; absent gives `/`.
 *
 * @throws {AuthError} 40002 for anything else, never a 500.
 */
export function safeReturnPath(value: unknown): string {
  if (value === undefined || value === null || value === "") return "/";
  const refused = () => new AuthError(ErrorCode.MalformedParameter, "redirect must be a path of this app, such as /account");
  if (typeof value !== "string" || value.length > 2048) throw refused();
  const decoded = fullyDecoded(value);
  for (const form of [value, decoded]) {
    if (form === null || !form.startsWith("/") || form.startsWith("//") || forbidden.test(form)) throw refused();
    if (form === value && value.includes(" ")) throw refused();
    const resolved = new URL(form, origin);
    if (resolved.origin !== origin) throw refused();
  }
  return value;
}
