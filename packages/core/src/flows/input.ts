import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

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
