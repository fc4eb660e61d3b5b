import type { Auth } from "../auth.js";
import { assertAcceptablePassword } from "../crypto/password-policy.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { endOtherSessions } from "../users/sessions.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { requiredString } from "./input.js";
import { offeredProofs, proveEveryFactor, requireRecentAuthentication } from "./reauthenticate.js";

/** The input of {@link changePassword}. */
export interface ChangePasswordInput {
  userId: string;
  currentPassword: string;
  newPassword: string;
  /** The session the change is made from: it goes on, the user's others end (SE-2); its recent sign-in may stand for the second factor (STUP-3). */
  sessionId?: string;
  /** A current TOTP code, when TOTP is on and the session did not prove one within `reauthentication.recentSignIn` (STUP-3). */
  totpCode?: string;
}

/** What {@link changePassword} answers (`POST /auth/password`). */
export interface PasswordChanged {
  changed: true;
  /** How many other sessions of the user ended. */
  sessionsEnded: number;
}

/**
 * Changes a user's own password (`POST /auth/password`; SE-4): the current one must be proven
 * (PW-6), the attempt taken from the failure budget of `sessionId` when it is a live session of
 * the user, else the account's (RL-1, RL-5), and with TOTP on a current `totpCode` too, unless the
 * session proved one within `reauthentication.recentSignIn` (STUP-3, ASVS 7.5.1: see
 * `requireRecentAuthentication`), or without it under the unsafe
 * `reauthentication.unsafeAllowPasswordChangeWithoutSecondFactor` (TOTP-8); the new one passes the policy and the breached hook (PW-3). Every other session of the user ends and `sessionId` goes on (SE-2; every session when
 * none is given), without raising the token version; outstanding temporary tokens are void, their
 * password stamp no longer matching (TMP-4).
 *
 * @throws {AuthError} 40001 a TOTP code missing, 40100 wrong current password, 40103 wrong code, 40400 unknown user, 40900 an account without a
 *   local password (a directory's, or one made by a provider sign-in), 42200 new password refused,
 *   42900 throttled, 50300 hashing queue full or `password.isBreached` failed.
 * @example
 * ```ts
 * const { sessionsEnded } = await changePassword(auth, { userId, sessionId, currentPassword, newPassword });
 * ```
 */
export async function changePassword(auth: Auth, input: ChangePasswordInput): Promise<PasswordChanged> {
  const userId = requiredString(input.userId, "userId");
  const currentPassword = requiredString(input.currentPassword, "currentPassword");
  const newPassword = requiredString(input.newPassword, "newPassword");
  const user = await localUser(auth, userId);
  if (user.passwordHash === null) throw new AuthError(ErrorCode.Conflict, "The account has no password to change");
  const proof = { sessionId: input.sessionId, password: currentPassword, totpCode: input.totpCode };
  if (auth.config.reauthentication.unsafeAllowPasswordChangeWithoutSecondFactor && input.totpCode === undefined) {
    // TOTP-8: the current password alone, checked and throttled as always, as if no second factor were on.
    await proveEveryFactor(auth, user, input.sessionId, offeredProofs(proof), null, null);
  } else {
    await requireRecentAuthentication(auth, user, proof);
  }
  await storeNewPassword(auth, userId, user.username, newPassword);
  const sessionsEnded = await endOtherSessions(auth, { userId, keepSessionId: input.sessionId, reason: "password_changed" });
  auth.emit({ type: "password.changed", userId, sessionsEnded, at: auth.now() });
  return { changed: true, sessionsEnded };
}

/** The input of {@link setPassword}. */
export interface SetPasswordInput {
  userId: string;
  newPassword: string;
}

/**
 * Sets a user's password without the current one: for administrators and reset flows that
 * proved the user's identity another way. Raises the token version (TV-1): every session and
 * temporary token of the user ends.
 *
 * @throws {AuthError} 40400 unknown user, 40900 a directory account, 42200 password refused, 50300 hashing queue full or `password.isBreached` failed.
 */
export async function setPassword(auth: Auth, input: SetPasswordInput): Promise<void> {
  const userId = requiredString(input.userId, "userId");
  const newPassword = requiredString(input.newPassword, "newPassword");
  const user = await localUser(auth, userId);
  await storeNewPassword(auth, userId, user.username, newPassword);
  await raiseTokenVersion(auth, userId, "password_changed");
  auth.emit({ type: "password.changed", userId, at: auth.now() });
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
}
