import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { invisibleCharacterIn } from "../text/visible-text.js";

/** The longest username, in characters (code points), as typed and after NFKC. */
export const maxUsernameLength = 128;

/** The key a username is looked up by: NFKC, then lower-cased. */
export function usernameKeyOf(username: string): string {
  return username.normalize("NFKC").toLowerCase();
}

/** True when a string is longer than `max` code points; cheap for any length. */
export function longerThan(value: string, max: number): boolean {
  return value.length > max && (value.length > 2 * max || [...value].length > max);
}

/** True when a string holds a lone surrogate, i.e. is not well-formed Unicode. */
export function hasLoneSurrogate(value: string): boolean {
  return /\p{Cs}/u.test(value);
}

/** White space other than U+0020 SPACE that NFKC leaves as it is (U+1680 OGHAM SPACE MARK). */
const otherWhiteSpace = /(?! )[\p{White_Space}\p{Z}]/u;

/** Private-use code points, which show as whatever a font makes of them, and U+2800, a blank that is no space. */
const noFixedShape = /[\p{Co}\u2800]/u;

/**
 * Why a username (as stored, or NFKC of what was typed) is not a stable identifier, or null
 * when it is one. The rule is RFC 8265's UsernameCaseMapped profile with its §3.1 allowance for
 * names of several parts separated by single spaces: no white space but single U+0020 between
 * parts and none at either end; no control, format, invisible, text-direction, unassigned or
 * private-use code point (the rule passkey labels follow too). So a name that a directory (which
 * ignores spaces at the ends, folds runs of them and drops invisible characters, RFC 4518 §2) or a
 * reader would take for `alice` is either `alice` itself or refused (RL-1). Accounts made before
 * the rule may break it: docs/security.md ("Usernames") shows how to find them with this function.
 *
 * @example
 * ```ts
 * usernameProblem("al\u00adice"); // "The username must not contain U+00AD, an invisible character"
 * ```
 */
export function usernameProblem(username: string): string | null {
  if (username.startsWith(" ") || username.endsWith(" ")) return "The username must not start or end with a space";
  const hidden = invisibleCharacterIn(username);
  if (hidden !== null) return `The username must not contain ${hidden}`;
  if (otherWhiteSpace.test(username)) return "The username may hold no white space but single spaces between its parts";
  if (username.includes("  ")) return "The username must not hold two spaces in a row";
  if (noFixedShape.test(username)) return "The username must not contain private-use characters or blank patterns";
  return null;
}

/**
 * The lookup key of a username typed at sign-in, or null when it can be nobody's: longer than
 * {@link maxUsernameLength} characters, not well-formed Unicode, or (after NFKC) not a stable
 * identifier ({@link usernameProblem}: spaces around it, a NUL, an invisible code point). The
 * length is checked before NFKC, which can make a string eighteen times longer. Such a name
 * never reaches storage, a directory or a throttle counter (RL-1).
 */
export function typedUsernameKey(username: string): string | null {
  if (longerThan(username, maxUsernameLength) || hasLoneSurrogate(username)) return null;
  const normalized = username.normalize("NFKC");
  return usernameProblem(normalized) === null ? normalized.toLowerCase() : null;
}

/**
 * Checks a new username and returns it normalised with its lookup key: 1 to 128 characters
 * as given and after NFKC, well-formed Unicode, and a stable identifier ({@link usernameProblem}).
 * Throws {@link AuthError} 42200 with the reason.
 */
export function normalizeUsername(raw: string): { username: string; usernameKey: string } {
  const tooLong = () => new AuthError(ErrorCode.ValidationFailed, "The username must be 1 to 128 characters long");
  if (longerThan(raw, maxUsernameLength)) throw tooLong();
  if (hasLoneSurrogate(raw)) throw new AuthError(ErrorCode.ValidationFailed, "The username must be well-formed Unicode text");
  const username = raw.normalize("NFKC");
  if (username.length === 0 || longerThan(username, maxUsernameLength)) throw tooLong();
  const problem = usernameProblem(username);
  if (problem !== null) throw new AuthError(ErrorCode.ValidationFailed, problem);
  return { username, usernameKey: usernameKeyOf(username) };
}
