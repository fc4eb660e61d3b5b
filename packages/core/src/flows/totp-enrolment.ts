import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { EncryptedSecret, TotpRecord, UserRecord } from "../storage/types.js";
import { clearFailureBudget, takeFailureAttempt } from "../throttle/failure-budget.js";
import { pendingRecoveryCodes } from "../totp/pending-recovery-codes.js";
import { generateRecoveryCodes, hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { totpEnrolment, totpSecretBytes } from "../totp/totp.js";
import { acceptTotpCode, openTotpSecret, sealTotpSecret } from "../totp/totp-secret.js";
import { endOtherSessions } from "../users/sessions.js";
import { signedInUser } from "../users/signed-in-user.js";
import { optionalString, requiredString } from "./input.js";
import { type ReauthenticationProof, budgetOfProof, requireRecentAuthentication } from "./reauthenticate.js";

/**
 * Checks a code of the pending factor, counting the attempt against the session's budget, or the
 * account's (RL-1, RL-5); answers the factor it proved.
 */
async function provePendingTotp(auth: Auth, user: UserRecord, code: string, sessionId: string | undefined): Promise<TotpRecord> {
  const totp = await auth.storage.totp.get(user.id);
  if (!totp || totp.enabled) throw new AuthError(ErrorCode.Conflict, "Start TOTP setup first");
  const budget = await budgetOfProof(auth, user, sessionId);
  await takeFailureAttempt(auth, budget);
  if (!(await acceptTotpCode(auth, totp, code))) throw new AuthError(ErrorCode.SecondFactorFailed);
  await clearFailureBudget(auth, budget);
  return totp;
}

/**
 * The re-authentication TOTP enrolment needs (TOTP-5), unless `reauthentication.unsafeAllowTotpEnrolmentWithoutProof`
 * waives it for a request that offers no password (TOTP-7): a password that is offered is checked all the same.
 */
async function requireEnrolmentProof(auth: Auth, user: UserRecord, proof: ReauthenticationProof): Promise<void> {
  if (auth.config.reauthentication.unsafeAllowTotpEnrolmentWithoutProof && proof.password === undefined) return;
  await requireRecentAuthentication(auth, user, { sessionId: proof.sessionId, password: proof.password });
}

/** Replaces a user's recovery codes with a new set (RC-1), stored as hashes (RC-2); answers the codes, to show once. */
export async function storeNewRecoveryCodes(auth: Auth, userId: string): Promise<string[]> {
  const codes = generateRecoveryCodes(auth.randomBytes);
  const hashes = codes.map((code) => hashRecoveryCode(userId, normalizeRecoveryCode(code) as string));
  await auth.storage.recoveryCodes.replace(userId, hashes, auth.now());
  return codes;
}

/**
 * Replaces a user's recovery codes with the set `2fa/setup` showed for the factor `enabled` (RC-4,
 * `totp.recoveryCodesAtSetup`), stored as hashes (RC-2); answers the codes.
 */
async function storePendingRecoveryCodes(auth: Auth, enabled: TotpRecord): Promise<string[]> {
  const secret = openTotpSecret(auth, enabled.secret, enabled.userId);
  const codes = pendingRecoveryCodes(enabled.userId, secret, enabled.secret);
  secret.fill(0);
  const hashes = codes.map((code) => hashRecoveryCode(enabled.userId, normalizeRecoveryCode(code) as string));
  await auth.storage.recoveryCodes.replace(enabled.userId, hashes, auth.now());
  return codes;
}

/** What {@link beginTotpSetup} returns: the secret in base32 and the `otpauth://` URI for a QR code. */
export interface TotpSetup {
  secret: string;
  otpauthUrl: string;
  /**
   * With `totp.recoveryCodesAtSetup` only: the recovery codes that become usable when this factor
   * is enabled (RC-4), to show now; absent otherwise.
   */
  recoveryCodes?: string[];
}

/** The input of {@link beginTotpSetup}: the user, and the proof of a recent sign-in. */
export interface BeginTotpSetupInput extends ReauthenticationProof {
  userId: string;
}

/**
 * Starts TOTP enrolment for a signed-in user (`POST /auth/2fa/setup`; TOTP-5) who has just
 * proven it is them (the password, or a sign-in younger than `reauthentication.recentSignIn`):
 * a stolen access token alone cannot put the thief's authenticator on the account (unless
 * `reauthentication.unsafeAllowTotpEnrolmentWithoutProof` says otherwise, TOTP-7). A new
 * 20-byte secret (TOTP-2) is stored encrypted (TOTP-6) and pending until {@link enableTotp}
 * sees a valid code. Calling it again replaces a pending secret. With `totp.recoveryCodesAtSetup`
 * the answer also holds the recovery codes that enabling this factor will make usable (RC-4).
 *
 * @throws {AuthError} 40001 no proof and no recent sign-in, 40100 wrong password, 40900 TOTP already enabled, 42900 throttled.
 * @example
 * ```ts
 * const { secret, otpauthUrl } = await beginTotpSetup(auth, { userId, password: "the current password" });
 * ```
 */
export async function beginTotpSetup(auth: Auth, input: BeginTotpSetupInput): Promise<TotpSetup> {
  const user = await signedInUser(auth, input.userId);
  if ((await auth.storage.totp.get(user.id))?.enabled) throw new AuthError(ErrorCode.Conflict, "TOTP is already enabled");
  await requireEnrolmentProof(auth, user, input);
  const pending = await storePendingTotp(auth, user);
  if (!auth.config.totp.recoveryCodesAtSetup) return pending.setup;
  return { ...pending.setup, recoveryCodes: pendingRecoveryCodes(user.id, pending.secret, pending.sealed) };
}

/** A pending factor just stored: what the authenticator app needs, and the secret in its two forms. */
interface StoredPendingTotp {
  setup: TotpSetup;
  secret: Uint8Array;
  sealed: EncryptedSecret;
}

/** Stores a fresh 20-byte secret (TOTP-2), sealed (TOTP-6), as the user's pending factor. */
async function storePendingTotp(auth: Auth, user: UserRecord): Promise<StoredPendingTotp> {
  const secret = auth.randomBytes(totpSecretBytes);
  const sealed = sealTotpSecret(auth, user.id, secret);
  const stored = await auth.storage.totp.putPending({
    userId: user.id,
    secret: sealed,
    enabled: false,
    lastUsedStep: -1,
    createdAt: auth.now(),
  });
  if (!stored) throw new AuthError(ErrorCode.Conflict, "TOTP is already enabled");
  return { setup: await totpEnrolment(secret, auth.config.totp.label, user.username), secret, sealed };
}

/**
 * Stores a new pending TOTP factor for a user who has proven it is them: a fresh 20-byte secret
 * (TOTP-2), encrypted (TOTP-6), replacing a pending one; answers what the authenticator app needs.
 *
 * @throws {AuthError} 40900 TOTP already enabled.
 */
export async function putPendingTotp(auth: Auth, user: UserRecord): Promise<TotpSetup> {
  return (await storePendingTotp(auth, user)).setup;
}

/** The input of {@link enableTotp}: a code of the new authenticator, and the proof of a recent sign-in. */
export interface EnableTotpInput extends BeginTotpSetupInput {
  code: string;
}

/**
 * Turns pending TOTP on once the user proves a code from it (`POST /auth/2fa/enable`), with
 * the same re-authentication as {@link beginTotpSetup}; issues ten recovery codes (shown once;
 * RC-1; with `totp.recoveryCodesAtSetup`, the set `2fa/setup` showed for this factor, RC-4) and
 * ends every other session of the user, keeping `sessionId`, the one it was made from
 * (SE-2; every session when none is given): the next sign-in asks for the second factor.
 *
 * @throws {AuthError} 40001 no proof and no recent sign-in, 40100 wrong password, 40900 nothing pending or already enabled, 40103 wrong code, 42900 throttled.
 */
export async function enableTotp(auth: Auth, input: EnableTotpInput): Promise<{ recoveryCodes: string[] }> {
  const user = await signedInUser(auth, input.userId);
  const code = requiredString(input.code, "code");
  const password = optionalString(input.password, "password");
  // Already on: nothing to enable, whatever the proof (re-authenticating would ask for its code).
  if ((await auth.storage.totp.get(user.id))?.enabled) throw new AuthError(ErrorCode.Conflict, "Start TOTP setup first");
  await requireEnrolmentProof(auth, user, { sessionId: input.sessionId, password });
  const proven = await provePendingTotp(auth, user, code, input.sessionId);
  if (!(await auth.storage.totp.enable(user.id))) throw new AuthError(ErrorCode.Conflict, "TOTP is already enabled");
  const recoveryCodes = auth.config.totp.recoveryCodesAtSetup
    ? await storePendingRecoveryCodes(auth, proven)
    : await storeNewRecoveryCodes(auth, user.id);
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "totp_enabled" });
  auth.emit({ type: "totp.enabled", userId: user.id, at: auth.now() });
  return { recoveryCodes };
}

