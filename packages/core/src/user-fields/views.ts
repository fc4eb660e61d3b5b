import type { Auth } from "../auth.js";
import type { UserRecord } from "../storage/types.js";
import type { FieldValue } from "./field.js";
import { fieldsWhere, storedFieldValues } from "./values.js";

/** A stored user's fields shown in the user object (`inMe`), defaults filled in. */
export function publicFieldsOf(auth: Auth, user: UserRecord): Record<string, FieldValue> {
  return fieldsWhere(auth.userFields, storedFieldValues(auth.userFields, user.fields), "inMe");
}

/**
 * The `fields` claim of a stored user's access tokens: the fields declared `inToken`, defaults
 * filled in; undefined when none is, so tokens of a service without such fields stay as they were.
 */
export function tokenFieldsClaim(auth: Auth, user: UserRecord): Record<string, FieldValue> | undefined {
  if (!auth.userFields.some((field) => field.inToken)) return undefined;
  return fieldsWhere(auth.userFields, storedFieldValues(auth.userFields, user.fields), "inToken");
}

/** The `inToken` fields of a verified token's `fields` claim, defaults filled in for those it lacks (tokens minted before). */
export function accessUserFields(auth: Auth, claim: unknown): Record<string, FieldValue> {
  const inToken = auth.userFields.filter((field) => field.inToken);
  return storedFieldValues(inToken, claim);
}
