import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { hasLoneSurrogate, longerThan } from "./username.js";

/** The longest email address, in characters (code points), as given and after NFKC (RFC 5321 §4.5.3.1.3's path, less its brackets). */
export const maxEmailLength = 254;

/**
 * White space, control and format characters, and the default-ignorable code points (Hangul
 * fillers, variation selectors, the combining grapheme joiner, Mongolian selectors) that NFKC
 * keeps and nobody sees: none of them is in an address, and an address holding one would look
 * like another's (usernames refuse them too).
 */
const notInAnAddress = /[\p{White_Space}\p{Z}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/**
 * The key a verified address is unique by and looked up by (EV-1): NFKC, then lower-cased, so
 * `Alice@Example.COM` and `alice@example.com` are one address. Applied to an address
 * {@link normalizeEmail} accepted.
 */
export function emailKeyOf(email: string): string {
  return email.normalize("NFKC").toLowerCase();
}

/**
 * Checks an email address and returns it NFKC-normalised: at most {@link maxEmailLength}
 * characters as given and after NFKC, well-formed Unicode, exactly one `@` with something on
 * each side, and no white space, control, format or default-ignorable character. Nothing more
 * is asked of it: only a message that reaches it proves an address (EV-1).
 *
 * @throws {AuthError} 40002 naming `field` when it is not one.
 * @example
 * ```ts
 * normalizeEmail("Alice@Example.com"); // "Alice@Example.com"; emailKeyOf gives "alice@example.com"
 * ```
 */
export function normalizeEmail(raw: string, field = "email"): string {
  const refuse = (why: string) => new AuthError(ErrorCode.MalformedParameter, `${field} ${why}`);
  if (longerThan(raw, maxEmailLength) || hasLoneSurrogate(raw)) {
    throw refuse(`must be an address of at most ${maxEmailLength} characters`);
  }
  const email = raw.normalize("NFKC");
  if (longerThan(email, maxEmailLength)) throw refuse(`must be an address of at most ${maxEmailLength} characters`);
  if (notInAnAddress.test(email)) throw refuse("must not hold spaces, control or invisible characters");
  const at = email.indexOf("@");
  if (at <= 0 || at === email.length - 1 || email.indexOf("@", at + 1) !== -1) {
    throw refuse("must be an address with one @ between a name and a domain");
  }
  return email;
}
