import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/** Control characters and backslashes: never in a return path, raw or decoded. */
const forbidden = /[\p{Cc}\\]/u;

/** Decodes percent-escapes until nothing changes, or null when one is malformed or it still changes after three rounds. */
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
 * Whether `path` (one that starts with a single `/`) still does once a browser applies its dot
 * segments: `/.//evil` and `/a/..//evil` resolve to `//evil`, which a later redirect or
 * `location` assignment reads as another host.
 */
function keepsSingleSlash(path: string): boolean {
  return !new URL(path, "http://return-path.invalid").pathname.startsWith("//");
}

/**
 * Checks where the browser may be sent back after a provider sign-in (OA-8): a path of this
 * app only. It must start with a single `/` and hold no backslash, control character or raw
 * space, must not become `//…` once a browser applies its dot segments (`/.//evil`,
 * `/a/..//evil`, `/%2e//evil`), and stay so however many times it is percent-decoded
 * (`/%2F%2Fevil`, `/%5Cevil`; more than three rounds of decoding is refused). So `//evil`,
 * `/\evil`, `https:evil` and the like are refused. Returns the path as given; absent gives `/`.
 *
 * @throws {AuthError} 40002 for anything else, never a 500.
 */
export function safeReturnPath(value: unknown): string {
  if (value === undefined || value === null || value === "") return "/";
  const refused = () => new AuthError(ErrorCode.MalformedParameter, "redirect must be a path of this app, such as /account");
  if (typeof value !== "string" || value.length > 2048 || value.includes(" ")) throw refused();
  for (const form of [value, fullyDecoded(value)]) {
    if (form === null || !form.startsWith("/") || form.startsWith("//") || forbidden.test(form) || !keepsSingleSlash(form)) {
      throw refused();
    }
  }
  return value;
}
