import type { Auth } from "../auth.js";
import { exceedsByteCap, normalizePassword } from "../crypto/password-policy.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { clearAccountFailures, takeAttempt } from "../throttle/throttle.js";
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { totpEnrolment, totpSecretBytes } from "../totp/totp.js";
import { acceptTotpCode, sealTotpSecret } from "../totp/totp-secret.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { optionalString, requiredString } from "./input.js";

async function signedInUser(auth: Auth, userId: unknown): Promise<UserRecord> {
  const user = await auth.storage.users.findById(requiredString(userId, "userId"));
  if (!user || user.disabled) throw new AuthError(ErrorCode.InvalidToken);
  return user;
}

/** Checks a TOTP code of an enabled or pending factor, counting the attempt against the account (RL-1). */
async function proveTotp(auth: Auth, user: UserRecord, code: string, state: "enabled" | "pending"): Promise<void> {
  const totp = await auth.storage.totp.get(user.id);
  if (!totp || totp.enabled !== (state === "enabled")) {
    throw new AuthError(ErrorCode.Conflict, state === "enabled" ? "TOTP is not enabled" : "Start TOTP setup first");
  }
  await takeAttempt(auth, "account", user.usernameKey);
  if (!(await acceptTotpCode(auth, totp, code))) throw new AuthError(ErrorCode.SecondFactorFailed);
  await clearAccountFailures(auth, user.usernameKey);
}

async function storeNewRecoveryCodes(auth: Auth, userId: string): Promise<string[]> {
  const codes = generateRecoveryCodes(auth.randomBytes);
  const hashes = codes.map((code) => hashRecoveryCode(userId, normalizeRecoveryCode(code) as string));
  await auth.storage.recoveryCodes.replace(userId, hashes, auth.now());
  return codes;
}

/** What {@link beginTotpSetup} returns: the secret in base32 and the `otpauth://` URI for a QR code. */
export interface TotpSetup {
  secret: string;
  otpauthUrl: string;
}

/**
 * Starts TOTP enrolment for a signed-in user (`POST /auth/2fa/setup`; TOTP-5): a new 20-byte
 * secret (TOTP-2) is stored encrypted (TOTP-6) and pending until {@link enableTotp} sees a
 * valid code. Calling it again replaces a pending secret.
 *
 * @throws {AuthError} 40900 when TOTP is already enabled.
 */
export async function beginTotpSetup(auth: Auth, input: { userId: string }): Promise<TotpSetup> {
  const user = await signedInUser(auth, input.userId);
  const secret = auth.randomBytes(totpSecretBytes);
  const stored = await auth.storage.totp.putPending({
    userId: user.id,
    secret: sealTotpSecret(auth, user.id, secret),
    enabled: false,
    lastUsedStep: -1,
    createdAt: auth.now(),
  });
  if (!stored) throw new AuthError(ErrorCode.Conflict, "TOTP is already enabled");
  return totpEnrolment(secret, auth.config.totp.label, user.username);
}

/**
 * Turns pending TOTP on once the user proves a code from it (`POST /auth/2fa/enable`), issues
 * ten recovery codes (shown once; RC-1) and raises the token version (TOTP-5): the user signs
 * in again, now with the second factor.
 *
 * @throws {AuthError} 40900 nothing pending or already enabled, 40103 wrong code, 42900 throttled.
 */
export async function enableTotp(auth: Auth, input: { userId: string; code: string }): Promise<{ recoveryCodes: string[] }> {
  const user = await signedInUser(auth, input.userId);
  await proveTotp(auth, user, requiredString(input.code, "code"), "pending");
  if (!(await auth.storage.totp.enable(user.id))) throw new AuthError(ErrorCode.Conflict, "TOTP is already enabled");
  const recoveryCodes = await storeNewRecoveryCodes(auth, user.id);
  await raiseTokenVersion(auth, user.id, "totp_enabled");
  auth.emit({ type: "totp.enabled", userId: user.id, at: auth.now() });
  return { recoveryCodes };
}

/**
 * Turns TOTP off (`POST /auth/2fa/disable`) after the user proves a current code or the
 * password; removes the secret and the recovery codes and raises the token version (TOTP-5).
 *
 * @throws {AuthError} 40001 neither given, 40900 not enabled, 40103 wrong code, 40100 wrong password, 42900 throttled.
 */
export async function disableTotp(auth: Auth, input: { userId: string; code?: string; password?: string }): Promise<void> {
  const user = await signedInUser(auth, input.userId);
  const code = optionalString(input.code, "code");
  const password = optionalString(input.password, "password");
  if (code) {
    await proveTotp(auth, user, code, "enabled");
  } else if (password) {
    const totp = await auth.storage.totp.get(user.id);
    if (!totp?.enabled) throw new AuthError(ErrorCode.Conflict, "TOTP is not enabled");
    await takeAttempt(auth, "account", user.usernameKey);
    const proven =
      user.passwordHash !== null &&
      !exceedsByteCap(password, auth.config.password.maxBytes) &&
      (await auth.passwords.verify(user.passwordHash, normalizePassword(password)));
    if (!proven) throw new AuthError(ErrorCode.AuthenticationFailed, "Invalid password");
  } else {
    throw new AuthError(ErrorCode.MissingParameter, "code or password is required");
  }
  await auth.storage.totp.remove(user.id);
  await auth.storage.recoveryCodes.removeAll(user.id);
  await raiseTokenVersion(auth, user.id, "totp_disabled");
  auth.emit({ type: "totp.disabled", userId: user.id, at: auth.now() });
}

/**
 * Replaces a user's recovery codes with a new set (`POST /auth/2fa/recovery-codes`) after a
 * current TOTP code is proven; the old set stops working at once (RC-1).
 *
 * @throws {AuthError} 40900 TOTP not enabled, 40103 wrong code, 42900 throttled.
 */
export async function regenerateRecoveryCodes(
  auth: Auth,
  input: { userId: string; code: string },
): Promise<{ recoveryCodes: string[] }> {
  const user = await signedInUser(auth, input.userId);
  await proveTotp(auth, user, requiredString(input.code, "code"), "enabled");
  const recoveryCodes = await storeNewRecoveryCodes(auth, user.id);
  auth.emit({ type: "recovery_codes.regenerated", userId: user.id, at: auth.now() });
  return { recoveryCodes };
}
