import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { invisibleCharacterIn } from "../text/visible-text.js";

/**
 * Reads a required string field (PW-5): absent, null or empty is 40001; any other type
 * (an object such as `{"$ne": ""}`, an array, a number) is 40002 and never reaches storage.
 */
export function requiredString(value: unknown, field: string): string {
  if (value === undefined || value === null || value === "") {
    throw new AuthError(ErrorCode.MissingParameter, `${field} is required`);
  }
  if (typeof value !== "string") throw new AuthError(ErrorCode.MalformedParameter, `${field} must be a string`);
  return value;
}

/** Reads an optional string field: absent or null gives undefined; another type is 40002. */
export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new AuthError(ErrorCode.MalformedParameter, `${field} must be a string`);
  return value;
}

/**
 * Reads a name people see (a passkey's label, an organization's name): trimmed and NFC-normalised,
 * 1 to `maxLength` characters, every one of which shows ({@link invisibleCharacterIn}), so that no
 * name reads as another.
 *
 * @throws {AuthError} 40001 missing, 40002 not a string, 42200 empty, too long or with a character that does not show.
 */
export function readVisibleText(value: unknown, field: string, maxLength: number): string {
  const text = requiredString(value, field).normalize("NFC").trim();
  const rule = `${field} must be 1 to ${maxLength} characters of visible text`;
  if (text === "" || [...text].length > maxLength) throw new AuthError(ErrorCode.ValidationFailed, rule);
  const invisible = invisibleCharacterIn(text);
  if (invisible !== null) throw new AuthError(ErrorCode.ValidationFailed, `${rule}; ${invisible}, is not`);
  return text;
}
