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
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/**
 * Completes a login with a one-time recovery code (`POST /auth/2fa/recovery`).
 *
 * The attempt is taken from the temporary token and the account before the code is checked
 * (TMP-4, RL-1). A code that exists spends the temporary token first, then itself with one
 * atomic consume: it works once, also under concurrency (RC-3), a request that loses the race
 * for the temporary token spends no code, and a typo keeps the temporary token usable.
 *
 * @throws {AuthError} 40100 bad or spent temporary token, 40103 wrong or used code, 42900 throttled.
 */
export async function useRecoveryCode(auth: Auth, input: UseRecoveryCodeInput): Promise<TokenSet> {
  const tempToken = requiredString(input.tempToken, "tempToken");
  const recoveryCode = requiredString(input.recoveryCode, "recoveryCode");
  const pending = await openPendingLogin(auth, tempToken, input.ip, input.userAgent);
  const normalized = normalizeRecoveryCode(recoveryCode);
  const hash = normalized === null ? null : hashRecoveryCode(pending.user.id, normalized);
  if (hash === null || !(await auth.storage.recoveryCodes.has(pending.user.id, hash))) {
    return refuseSecondFactor(auth, pending, "recovery_code");
  }
  return completePendingLogin(auth, pending, {
    kind: "recovery_code",
    amr: ["rc"],
    spend: () => auth.storage.recoveryCodes.consume(pending.user.id, hash),
  });
}
