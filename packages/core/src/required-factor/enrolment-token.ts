import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import type { FailureBudget } from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import { passwordStamp } from "../users/password-stamp.js";
import { hasSecondFactor } from "./requirement.js";

/** What the enrolment token of a 40105 answer keeps: where the sign-in stood when its first factor was proven. */
interface EnrolmentData {
  /** The user's token version then: a raised one voids the token (TV-2). */
  tokenVersion: number;
  /** How the first factor was proven, as `amr`; the enrolled factor's follows it in the session. */
  firstFactor: AuthMethod[];
  /** The failure budget the sign-in spent: cleared, and its device carried on, when the enrolment completes (RL-5). */
  budget: FailureBudget;
  /** The {@link passwordStamp} then: a password changed since voids the token (TMP-4). */
  passwordStamp: string;
  /** When the first factor was proven, when before the sign-in (a provider's `auth_time`: STUP-5): the session's `authTime`. */
  authTime?: number;
}

/** A live enrolment token, opened by {@link openEnrolment}. */
export interface OpenEnrolment {
  /** The id of its challenge: the SHA-256 of the token. */
  challengeId: string;
  user: UserRecord;
  firstFactor: AuthMethod[];
  /** When the first factor was proven, when before the sign-in (a provider's `auth_time`): the session's `authTime`. */
  authTime: number | undefined;
  budget: FailureBudget;
  ip: string | undefined;
}

const kind = "second_factor_enrolment";

/**
 * Issues the enrolment token of a sign-in whose first factor (`firstFactor`, proven at `authTime`
 * when that was before now) was proven for a user who must have a second factor and has none
 * (40105): an opaque token, stored only as its SHA-256 under its own challenge kind, so no other
 * check accepts it (TMP-2), for `secondFactor.enrolmentTtl`. Nothing of a session exists yet
 * (TMP-1, PW-7). Emits `second_factor.enrolment_required`.
 */
export async function issueEnrolmentToken(
  auth: Auth,
  user: UserRecord,
  { firstFactor, authTime }: { firstFactor: AuthMethod[]; authTime?: number | undefined },
  ip: string | undefined,
  budget: FailureBudget,
): Promise<string> {
  const token = opaqueToken(auth);
  const now = auth.now();
  const data: EnrolmentData = {
    tokenVersion: user.tokenVersion,
    firstFactor,
    budget,
    passwordStamp: passwordStamp(auth, user),
    ...(authTime === undefined ? {} : { authTime }),
  };
  await auth.storage.challenges.put({
    id: token.hash,
    kind,
    userId: user.id,
    data: { ...data },
    attempts: 0,
    createdAt: now,
    expiresAt: now + auth.config.secondFactor.enrolmentTtlSeconds * 1000,
  });
  auth.emit({ type: "second_factor.enrolment_required", userId: user.id, at: now, ip });
  return token.value;
}

const badEnrolmentToken = () => new AuthError(ErrorCode.AuthenticationFailed, "The temporary token is invalid or expired");

/**
 * Opens an enrolment token for one request: one attempt is taken from the client address and one
 * from the token, atomically and before anything else is checked, so a token serves at most
 * `secondFactor.enrolmentAttempts` requests however many run at once (TMP-4). The token is refused
 * (40100), and voided, when it is unknown, expired, spent or out of attempts, when its user is gone
 * or disabled, at another token version, under another password (TMP-4), or has a second factor by
 * now: enrolment is for an account without one, never a way past one.
 *
 * @throws {AuthError} 40001/40002 no token or not a string, 40100 refused as above, 42900 throttled.
 */
export async function openEnrolment(auth: Auth, tempToken: string, ip: string | undefined): Promise<OpenEnrolment> {
  if (ip !== undefined) await takeAttempt(auth, "ip", ip, ip);
  const challengeId = sha256(tempToken);
  const now = auth.now();
  const challenge = await auth.storage.challenges.takeAttempt(challengeId, kind, auth.config.secondFactor.enrolmentAttempts, now);
  if (!challenge?.userId) throw badEnrolmentToken();
  const data = challenge.data as unknown as EnrolmentData;
  const user = await auth.storage.users.findById(challenge.userId);
  if (
    !user ||
    user.disabled ||
    user.tokenVersion !== data.tokenVersion ||
    !constantTimeEqual(data.passwordStamp, passwordStamp(auth, user)) ||
    (await hasSecondFactor(auth, user))
  ) {
    await auth.storage.challenges.consume(challengeId, kind, now);
    throw badEnrolmentToken();
  }
  return { challengeId, user, firstFactor: data.firstFactor, authTime: data.authTime, budget: data.budget, ip };
}

/**
 * Spends an open enrolment token with one atomic consume, before the factor it enrols is turned
 * on: of concurrent completions one wins, and the others get 40100 and change nothing (TMP-3).
 */
export async function spendEnrolment(auth: Auth, enrolment: OpenEnrolment): Promise<void> {
  if (!(await auth.storage.challenges.consume(enrolment.challengeId, kind, auth.now()))) throw badEnrolmentToken();
}
