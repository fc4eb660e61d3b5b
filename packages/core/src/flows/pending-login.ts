import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { SecondFactorKind } from "../events/types.js";
import { passkeyOfferDue } from "../passwordless/passkey-offer.js";
import { issueEnrolmentToken } from "../required-factor/enrolment-token.js";
import { signInStepOf } from "../required-factor/requirement.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { issueDeviceToken } from "../throttle/device-token.js";
import {
  type FailureBudget,
  budgetOfClient,
  clearFailureBudget,
  deviceIdOfBudget,
  takeFailureAttempt,
} from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import { type TokenSet, startSession } from "../tokens/issue-tokens.js";
import { passwordStamp } from "../users/password-stamp.js";
import type { SessionClient } from "../users/session-use.js";
import type { LoginResult } from "./login-result.js";

/** The data a pending second-factor login keeps with its temporary token. */
export interface PendingLogin {
  /** The user's token version when the first factor was proven (TMP-4). */
  tokenVersion: number;
  /** How the first factor was proven: `["pwd"]`, or `["hwk"]` for a passkey without user verification. */
  firstFactor: AuthMethod[];
  /** Whose failures the second factor spends (RL-5, RL-6); absent in logins stored before it: the account's. */
  budget?: FailureBudget;
  /** The {@link passwordStamp} of the user's password when the first factor was proven (TMP-4); absent in logins stored before it. */
  passwordStamp?: string;
  /** When the first factor was proven, epoch milliseconds, when before the sign-in (a provider's `auth_time`: STUP-5); the session's `authTime`. */
  authTime?: number;
}

/** Whether a pending login was begun under the user's current password; one stored before stamps were kept is. */
function samePassword(auth: Auth, pending: PendingLogin, user: UserRecord): boolean {
  return pending.passwordStamp === undefined || constantTimeEqual(pending.passwordStamp, passwordStamp(auth, user));
}

/** A login whose first factor was proven and whose second factor is awaited. */
export interface OpenPendingLogin {
  challengeId: string;
  user: UserRecord;
  /** How the first factor was proven: `["pwd"]`, or `["hwk"]` for a passkey without user verification. */
  firstFactor: AuthMethod[];
  ip: string | undefined;
  /** Whose failures the second factor spends. */
  budget: FailureBudget;
  /** The `User-Agent` of the request completing the login, kept with the session it starts. */
  userAgent: string | undefined;
  /** When the first factor was proven, when before the sign-in (a provider's `auth_time`): the session's `authTime`. */
  authTime: number | undefined;
}

/** How {@link completeFirstFactor} goes on from a proven first factor. */
export interface FirstFactorOptions {
  /** The first factor is already multi-factor (a user-verified passkey): no second step. */
  complete?: boolean;
  /** The device token the client sent, if any (RL-5). */
  deviceToken?: string;
  /**
   * Set when the first factor was not the password (a passkey: RL-6): the budget its second
   * factor spends when the client holds no device token, instead of the account's. A password
   * sign-in leaves it out: its attempt was taken from the client's budget, which a success clears.
   */
  otherFactorBudget?: FailureBudget;
  /** The request's `User-Agent`, kept with the session when one starts (shown in the sessions list). */
  userAgent?: string | undefined;
  /**
   * When the first factor was proven, epoch milliseconds, if before now: a provider's `auth_time`
   * (STUP-5). The session's `authTime`, through a TOTP step or an enrolment too. Default now.
   */
  authTime?: number;
}

/**
 * Ends a login whose first factor (`firstFactor`, as `amr`) was just proven. A disabled account
 * is told so now, and only now that the factor was proven (EN-1): 40300. A user with TOTP
 * on gets a temporary token for the second step and no session (EN-3, TMP-1); a user the
 * operator's `secondFactor.required` names who has no second factor gets an enrolment token and
 * no session (40105), and one whose second factor is a passkey is refused (40300: sign in with
 * it), as `nextSignInStep` decides (STUP-4); anyone else, or
 * a first factor that is already multi-factor (`complete`: a user-verified passkey), gets a
 * session and a device token (RL-5), and the failures of the budget the password spent are
 * cleared (RL-1). The second factor spends the client's device budget when it sent a valid device
 * token, else the account's after a password, or `otherFactorBudget` after a passkey (RL-6).
 */
export async function completeFirstFactor(
  auth: Auth,
  user: UserRecord,
  firstFactor: AuthMethod[],
  ip: string | undefined,
  { complete = false, deviceToken, otherFactorBudget, userAgent, authTime }: FirstFactorOptions = {},
): Promise<LoginResult> {
  if (user.disabled) {
    auth.emit({ type: "login.failed", userId: user.id, reason: "disabled", at: auth.now(), ip });
    throw new AuthError(ErrorCode.Forbidden, "The account is disabled");
  }
  const clientBudget = budgetOfClient(auth, user.usernameKey, deviceToken);
  const step = await signInStepOf(auth, user, complete);
  if (step === "tokens") {
    if (otherFactorBudget === undefined || clientBudget.scope === "device") await clearFailureBudget(auth, clientBudget);
    const tokens = await startDeviceSession(auth, user, firstFactor, { ip, userAgent }, clientBudget, authTime);
    return { status: "authenticated", tokens };
  }
  if (step === "passkey_required") {
    auth.emit({ type: "login.failed", userId: user.id, reason: "passkey_required", at: auth.now(), ip });
    throw new AuthError(ErrorCode.Forbidden, "This account's second factor is a passkey: sign in with the passkey");
  }
  const budget = clientBudget.scope === "device" ? clientBudget : (otherFactorBudget ?? clientBudget);
  if (step === "enrolment_required") {
    const tempToken = await issueEnrolmentToken(auth, user, { firstFactor, authTime }, ip, budget);
    return { status: "enrolment_required", tempToken };
  }
  const tempToken = opaqueToken(auth);
  const now = auth.now();
  const pending: PendingLogin = {
    tokenVersion: user.tokenVersion,
    firstFactor,
    budget,
    passwordStamp: passwordStamp(auth, user),
    ...(authTime === undefined ? {} : { authTime }),
  };
  await auth.storage.challenges.put({
    id: tempToken.hash,
    kind: "totp_login",
    userId: user.id,
    data: { ...pending },
    attempts: 0,
    createdAt: now,
    expiresAt: now + auth.config.ttl.temporary * 1000,
  });
  auth.emit({ type: "second_factor.required", userId: user.id, at: now, ip });
  return { status: "totp_required", tempToken: tempToken.value };
}

