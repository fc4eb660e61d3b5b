import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/** The longest username, in characters (code points), as typed and after NFKC. */
export const maxUsernameLength = 128;

/** The key a username is looked up by: NFKC, then lower-cased. */
export function usernameKeyOf(username: string): string {
  return username.normalize("NFKC").toLowerCase();
}

/** True when a string is longer than `max` code points; cheap for any length. */
function longerThan(value: string, max: number): boolean {
  return value.length > max && (value.length > 2 * max || [...value].length > max);
}

/** True when a string holds a lone surrogate, i.e. is not well-formed Unicode. */
export function hasLoneSurrogate(value: string): boolean {
  return /\p{Cs}/u.test(value);
}

/**
 * The lookup key of a username typed at sign-in, or null when it can be nobody's: longer than
 * {@link maxUsernameLength} characters, or not well-formed Unicode. The length is checked
 * before NFKC, which can make a string eighteen times longer.
 */
export function typedUsernameKey(username: string): string | null {
  if (longerThan(username, maxUsernameLength) || hasLoneSurrogate(username)) return null;
  return usernameKeyOf(username);
}

/**
 * Checks a new username and returns it normalised with its lookup key: 1 to 128 characters
 * as given and after NFKC, well-formed Unicode, no control characters, no leading or
 * trailing white space. Throws {@link AuthError} 42200 with the reason.
 */
export function normalizeUsername(raw: string): { username: string; usernameKey: string } {
  const tooLong = () => new AuthError(ErrorCode.ValidationFailed, "The username must be 1 to 128 characters long");
  if (longerThan(raw, maxUsernameLength)) throw tooLong();
  if (hasLoneSurrogate(raw)) throw new AuthError(ErrorCode.ValidationFailed, "The username must be well-formed Unicode text");
  const username = raw.normalize("NFKC");
  if (username.length === 0 || longerThan(username, maxUsernameLength)) throw tooLong();
  if (/\p{Cc}/u.test(username))
    throw new AuthError(ErrorCode.ValidationFailed, "The username must not contain control characters");
  if (username.trim() !== username) {
    throw new AuthError(ErrorCode.ValidationFailed, "The username must not start or end with white space");
  }
  return { username, usernameKey: usernameKeyOf(username) };
}
