import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { SecondFactorKind } from "../events/types.js";
import type { AuthMethod, UserRecord } from "../storage/types.js";
import { clearAccountFailures, takeAttempt } from "../throttle/throttle.js";
import { type TokenSet, startSession } from "../tokens/issue-tokens.js";
import type { LoginResult } from "./login.js";

/** The data a pending second-factor login keeps with its temporary token. */
export interface PendingLogin {
  /** The user's token version when the first factor was proven (TMP-4). */
  tokenVersion: number;
  /** How the first factor was proven: `["pwd"]`, or `["hwk"]` for a passkey without user verification. */
  firstFactor: AuthMethod[];
}

/** A login whose first factor was proven and whose second factor is awaited. */
export interface OpenPendingLogin {
  challengeId: string;
  user: UserRecord;
  /** How the first factor was proven: `["pwd"]`, or `["hwk"]` for a passkey without user verification. */
  firstFactor: AuthMethod[];
  ip: string | undefined;
}

/**
 * Ends a login whose first factor (`firstFactor`, as `amr`) was just proven. A disabled account
 * is told so now, and only now that the factor was proven (EN-1): 40300. A user with TOTP
 * on gets a temporary token for the second step and no session (EN-3, TMP-1); anyone else, or
 * a first factor that is already multi-factor (`complete`: a user-verified passkey), gets a
 * session, and the account's failure count is cleared (RL-1).
 */
export async function completeFirstFactor(
  auth: Auth,
  user: UserRecord,
  firstFactor: AuthMethod[],
  ip: string | undefined,
  { complete = false } = {},
): Promise<LoginResult> {
  if (user.disabled) {
    auth.emit({ type: "login.failed", userId: user.id, reason: "disabled", at: auth.now(), ip });
    throw new AuthError(ErrorCode.Forbidden, "The account is disabled");
  }
  if (complete || !(await auth.storage.totp.get(user.id))?.enabled) {
    await clearAccountFailures(auth, user.usernameKey);
    return { status: "authenticated", tokens: await startSession(auth, user, firstFactor, ip) };
  }
  const tempToken = opaqueToken(auth);
  const now = auth.now();
  const pending: PendingLogin = { tokenVersion: user.tokenVersion, firstFactor };
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
 * Finds the pending login of a temporary token and takes one attempt from the client address,
 * the temporary token and the account, each atomically and before the second factor is
 * evaluated: of N concurrent attempts on one temporary token at most 5 are ever evaluated
 * (TMP-4, RL-4). The token is refused when it is unknown, expired, spent, out of attempts, or
 * when the user's token version moved since it was issued: a password change voids outstanding
 * temporary tokens (TMP-4, TV-2).
 */
export async function openPendingLogin(auth: Auth, tempToken: string, ip: string | undefined): Promise<OpenPendingLogin> {
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
  if (!user || user.disabled || user.tokenVersion !== pending.tokenVersion) {
    await auth.storage.challenges.consume(challengeId, "totp_login", now);
    throw badTempToken();
  }
  await takeAttempt(auth, "account", user.usernameKey, ip);
  return { challengeId, user, firstFactor: pending.firstFactor, ip };
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
  await clearAccountFailures(auth, pending.user.usernameKey);
  auth.emit({ type: "second_factor.succeeded", userId: pending.user.id, kind: factor.kind, at: auth.now(), ip: pending.ip });
  return startSession(auth, pending.user, [...pending.firstFactor, ...factor.amr], pending.ip);
}
