import type { Auth } from "../auth.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { unusedTotpStep } from "../totp/totp-secret.js";
import { requiredString } from "./input.js";
import { completePendingLogin, openPendingLogin, refuseSecondFactor } from "./pending-login.js";

/** The input of {@link verifyTotp}. */
export interface VerifyTotpInput {
  /** The temporary token from the 40102 answer of {@link login}. */
  tempToken: string;
  /** The six-digit code from the authenticator app. */
  code: string;
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/**
 * Completes a login with a TOTP code (`POST /auth/2fa/verify`).
 *
 * The attempt is taken from the temporary token and the account before the code is checked
 * (TMP-4, RL-1). A right code spends the temporary token first, then its time step with a
 * compare-and-set: a code works once (TOTP-4), two concurrent verifications give one token
 * pair (TMP-3), and a request that loses the race for the temporary token spends no step.
 *
 * @throws {AuthError} 40100 bad or spent temporary token, 40103 wrong or replayed code, 42900 throttled.
 * @example
 * ```ts
 * const tokens = await verifyTotp(auth, { tempToken, code: "123456" });
 * ```
 */
export async function verifyTotp(auth: Auth, input: VerifyTotpInput): Promise<TokenSet> {
  const tempToken = requiredString(input.tempToken, "tempToken");
  const code = requiredString(input.code, "code");
  const pending = await openPendingLogin(auth, tempToken, input.ip, input.userAgent);
  const totp = await auth.storage.totp.get(pending.user.id);
  const step = totp?.enabled ? await unusedTotpStep(auth, totp, code) : null;
  if (step === null) return refuseSecondFactor(auth, pending, "totp");
  return completePendingLogin(auth, pending, {
    kind: "totp",
    amr: ["otp"],
    spend: () => auth.storage.totp.advanceStep(pending.user.id, step),
  });
}
