import type { Auth } from "../auth.js";
import { assertAcceptablePassword } from "../crypto/password-policy.js";
import { emailConfigOf } from "../email/deliver.js";
import { openEmailToken, spendEmailToken } from "../email/email-tokens.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { takeFailureAttempt } from "../throttle/failure-budget.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { acceptTotpCode } from "../totp/totp-secret.js";
import { endOtherSessions } from "../users/sessions.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { optionalString, requiredString } from "./input.js";

/** The input of {@link resetPassword} (`POST /auth/password/reset`). */
export interface ResetPasswordInput {
  /** The token of the reset link: what follows `#token=`. */
  token: string;
  newPassword: string;
  /** A current code of the user's authenticator: required, or `recoveryCode`, when TOTP is on (PR-3). */
  totpCode?: string;
  /** One of the user's recovery codes, instead of `totpCode`; it is spent. */
  recoveryCode?: string;
  ip?: string | undefined;
}

/** What {@link resetPassword} answers. */
export interface PasswordReset {
  reset: true;
}

/**
 * Sets a new password with a reset link's token (PR-2…PR-4). The token must be live, the user's
 * newest, and issued under the account's current password and token version (a password change
 * voids it). The new password passes the policy before anything is spent, so a refused one leaves
 * the link usable. A user with TOTP must also give a TOTP code or a recovery code (PR-3: a reset
 * never bypasses the second factor); its attempt is taken from the account's failure budget first
 * (RL-1, RL-4). Then the token is spent by one atomic consume (of concurrent uses, one goes on),
 * the password stored, the token version raised and every session ended (PR-4, TV-1): every
 * access, refresh and temporary token of the user stops working. A notice goes to the verified
 * address. The user signs in afresh.
 *
 * @throws {AuthError} 40001 a field missing, 40101 a link invalid, expired, used or voided, 40103
 *   no code or a wrong one for a TOTP user, 40400 email not configured, 42200 the password refused,
 *   42900 throttled, 50300 hashing queue full or `password.isBreached` failed.
 * @example
 * ```ts
 * await resetPassword(auth, { token, newPassword, totpCode });
 * ```
 */
export async function resetPassword(auth: Auth, input: ResetPasswordInput): Promise<PasswordReset> {
  emailConfigOf(auth);
  const token = requiredString(input.token, "token");
  const newPassword = requiredString(input.newPassword, "newPassword");
  const totpCode = optionalString(input.totpCode, "totpCode");
  const recoveryCode = optionalString(input.recoveryCode, "recoveryCode");
  const opened = await openEmailToken(auth, "password_reset", token);
  const { user } = opened;
  await assertAcceptablePassword(auth.config.password, newPassword, user.username);
  await proveSecondFactor(auth, user, { totpCode, recoveryCode, ip: input.ip });
  const passwordHash = await auth.passwords.hash(newPassword);
  await spendEmailToken(auth, "password_reset", opened);
  await auth.storage.users.update(user.id, { passwordHash }, auth.now());
  await raiseTokenVersion(auth, user.id, "password_reset");
  const sessionsEnded = await endOtherSessions(auth, { userId: user.id, reason: "password_reset" });
  auth.emit({ type: "password.reset", userId: user.id, sessionsEnded, at: auth.now(), ip: input.ip });
  return { reset: true };
}

/**
 * The second factor a TOTP user gives with a reset (PR-3): a TOTP code (its step spent: TOTP-4)
 * or a recovery code (spent: RC-3), after an attempt is taken from the account's budget.
 */
async function proveSecondFactor(
  auth: Auth,
  user: UserRecord,
  { totpCode, recoveryCode, ip }: { totpCode?: string; recoveryCode?: string; ip?: string | undefined },
): Promise<void> {
  const totp = await auth.storage.totp.get(user.id);
  if (!totp?.enabled) return;
  if (!totpCode && !recoveryCode) {
    throw new AuthError(ErrorCode.SecondFactorFailed, "This account has two-step sign-in: send totpCode or recoveryCode");
  }
  await takeFailureAttempt(auth, { scope: "account", usernameKey: user.usernameKey }, ip);
  if (totpCode) {
    if (await acceptTotpCode(auth, totp, totpCode)) return;
  } else {
    const normalized = normalizeRecoveryCode(recoveryCode as string);
    if (normalized !== null && (await auth.storage.recoveryCodes.consume(user.id, hashRecoveryCode(user.id, normalized)))) return;
  }
  throw new AuthError(ErrorCode.SecondFactorFailed);
}
