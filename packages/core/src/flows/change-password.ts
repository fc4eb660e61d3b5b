import type { Auth } from "../auth.js";
import { assertAcceptablePassword } from "../crypto/password-policy.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { requiredString } from "./input.js";
import { invalidCredentials } from "./login.js";

/** The input of {@link changePassword}. */
export interface ChangePasswordInput {
  userId: string;
  currentPassword: string;
  newPassword: string;
}

/**
 * Changes a user's own password: the current one must be proven (PW-6; the attempt counts
 * against the account throttle), the new one passes the policy (PW-3). The token version is
 * raised, so every session and outstanding temporary token ends (TV-1, TMP-4).
 *
 * @throws {AuthError} 40100 wrong current password, 40400 unknown user, 40900 a directory account,
 *   42200 new password refused, 42900 throttled, 50300 hashing queue full or `password.isBreached` failed.
 */
export async function changePassword(auth: Auth, input: ChangePasswordInput): Promise<void> {
  const userId = requiredString(input.userId, "userId");
  const currentPassword = requiredString(input.currentPassword, "currentPassword");
  const newPassword = requiredString(input.newPassword, "newPassword");
  const user = await localUser(auth, userId);
  await takeAttempt(auth, "account", user.usernameKey);
  if (!(await auth.passwords.verify(user.passwordHash, currentPassword))) throw invalidCredentials();
  await storeNewPassword(auth, userId, user.username, newPassword);
}

/** The input of {@link setPassword}. */
export interface SetPasswordInput {
  userId: string;
  newPassword: string;
}

/**
 * Sets a user's password without the current one: for administrators and reset flows that
 * proved the user's identity another way. Raises the token version like {@link changePassword}.
 *
 * @throws {AuthError} 40400 unknown user, 40900 a directory account, 42200 password refused, 50300 hashing queue full or `password.isBreached` failed.
 */
export async function setPassword(auth: Auth, input: SetPasswordInput): Promise<void> {
  const userId = requiredString(input.userId, "userId");
  const newPassword = requiredString(input.newPassword, "newPassword");
  const user = await localUser(auth, userId);
  await storeNewPassword(auth, userId, user.username, newPassword);
}

/** A user whose password this library may set: a local account (a directory's is the directory's). */
async function localUser(auth: Auth, userId: string): Promise<UserRecord> {
  const user = await auth.storage.users.findById(userId);
  if (!user) throw new AuthError(ErrorCode.NotFound, "No such user");
  if (user.source !== "local")
    throw new AuthError(ErrorCode.Conflict, "The password of a directory account is kept by the directory");
  return user;
}

async function storeNewPassword(auth: Auth, userId: string, username: string, newPassword: string): Promise<void> {
  await assertAcceptablePassword(auth.config.password, newPassword, username);
  const passwordHash = await auth.passwords.hash(newPassword);
  await auth.storage.users.update(userId, { passwordHash }, auth.now());
  await raiseTokenVersion(auth, userId, "password_changed");
  auth.emit({ type: "password.changed", userId, at: auth.now() });
}
