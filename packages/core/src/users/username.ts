import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/** The key a username is looked up by: NFKC, then lower-cased. */
export function usernameKeyOf(username: string): string {
  return username.normalize("NFKC").toLowerCase();
}

/**
 * Checks a new username and returns it normalised with its lookup key: 1 to 128 characters
 * after NFKC, no control characters, no leading or trailing white space. Throws
 * {@link AuthError} 42200 with the reason.
 */
export function normalizeUsername(raw: string): { username: string; usernameKey: string } {
  const username = raw.normalize("NFKC");
  const length = [...username].length;
  if (length === 0 || length > 128)
    throw new AuthError(ErrorCode.ValidationFailed, "The username must be 1 to 128 characters long");
  if (/\p{Cc}/u.test(username))
    throw new AuthError(ErrorCode.ValidationFailed, "The username must not contain control characters");
  if (username.trim() !== username) {
    throw new AuthError(ErrorCode.ValidationFailed, "The username must not start or end with white space");
  }
  return { username, usernameKey: usernameKeyOf(username) };
}