/**
 * The input of {@link disableTotp} and {@link regenerateRecoveryCodes}: the password and a current
 * code, or either one for a factor the session's recent sign-in proved, and the session the change
 * is made from.
 */
export interface SecondFactorChangeInput {
  userId: string;
  /** A current code of the authenticator. */
  code?: string;
  /** The current password. */
  password?: string;
  /** The session of the request: it goes on, the user's others end (SE-2); its recent sign-in may stand for proofs (STUP-3). */
  sessionId?: string;
}

/** The input of {@link disableTotp}. */
export type DisableTotpInput = SecondFactorChangeInput;

/** Requires TOTP to be on, then every factor of the account (STUP-3): the password and `code`, or what the session recently proved. */
async function requireBothFactors(auth: Auth, user: UserRecord, input: SecondFactorChangeInput): Promise<void> {
  const totpCode = optionalString(input.code, "code");
  const password = optionalString(input.password, "password");
  if (!(await auth.storage.totp.get(user.id))?.enabled) throw new AuthError(ErrorCode.Conflict, "TOTP is not enabled");
  await requireRecentAuthentication(auth, user, { sessionId: input.sessionId, password, totpCode });
}

/**
 * Turns TOTP off (`POST /auth/2fa/disable`) once the user proves every factor (STUP-3, ASVS
 * 7.5.1): the password and a current code, or either for a factor the session proved at a sign-in
 * or re-authentication within `reauthentication.recentSignIn` (see `requireRecentAuthentication`),
 * so a hijacked session with a phished password cannot. Removes the secret and the recovery codes
 * and ends every other session of the user, keeping `sessionId` (SE-2).
 *
 * @throws {AuthError} 40001 a factor missing, 40900 not enabled, 40103 wrong code, 40100 wrong password, 42900 throttled.
 */
