import type { Auth } from "../auth.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { requiredString } from "./input.js";
import { completePendingLogin, openPendingLogin, refuseSecondFactor } from "./pending-login.js";

/** The input of {@link useRecoveryCode}. */
export interface UseRecoveryCodeInput {
  /** The temporary token from the 40102 answer of {@link login}. */
  tempToken: string;
  /** One of the user's recovery codes; dashes, spaces and case do not matter. */
  recoveryCode: string;
  ip?: string;
}

/**
 * Completes a login with a one-time recovery code (`POST /auth/2fa/recovery`).
 *
 * The code is removed by one atomic consume, so it works once, also under concurrency (RC-3);
 * failures count toward the account throttle and the temporary token's limit. The code is
 * spent before the temporary token: a typo keeps the temporary token usable.
 *
 * @throws {AuthError} 40100 bad or spent temporary token, 40103 wrong or used code, 42900 throttled.
 */
export async function useRecoveryCode(auth: Auth, input: UseRecoveryCodeInput): Promise<TokenSet> {
  const tempToken = requiredString(input.tempToken, "tempToken");
  const recoveryCode = requiredString(input.recoveryCode, "recoveryCode");
  const pending = await openPendingLogin(auth, tempToken, input.ip);
  const normalized = normalizeRecoveryCode(recoveryCode);
  const consumed =
    normalized !== null &&
    (await auth.storage.recoveryCodes.consume(pending.user.id, hashRecoveryCode(pending.user.id, normalized)));
  if (!consumed) return refuseSecondFactor(auth, pending, "recovery_code");
  return completePendingLogin(auth, pending, "recovery_code", ["pwd", "rc"]);
}
