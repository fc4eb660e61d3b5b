import type { Auth } from "../auth.js";
import { directoryPasswordMatches } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { refuseImpersonated } from "../impersonation/impersonate.js";
import { authTimeOf } from "../step-up/amr.js";
import { decideReauthentication, missingProofMessage } from "../step-up/policy.js";
import type { AuthMethod, TotpRecord, UserRecord } from "../storage/types.js";
import { type FailureBudget, clearFailureBudget, sessionBudget, takeFailureAttempt } from "../throttle/failure-budget.js";
import { acceptTotpCode } from "../totp/totp-secret.js";
import { reauthenticationWaysOf } from "../users/sign-in-ways.js";
import { optionalString } from "./input.js";

/** What a signed-in user offers to show it is really them before a change that needs it. */
export interface ReauthenticationProof {
  /**
   * The session of the request's access token: a sign-in or re-authentication younger than
   * `reauthentication.recentSignIn` stands for the factors it proved (its `amr`).
   */
  sessionId?: string;
  /** The user's current password. */
  password?: string;
  /** A current code of the user's authenticator, when TOTP is on. */
  totpCode?: string;
}

/**
 * Requires the user to prove every factor the account has before a change that would let a thief
 * of an access token take the account over or lock its owner out (STUP-3, ASVS 7.5.1, 6.4.3):
 * turning TOTP on or off, new recovery codes, a passkey added or removed, the password or the
 * address changed, a provider linked, sessions ended, an administrator's change. A first factor
 * always, and a second when TOTP is on; each proven by the request (`password`, `totpCode`) or
 * by the session's sign-in or latest re-authentication when that was within `recentSignInSeconds`
 * (default `reauthentication.recentSignIn`, 5 minutes) at the user's current token version, and
 * only for the factors it proved (its `amr`). A user-verified passkey proves both. The decision is
 * {@link decideReauthentication}'s; every proof offered is then checked, the password first (a
 * directory user's by the directory): each takes an attempt (RL-1, RL-4) from the budget of the
 * request's session when it is a live session of the user, so that a stranger's failures never
 * stop a signed-in user (RL-5), else from the account's; a right one clears that budget, and a
 * TOTP code's step is spent (TOTP-4).
 *
 * @throws {AuthError} 40001 a factor neither offered nor recently proven (the message says which
 *   to send), 40100 wrong password, 40103 wrong code, 40900 a TOTP code while TOTP is off, 42900
 *   throttled, 50300 the directory is unavailable.
 */
export async function requireRecentAuthentication(
  auth: Auth,
  user: UserRecord,
  proof: ReauthenticationProof,
  recentSignInSeconds = auth.config.reauthentication.recentSignInSeconds,
): Promise<void> {
  const offered = offeredProofs(proof);
  const totp = await auth.storage.totp.get(user.id);
  const recent = await recentlyProven(auth, user, proof.sessionId, recentSignInSeconds);
  await proveEveryFactor(auth, user, proof.sessionId, offered, totp, recent);
}

/** The proofs a request offers, checked for type (PW-5: 40002 naming a field that is not a string). */
export interface OfferedProofs {
  password: string | undefined;
  totpCode: string | undefined;
}

/** Reads the `password` and `totpCode` of a proof. */
export function offeredProofs(proof: ReauthenticationProof): OfferedProofs {
  return { password: optionalString(proof.password, "password"), totpCode: optionalString(proof.totpCode, "totpCode") };
}

/**
 * Decides with {@link decideReauthentication} whether the offered proofs, with what the session
 * proved `recent`ly, cover every factor of the account, then checks each offered proof; returns
 * the methods the proofs proved (`pwd`, `otp`). What {@link requireRecentAuthentication} and a
 * re-authentication share.
 *
 * @throws {AuthError} as {@link requireRecentAuthentication}.
 */
export async function proveEveryFactor(
  auth: Auth,
  user: UserRecord,
  sessionId: unknown,
  offered: OfferedProofs,
  totp: TotpRecord | null,
  recent: readonly AuthMethod[] | null,
): Promise<AuthMethod[]> {
  const totpOn = totp?.enabled === true;
  if (offered.totpCode && !totpOn) throw new AuthError(ErrorCode.Conflict, "TOTP is not enabled");
  const methods: AuthMethod[] = [];
  if (offered.password) methods.push("pwd");
  if (offered.totpCode) methods.push("otp");
  const decision = decideReauthentication({ secondFactor: totpOn, recent, offered: methods });
  if (decision.outcome === "missing") {
    const ways = await reauthenticationWaysOf(auth, user);
    throw new AuthError(ErrorCode.MissingParameter, missingProofMessage(decision, ways), { data: { reauthenticateWith: ways } });
  }
  if (offered.password) await provePassword(auth, user, sessionId, offered.password);
  if (offered.totpCode) await proveTotpCode(auth, user, sessionId, totp as TotpRecord, offered.totpCode);
  return methods;
}

async function provePassword(auth: Auth, user: UserRecord, sessionId: unknown, password: string): Promise<void> {
  const budget = await budgetOfProof(auth, user, sessionId);
  await takeFailureAttempt(auth, budget);
  const proven =
    user.source === "directory"
      ? await directoryPasswordMatches(auth, user, password)
      : await auth.passwords.verify(user.passwordHash, password);
  if (!proven) throw new AuthError(ErrorCode.AuthenticationFailed, "Invalid password");
  await clearFailureBudget(auth, budget);
}

async function proveTotpCode(auth: Auth, user: UserRecord, sessionId: unknown, totp: TotpRecord, code: string): Promise<void> {
  const budget = await budgetOfProof(auth, user, sessionId);
  await takeFailureAttempt(auth, budget);
  if (!(await acceptTotpCode(auth, totp, code))) throw new AuthError(ErrorCode.SecondFactorFailed);
  await clearFailureBudget(auth, budget);
}

/**
 * The failure budget of a proof made from a session (RL-5): the session's own when `sessionId`
 * is a live session of `user`, else the account's.
 */
export async function budgetOfProof(auth: Auth, user: UserRecord, sessionId: unknown): Promise<FailureBudget> {
  const session = typeof sessionId === "string" ? await auth.storage.sessions.findSession(sessionId) : null;
  refuseImpersonated(auth, session, "reauthentication");
  const live = session !== null && session.userId === user.id && session.revokedAt === null && session.expiresAt > auth.now();
  return live ? sessionBudget(session.id) : { scope: "account", usernameKey: user.usernameKey };
}

/**
 * What the session proved (its `amr`) when `sessionId` is a live session of `user`, at the user's
 * token version, whose sign-in or latest re-authentication is within the last `windowSeconds`;
 * null otherwise, and without reading storage when the window is 0 or the id no string.
 */
async function recentlyProven(
  auth: Auth,
  user: UserRecord,
  sessionId: unknown,
  windowSeconds: number,
): Promise<readonly AuthMethod[] | null> {
  const window = windowSeconds * 1000;
  if (window === 0 || typeof sessionId !== "string") return null;
  const session = await auth.storage.sessions.findSession(sessionId);
  refuseImpersonated(auth, session, "reauthentication");
  const now = auth.now();
  const recent =
    session !== null &&
    session.userId === user.id &&
    session.tokenVersion === user.tokenVersion &&
    session.revokedAt === null &&
    session.expiresAt > now &&
    now - authTimeOf(session) < window;
  return recent ? session.amr : null;
}
