import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { type User, toUser } from "../flows/create-user.js";
import { changeUser, existingUser } from "../flows/manage-users.js";
import { type PublicUser, publicUser } from "../tokens/issue-tokens.js";
import type { FieldValue } from "./field.js";
import { readFieldInput } from "./values.js";

/** The input of {@link updateProfile}. */
export interface UpdateProfileInput {
  /** The signed-in user, from the access token. */
  userId: string;
  /** The additional fields to change: only those declared `selfEdit: true`. Those left out stay. */
  fields: Record<string, FieldValue>;
}

/**
 * The signed-in user changes their own additional fields (`PATCH /auth/me`): only those declared
 * `selfEdit: true` (any other is 42200 naming it, so a user never sets their own `plan`), each
 * checked against its declaration. Writes only the fields whose value differs, emits
 * `user.updated` with `fields` and `by` the user, ends no session and raises no token version:
 * access tokens carry a changed `inToken` field from their next refresh. Answers the user object
 * as `/me` shows it.
 *
 * @throws {AuthError} 40001 no `fields`, 40002 `fields` that is no object, an undeclared name or a
 *   value of the wrong type, 40400 an unknown user, 42200 a field that is not `selfEdit` or a value
 *   out of its limits.
 * @example
 * ```ts
 * const user = await updateProfile(auth, { userId: req.auth.userId, fields: { company: "Acme" } });
 * ```
 */
export async function updateProfile(auth: Auth, input: UpdateProfileInput): Promise<PublicUser> {
  if (input.fields === undefined || input.fields === null) throw new AuthError(ErrorCode.MissingParameter, "fields is required");
  const fields = readFieldInput(auth.userFields, input.fields, "selfEdit");
  const user = await existingUser(auth, input.userId);
  return publicUser(auth, await changeUser(auth, user, { fields }, user.id));
}

/**
 * The service sets a user's additional fields from its own code: any declared field, checked
 * against its declaration, without re-authentication (administrators over HTTP use `updateUser`).
 * Writes only what differs, emits `user.updated` with `fields` and `by: null`, ends no session.
 *
 * @throws {AuthError} 40001/40002 a missing or non-string id, 40002 a malformed field, 40400 an
 *   unknown user, 42200 a value out of its field's limits.
 * @example
 * ```ts
 * await setUserFields(auth, { userId, fields: { plan: "pro" } });
 * ```
 */
export async function setUserFields(auth: Auth, input: UpdateProfileInput): Promise<User> {
  const fields = readFieldInput(auth.userFields, input.fields, "admin");
  const user = await existingUser(auth, input.userId);
  return toUser(auth, await changeUser(auth, user, { fields }, null));
}
