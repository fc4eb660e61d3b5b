import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { FieldValue } from "../user-fields/field.js";
import { readFieldInput } from "../user-fields/values.js";
import { signedInUser } from "../users/signed-in-user.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { type AdminUser, adminUserView } from "./admin-users.js";
import { checkRoles } from "./create-user.js";
import { type UserChanges, changeUser, endAllSessions, existingUser } from "./manage-users.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "./reauthenticate.js";

/** Who makes an administrator's change that needs re-authentication, and their proof. */
export interface AdminProof extends ReauthenticationProof {
  /** The administrator, from the access token. */
  adminUserId: string;
}

/** The input of {@link updateUser}: the user, the changes, and the administrator's proof. */
export interface UpdateUserInput extends AdminProof {
  userId: string;
  disabled?: boolean;
  roles?: string[];
  /** Additional fields to set (any declared field: an administrator may set them all); those left out stay. */
  fields?: Record<string, FieldValue>;
}

/**
 * The changes of an update, checked: 40002 a `disabled` that is no boolean or a malformed field,
 * 42200 bad roles or a field's value out of its limits, 40001 none of them.
 */
function changesOf(auth: Auth, input: UpdateUserInput): UserChanges {
  const changes: UserChanges = {};
  if (input.disabled !== undefined) {
    if (typeof input.disabled !== "boolean") throw new AuthError(ErrorCode.MalformedParameter, "disabled must be true or false");
    changes.disabled = input.disabled;
  }
  if (input.roles !== undefined) changes.roles = checkRoles(input.roles);
  if (input.fields !== undefined) changes.fields = readFieldInput(auth.userFields, input.fields, "admin");
  if (Object.keys(changes).length === 0) throw new AuthError(ErrorCode.MissingParameter, "disabled, roles or fields is required");
  return changes;
}

/**
 * Disables or enables an account, sets its roles and its additional fields (`PATCH /auth/admin/users/:id`), after the
 * administrator re-authenticates: a sign-in of theirs younger than `reauthentication.recentSignIn`,
 * or their own `password` or `totpCode`. `password` here is only ever the administrator's proof:
 * no admin route sets anyone's password (AD-1). New roles and disabling end every session of the
 * user through the token version (TV-1, RT-4).
 *
 * An administrator can neither disable their own account nor take the admin role from
 * themselves (40900), so the last administrator cannot lock everyone out (AD-1). A directory
 * user's roles come from the directory policy at each sign-in: setting them is 40900.
 *
 * @throws {AuthError} 40001 no change or no proof, 40002 a `disabled` that is no boolean or a malformed field, 40100
 *   wrong password, 40103 wrong code, 40400 unknown user, 40900 a change to oneself that AD-1
 *   refuses or roles for a directory user, 42200 bad roles or a field out of its limits, 42900 throttled.
 */
export async function updateUser(auth: Auth, input: UpdateUserInput): Promise<AdminUser> {
  const changes = changesOf(auth, input);
  const admin = await signedInUser(auth, input.adminUserId);
  const user = await existingUser(auth, input.userId);
  if (user.id === admin.id && changes.disabled === true) {
    throw new AuthError(ErrorCode.Conflict, "An administrator cannot disable their own account");
  }
  if (user.id === admin.id && changes.roles !== undefined && !changes.roles.includes(auth.config.adminRole)) {
    throw new AuthError(ErrorCode.Conflict, "An administrator cannot take the admin role from themselves");
  }
  if (user.source === "directory" && changes.roles !== undefined) {
    throw new AuthError(ErrorCode.Conflict, "A directory user's roles come from the directory policy");
  }
  await requireRecentAuthentication(auth, admin, input);
  return adminUserView(auth, await changeUser(auth, user, changes, admin.id));
}

/**
 * Ends every session of a user (`DELETE /auth/admin/users/:id/sessions`): raises the token
 * version and revokes them, as signing out everywhere does (TV-1); the events say the
 * administrator did it (`ended_by_admin`, `by`). Returns how many were live.
 *
 * @throws {AuthError} 40001/40002 a missing or non-string id, 40400 an unknown one.
 */
export async function endUserSessions(auth: Auth, input: { adminUserId: string; userId: string }): Promise<{ ended: number }> {
  const admin = await signedInUser(auth, input.adminUserId);
  const user = await existingUser(auth, input.userId);
  return { ended: await endAllSessions(auth, user.id, { reason: "ended_by_admin", by: admin.id }) };
}

/**
 * Removes a user's TOTP factor and recovery codes (`DELETE /auth/admin/users/:id/totp`), for a
 * user who lost the authenticator and was verified out of band, after the administrator
 * re-authenticates. The secret and codes are deleted, never shown (AD-1); the token version
 * rises, so every session of the user ends (an administrator's change: TV-1, SE-2). Emits
 * `user.updated` with `totp_removed`.
 *
 * @throws {AuthError} 40001 no proof, 40100 wrong password, 40103 wrong code, 40400 unknown user,
 *   40900 TOTP is not enabled, 42900 throttled.
 */
export async function removeTotp(auth: Auth, input: AdminProof & { userId: string }): Promise<{ removed: true }> {
  const admin = await signedInUser(auth, input.adminUserId);
  const user = await existingUser(auth, input.userId);
  if (!(await auth.storage.totp.get(user.id))?.enabled) throw new AuthError(ErrorCode.Conflict, "TOTP is not enabled");
  await requireRecentAuthentication(auth, admin, input);
  await auth.storage.totp.remove(user.id);
  await auth.storage.recoveryCodes.removeAll(user.id);
  await raiseTokenVersion(auth, user.id, "totp_removed");
  auth.emit({ type: "user.updated", userId: user.id, changes: ["totp_removed"], by: admin.id, at: auth.now() });
  return { removed: true };
}
