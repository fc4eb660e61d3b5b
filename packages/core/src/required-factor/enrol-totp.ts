import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { type TotpSetup, putPendingTotp, storeNewRecoveryCodes } from "../flows/totp-enrolment.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { unusedTotpStep } from "../totp/totp-secret.js";
import { signInEnrolled } from "./enrolled-sign-in.js";
import { openEnrolment, spendEnrolment } from "./enrolment-token.js";

/** The input of {@link beginTotpEnrolment}. */
export interface BeginTotpEnrolmentInput {
  /** The temporary token of the 40105 answer. */
  tempToken: string;
  /** The client address, for per-address throttling. */
  ip?: string;
}

/**
 * Starts enrolling TOTP with the enrolment token of a 40105 answer (`POST /auth/2fa/enrolment/setup`;
 * STUP-4): a new pending secret, as `beginTotpSetup` makes for a signed-in user, the token's proven
 * first factor standing for the re-authentication. Calling it again replaces the pending secret.
 * Takes one of the token's attempts.
 *
 * @throws {AuthError} 40001/40002 no token, 40100 the token is refused (see `openEnrolment`), 42900 throttled.
 * @example
 * ```ts
 * const { otpauthUrl } = await beginTotpEnrolment(auth, { tempToken });
 * ```
 */
export async function beginTotpEnrolment(auth: Auth, input: BeginTotpEnrolmentInput): Promise<TotpSetup> {
  const enrolment = await openEnrolment(auth, requiredString(input.tempToken, "tempToken"), input.ip);
  return putPendingTotp(auth, enrolment.user);
}

/** The input of {@link finishTotpEnrolment}. */
export interface FinishTotpEnrolmentInput extends BeginTotpEnrolmentInput {
  /** A code of the new authenticator. */
  code: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/** What a completed enrolment of TOTP answers: the sign-in's token set, and the recovery codes, shown this once. */
export interface TotpEnrolled {
  tokens: TokenSet;
  recoveryCodes: string[];
}

/**
 * Turns the pending TOTP factor on with a code from it and completes the sign-in
 * (`POST /auth/2fa/enrolment/enable`; STUP-4). The attempt is taken from the token first (TMP-4);
 * a right code spends the token (TMP-3: of concurrent completions one gets tokens), then its time
 * step (TOTP-4). The factor is turned on, ten recovery codes are issued (RC-1), every session the
 * user had ends (SE-2), and a new session starts with `amr` the first factor's and `otp` (PW-7).
 *
 * @throws {AuthError} 40001/40002 missing input, 40100 the token is refused or spent, 40103 wrong or used code, 40900 no pending factor, 42900 throttled.
 * @example
 * ```ts
 * const { tokens, recoveryCodes } = await finishTotpEnrolment(auth, { tempToken, code: "123456" });
 * ```
 */
export async function finishTotpEnrolment(auth: Auth, input: FinishTotpEnrolmentInput): Promise<TotpEnrolled> {
  const tempToken = requiredString(input.tempToken, "tempToken");
  const code = requiredString(input.code, "code");
  const enrolment = await openEnrolment(auth, tempToken, input.ip);
  const { user } = enrolment;
  const totp = await auth.storage.totp.get(user.id);
  if (!totp) throw new AuthError(ErrorCode.Conflict, "Start TOTP setup first");
  const step = await unusedTotpStep(auth, totp, code);
  if (step === null) {
    auth.emit({ type: "second_factor.failed", userId: user.id, kind: "totp", at: auth.now(), ip: input.ip });
    throw new AuthError(ErrorCode.SecondFactorFailed);
  }
  await spendEnrolment(auth, enrolment);
  if (!(await auth.storage.totp.advanceStep(user.id, step)) || !(await auth.storage.totp.enable(user.id))) {
    throw new AuthError(ErrorCode.SecondFactorFailed);
  }
  const recoveryCodes = await storeNewRecoveryCodes(auth, user.id);
  auth.emit({ type: "totp.enabled", userId: user.id, at: auth.now() });
  const tokens = await signInEnrolled(auth, enrolment, { amr: ["otp"], reason: "totp_enabled", userAgent: input.userAgent });
  return { tokens, recoveryCodes };
}
