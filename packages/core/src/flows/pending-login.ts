import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { SecondFactorKind } from "../events/types.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { clearAccountFailures, takeAttempt } from "../throttle/throttle.js";
import { type TokenSet, startSession } from "../tokens/issue-tokens.js";
import type { PendingLogin } from "./login.js";

/** A login whose password was proven and whose second factor is awaited. */
export interface OpenPendingLogin {
  challengeId: string;
  user: UserRecord;
  ip: string | undefined;
}

const badTempToken = () => new AuthError(ErrorCode.AuthenticationFailed, "The temporary token is invalid or expired");

/**
 * Finds the pending login of a temporary token and takes one attempt from the client
 * address and the account. The token is refused when it is unknown, expired, already spent
 * or void, or when the user's token version moved since it was issued: a password change
 * voids outstanding temporary tokens (TMP-4, TV-2).
 */
export async function openPendingLogin(auth: Auth, tempToken: string, ip: string | undefined): Promise<OpenPendingLogin> {
  if (ip !== undefined) await takeAttempt(auth, "ip", ip, ip);
  const challengeId = sha256(tempToken);
  const challenge = await auth.storage.challenges.find(challengeId, "totp_login", auth.now());
  if (!challenge?.userId) throw badTempToken();
  const pending = challenge.data as unknown as PendingLogin;
  const user = await auth.storage.users.findById(challenge.userId);
  if (!user || user.disabled || user.tokenVersion !== pending.tokenVersion) {
    await auth.storage.challenges.consume(challengeId, "totp_login", auth.now());
    throw badTempToken();
  }
  await takeAttempt(auth, "account", user.usernameKey, ip);
  return { challengeId, user, ip };
}

/**
 * Counts a wrong second factor against the temporary token (at most 5, then it is void;
 * TMP-4) and reports it; the account attempt was already taken. Always throws 40103.
 */
export async function refuseSecondFactor(auth: Auth, pending: OpenPendingLogin, kind: SecondFactorKind): Promise<never> {
  await auth.storage.challenges.recordFailure(pending.challengeId, "totp_login", auth.config.totp.maxAttemptsPerToken);
  auth.emit({ type: "second_factor.failed", userId: pending.user.id, kind, at: auth.now(), ip: pending.ip });
  throw new AuthError(ErrorCode.SecondFactorFailed);
}

/**
 * Spends the temporary token with one atomic consume (TMP-3) and starts a fresh session
 * (PW-7). Of two concurrent completions, the loser gets 40100.
 */
export async function completePendingLogin(
  auth: Auth,
  pending: OpenPendingLogin,
  kind: SecondFactorKind,
  amr: AuthMethod[],
): Promise<TokenSet> {
  const consumed = await auth.storage.challenges.consume(pending.challengeId, "totp_login", auth.now());
  if (!consumed) throw badTempToken();
  await clearAccountFailures(auth, pending.user.usernameKey);
  auth.emit({ type: "second_factor.succeeded", userId: pending.user.id, kind, at: auth.now(), ip: pending.ip });
  return startSession(auth, pending.user, amr, pending.ip);
}
