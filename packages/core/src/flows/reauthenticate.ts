import type { Auth } from "../auth.js";
import { directoryPasswordMatches } from "../directory/sign-in.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { type FailureBudget, clearFailureBudget, sessionBudget, takeFailureAttempt } from "../throttle/failure-budget.js";
import { acceptTotpCode } from "../totp/totp-secret.js";
import { optionalString } from "./input.js";

/** What a signed-in user offers to show it is really them before a change that needs it. */
export interface ReauthenticationProof {
  /**
   * The session of the request's access token: a sign-in younger than
   * `reauthentication.recentSignIn` needs no further proof.
   */
  sessionId?: string;
  /** The user's current password. */
  password?: string;
  /** A current code of the user's authenticator, when TOTP is on. */
  totpCode?: string;
}

/**
 * Requires recent re-authentication before a change that would let a thief of an access token
 * take the account over: enrolling TOTP, regenerating recovery codes, registering a passkey
 * (TOTP-5, WA-6). Accepted, in this order: the current password (a directory user's checked by
 * the directory, against the same entry); a current TOTP code when
 * TOTP is on (its step is spent: TOTP-4); or a live session of this user, at its current token
 * version, whose sign-in is younger than `recentSignInSeconds` (default:
 * `reauthentication.recentSignIn`, 5 minutes). A password or code attempt first takes an attempt
 * (RL-1, RL-4) from the budget of the request's session when it is a live session of the user,
 * so that a stranger's failures never stop a signed-in user (RL-5), else from the account's; a
 * right one clears that budget, as a sign-in does.
 *
 * @throws {AuthError} 40001 no proof and no recent sign-in, 40100 wrong password, 40103 wrong
 * code, 40900 a TOTP code while TOTP is off, 42900 throttled, 50300 the directory is unavailable.
 */
export async function requireRecentAuthentication(
  auth: Auth,
  user: UserRecord,
  proof: ReauthenticationProof,
  recentSignInSeconds = auth.config.reauthentication.recentSignInSeconds,
): Promise<void> {
  const password = optionalString(proof.password, "password");
  const totpCode = optionalString(proof.totpCode, "totpCode");
  if (password) {
    const budget = await budgetOfProof(auth, user, proof.sessionId);
    await takeFailureAttempt(auth, budget);
    const proven =
      user.source === "directory"
        ? await directoryPasswordMatches(auth, user, password)
        : await auth.passwords.verify(user.passwordHash, password);
    if (!proven) {
      throw new AuthError(ErrorCode.AuthenticationFailed, "Invalid password");
    }
    await clearFailureBudget(auth, budget);
  } else if (totpCode) {
    const totp = await auth.storage.totp.get(user.id);
    if (!totp?.enabled) throw new AuthError(ErrorCode.Conflict, "TOTP is not enabled");
    const budget = await budgetOfProof(auth, user, proof.sessionId);
    await takeFailureAttempt(auth, budget);
    if (!(await acceptTotpCode(auth, totp, totpCode))) throw new AuthError(ErrorCode.SecondFactorFailed);
    await clearFailureBudget(auth, budget);
  } else if (!(await signedInRecently(auth, user, proof.sessionId, recentSignInSeconds))) {
    throw new AuthError(
      ErrorCode.MissingParameter,
      "Confirm it is you: send the current password, or a TOTP code when TOTP is on",
    );
  }
}

/**
 * The failure budget of a proof made from a session (RL-5): the session's own when `sessionId`
 * is a live session of `user`, else the account's.
 */
export async function budgetOfProof(auth: Auth, user: UserRecord, sessionId: unknown): Promise<FailureBudget> {
  const session = typeof sessionId === "string" ? await auth.storage.sessions.findSession(sessionId) : null;
  const live = session !== null && session.userId === user.id && session.revokedAt === null && session.expiresAt > auth.now();
  return live ? sessionBudget(session.id) : { scope: "account", usernameKey: user.usernameKey };
}

/** True when `sessionId` is a live session of `user` that began within the last `windowSeconds`. */
async function signedInRecently(auth: Auth, user: UserRecord, sessionId: unknown, windowSeconds: number): Promise<boolean> {
  const window = windowSeconds * 1000;
  if (window === 0 || typeof sessionId !== "string") return false;
  const session = await auth.storage.sessions.findSession(sessionId);
  const now = auth.now();
  return (
    session !== null &&
    session.userId === user.id &&
    session.tokenVersion === user.tokenVersion &&
    session.revokedAt === null &&
    session.expiresAt > now &&
    now - session.createdAt < window
  );
}