const badTempToken = () => new AuthError(ErrorCode.AuthenticationFailed, "The temporary token is invalid or expired");

/**
 * Starts the session of a completed sign-in, with a device token for the client: the device of
 * `budget` carries on when it was one, else a new device (RL-5). `authTime`: when the first factor
 * was proven, if before now (see `startSession`). With passkeys on, says whether to offer one
 * (`passkeyOfferDue`, PL-13).
 */
export async function startDeviceSession(
  auth: Auth,
  user: UserRecord,
  amr: AuthMethod[],
  client: SessionClient,
  budget: FailureBudget,
  authTime?: number,
): Promise<TokenSet> {
  const [tokens, offerPasskey] = await Promise.all([
    startSession(auth, user, amr, client, authTime),
    auth.config.passkeys ? passkeyOfferDue(auth, user, amr) : undefined,
  ]);
  const deviceToken = issueDeviceToken(auth, user.usernameKey, deviceIdOfBudget(budget));
  return { ...tokens, deviceToken, ...(offerPasskey === undefined ? {} : { offerPasskey }) };
}

/**
 * Finds the pending login of a temporary token and takes one attempt from the client address,
 * the temporary token and the login's failure budget (RL-5, RL-6), each atomically and before the second factor is
 * evaluated: of N concurrent attempts on one temporary token at most 5 are ever evaluated
 * (TMP-4, RL-4). The token is refused when it is unknown, expired, spent, out of attempts, when
 * the user's token version moved since it was issued (TV-2), or when the user's password changed
 * since (its stamp no longer matches): a password change voids outstanding temporary tokens (TMP-4).
 */
export async function openPendingLogin(
  auth: Auth,
  tempToken: string,
  ip: string | undefined,
  userAgent?: string,
): Promise<OpenPendingLogin> {
  if (ip !== undefined) await takeAttempt(auth, "ip", ip, ip);
  const challengeId = sha256(tempToken);
  const now = auth.now();
  const challenge = await auth.storage.challenges.takeAttempt(
    challengeId,
    "totp_login",
    auth.config.totp.maxAttemptsPerToken,
    now,
  );
  if (!challenge?.userId) throw badTempToken();
  const pending = challenge.data as unknown as PendingLogin;
  const user = await auth.storage.users.findById(challenge.userId);
  if (!user || user.disabled || user.tokenVersion !== pending.tokenVersion || !samePassword(auth, pending, user)) {
    await auth.storage.challenges.consume(challengeId, "totp_login", now);
    throw badTempToken();
  }
  const budget = pending.budget ?? { scope: "account", usernameKey: user.usernameKey };
  await takeFailureAttempt(auth, budget, ip);
  return { challengeId, user, firstFactor: pending.firstFactor, ip, budget, userAgent, authTime: pending.authTime };
}

/** Reports a wrong second factor; its attempt was already taken. Always throws 40103. */
export function refuseSecondFactor(auth: Auth, pending: OpenPendingLogin, kind: SecondFactorKind): never {
  auth.emit({ type: "second_factor.failed", userId: pending.user.id, kind, at: auth.now(), ip: pending.ip });
  throw new AuthError(ErrorCode.SecondFactorFailed);
}

/**
 * Completes a pending login whose second factor was checked and found right: spends the
 * temporary token with one atomic consume first (TMP-3), so that of concurrent completions the
 * losers get 40100 and spend nothing, then spends the factor itself with `spendFactor` (a
 * compare-and-set or a consume; false when a concurrent request spent it first, which is
 * 40103), and starts a fresh session (PW-7) whose `amr` is the first factor's followed by
 * `factor.amr`.
 */
export async function completePendingLogin(
  auth: Auth,
  pending: OpenPendingLogin,
  factor: { kind: SecondFactorKind; amr: AuthMethod[]; spend: () => Promise<boolean> },
): Promise<TokenSet> {
  const consumed = await auth.storage.challenges.consume(pending.challengeId, "totp_login", auth.now());
  if (!consumed) throw badTempToken();
  if (!(await factor.spend())) refuseSecondFactor(auth, pending, factor.kind);
  await clearFailureBudget(auth, pending.budget);
  auth.emit({ type: "second_factor.succeeded", userId: pending.user.id, kind: factor.kind, at: auth.now(), ip: pending.ip });
  const client = { ip: pending.ip, userAgent: pending.userAgent };
  const amr = [...pending.firstFactor, ...factor.amr];
  return startDeviceSession(auth, pending.user, amr, client, pending.budget, pending.authTime);
}