export async function disableTotp(auth: Auth, input: DisableTotpInput): Promise<void> {
  const user = await signedInUser(auth, input.userId);
  await requireBothFactors(auth, user, input);
  await auth.storage.totp.remove(user.id);
  await auth.storage.recoveryCodes.removeAll(user.id);
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "totp_disabled" });
  auth.emit({ type: "totp.disabled", userId: user.id, at: auth.now() });
}

/**
 * Replaces a user's recovery codes with a new set (`POST /auth/2fa/recovery-codes`) once the user
 * proves every factor, as for {@link disableTotp} (STUP-3); the old set stops working at once
 * (RC-1), and every other session of the user ends, `sessionId` going on (SE-2).
 *
 * @throws {AuthError} 40001 a factor missing, 40100 wrong password, 40900 TOTP not enabled, 40103 wrong code, 42900 throttled.
 */
export async function regenerateRecoveryCodes(auth: Auth, input: SecondFactorChangeInput): Promise<{ recoveryCodes: string[] }> {
  const user = await signedInUser(auth, input.userId);
  await requireBothFactors(auth, user, input);
  const recoveryCodes = await storeNewRecoveryCodes(auth, user.id);
  await endOtherSessions(auth, { userId: user.id, keepSessionId: input.sessionId, reason: "recovery_codes_regenerated" });
  auth.emit({ type: "recovery_codes.regenerated", userId: user.id, at: auth.now() });
  return { recoveryCodes };
}
