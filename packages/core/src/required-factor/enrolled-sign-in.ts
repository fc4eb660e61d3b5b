import type { Auth } from "../auth.js";
import type { SessionsEndedReason } from "../events/types.js";
import { startDeviceSession } from "../flows/pending-login.js";
import type { AuthMethod } from "../storage/types.js";
import { clearFailureBudget } from "../throttle/failure-budget.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import { endOtherSessions } from "../users/sessions.js";
import type { OpenEnrolment } from "./enrolment-token.js";

/**
 * Completes the sign-in of an enrolment token whose factor was just turned on (its token already
 * spent): every session the user had ends, as after any second factor turned on with no session
 * to keep (SE-2), the failure budget the first factor spent is cleared (RL-1), and a fresh session
 * starts (PW-7) whose `amr` is the first factor's followed by the new factor's `amr`, and whose
 * sign-in time is the first factor's (a provider's `auth_time`: STUP-5), with a device token (RL-5).
 */
export async function signInEnrolled(
  auth: Auth,
  enrolment: OpenEnrolment,
  factor: { amr: AuthMethod[]; reason: SessionsEndedReason; userAgent: string | undefined },
): Promise<TokenSet> {
  const { user, budget, ip } = enrolment;
  await endOtherSessions(auth, { userId: user.id, reason: factor.reason });
  await clearFailureBudget(auth, budget);
  const amr = [...enrolment.firstFactor, ...factor.amr];
  return startDeviceSession(auth, user, amr, { ip, userAgent: factor.userAgent }, budget, enrolment.authTime);
}
