import type { Auth } from "../auth.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { createUserRecord } from "../flows/create-user.js";
import { optionalString, requiredString } from "../flows/input.js";
import type { LoginResult } from "../flows/login-result.js";
import { completeFirstFactor } from "../flows/pending-login.js";
import type { ChallengeRecord, UserRecord } from "../storage/types.js";
import { budgetOfClient, takeFailureAttempt } from "../throttle/failure-budget.js";
import { takeAttempt } from "../throttle/throttle.js";
import type { ResolvedEmailSignInConfig } from "./email-sign-in-config.js";
import { type EmailSignInData, codeDigest, emailSignInConfigOf, emailSignInKind, invalidSignIn } from "./sign-in-challenge.js";

/** The input of {@link finishEmailSignIn}: the binding of the begin, and the code or the link's token. */
export interface FinishEmailSignInInput {
  /** What the begin answered (the HTTP route reads it from the binding cookie, else from the body). */
  binding: string;
  /** The code the message carried; or `token`, not both. */
  code?: string;
  /** The token of the message's link (what follows `#token=`); or `code`, not both. */
  token?: string;
  /** The client address: one attempt from `throttle.ip` per finish. */
  ip?: string | undefined;
  /** The request's `User-Agent`, kept with the session. */
  userAgent?: string | undefined;
  /** The device token of an earlier sign-in of this client (RL-5). */
  deviceToken?: string | undefined;
}

/** What a finish proved, decided from what it read: the account it signs in, one to make, or nothing. */
type Proof = { outcome: "sign_in"; user: UserRecord } | { outcome: "sign_up" } | { outcome: "refused"; user: UserRecord | null };

/**
 * Ends an email sign-in (`POST /auth/email-sign-in/finish`; PL-1). Takes one attempt from the
 * client address, then one from the sign-in's own cap (`emailSignIn.maxAttempts`, atomically,
 * before anything is compared), looks the address's verified holder up again and takes one attempt
 * from its failure budget (its device's when the client holds a device token of it, RL-5), as a
 * password does: before the comparison, so a spent budget refuses even the right code. Then it
 * compares the code or token in constant time. A wrong code or token, a spent budget, or an
 * address that no local enabled account holds verified (without sign-up) is refused with one
 * answer whatever the reason. A right one spends the
 * sign-in with one atomic consume (of concurrent finishes exactly one goes on), then continues as
 * any first factor does (`completeFirstFactor` with `amr` `["email"]`): a user with TOTP gets the
 * 40102 step (PL-4), one who must enrol a second factor 40105, a disabled account 40300. With
 * `emailSignIn.signUp`, a code sent to an address nobody holds makes a local account without a
 * password, the address verified and its username (`signUp.defaultRoles`, `user.created` by
 * `sign_up`), then signs it in alike.
 *
 * @throws {AuthError} 40001 no binding, or neither `code` nor `token`; 40002 both, or a field that is
 *   no string; 40100 the code or link is invalid or expired, used, out of attempts, or its address
 *   held by no account that may sign in; 40300 the account is disabled; 40400 email sign-in off;
 *   40900 (sign-up) another account already has the address as its username; 42200 (sign-up) an
 *   address the username rule refuses; 42900 the client address's budget is spent.
 * @example
 * ```ts
 * const result = await finishEmailSignIn(auth, { binding, code: "123456", ip });
 * if (result.status === "totp_required") askForTotp(result.tempToken);
 * ```
 */
export async function finishEmailSignIn(auth: Auth, input: FinishEmailSignInInput): Promise<LoginResult> {
  const config = emailSignInConfigOf(auth);
  const binding = requiredString(input.binding, "binding");
  const code = optionalString(input.code, "code");
  const token = optionalString(input.token, "token");
  if (code !== undefined && token !== undefined) {
    throw new AuthError(ErrorCode.MalformedParameter, "Send the code or the link's token, not both");
  }
  if (!code && !token) throw new AuthError(ErrorCode.MissingParameter, "code or token is required");
  if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip, input.ip);
  const id = sha256(binding);
  const challenge = await auth.storage.challenges.takeAttempt(id, emailSignInKind, config.maxAttempts, auth.now());
  if (challenge === null) throw invalidSignIn();
  const data = challenge.data as unknown as EmailSignInData;
  const holder = await auth.storage.users.findByVerifiedEmail(data.emailKey);
  // As a password's (RL-1, RL-4): the attempt is taken before the code is compared, so a spent
  // budget refuses even the right one; told as every other refusal (PL-3), never as 42900.
  if (holder !== null && !(await tookAttempt(auth, holder, input))) return refuse(auth, holder, input);
  const proof = decide(auth, config, challenge, data, holder, { code, token });
  if (proof.outcome === "refused") return refuse(auth, proof.user, input);
  // Like POST /auth/register, a sign-up spends the client address's budget (RL-7): before the
  // consume, so that a throttled request leaves the code to a later one.
  if (proof.outcome === "sign_up" && input.ip !== undefined) await takeAttempt(auth, "unauthenticatedWrites", input.ip, input.ip);
  if (!(await auth.storage.challenges.consume(id, emailSignInKind, auth.now()))) throw invalidSignIn();
  const user = proof.outcome === "sign_in" ? proof.user : await signUpByEmail(auth, data.emailKey);
  const client = { deviceToken: input.deviceToken, userAgent: input.userAgent };
  return completeFirstFactor(auth, user, ["email"], input.ip, client);
}

/**
 * What a finish proves (a pure decision on what it read): a right code or token for the account
 * that holds the address, or a right code for an address nobody holds when sign-up by email is on.
 * A code is taken for a sign-in only when the messages carry codes (`method` `"code"` or `"both"`):
 * with `"link"` nobody was sent one. A token is never taken for a sign-up, whose message has no link.
 */
export function decide(
  auth: Auth,
  config: ResolvedEmailSignInConfig,
  challenge: Pick<ChallengeRecord, "id">,
  data: EmailSignInData,
  holder: UserRecord | null,
  presented: { code?: string | undefined; token?: string | undefined },
): Proof {
  const codeRight =
    presented.code !== undefined && constantTimeEqual(codeDigest(auth, challenge.id, presented.code), String(data.codeHash));
  const tokenRight =
    presented.token !== undefined &&
    typeof data.linkHash === "string" &&
    constantTimeEqual(sha256(presented.token), data.linkHash);
  if (holder !== null) {
    const proven = tokenRight || (codeRight && config.method !== "link");
    // A directory's account signs in through the directory; a disabled one is told so only once
    // the factor is proven (EN-1), by completeFirstFactor.
    return proven && holder.source === "local" ? { outcome: "sign_in", user: holder } : { outcome: "refused", user: holder };
  }
  const signUp = config.signUp && auth.config.signUp.enabled;
  return codeRight && signUp ? { outcome: "sign_up" } : { outcome: "refused", user: null };
}

/** Takes one attempt from the holder's failure budget (its device's with a device token, RL-5); false when it is spent. */
async function tookAttempt(auth: Auth, holder: UserRecord, input: FinishEmailSignInInput): Promise<boolean> {
  try {
    await takeFailureAttempt(auth, budgetOfClient(auth, holder.usernameKey, input.deviceToken), input.ip);
    return true;
  } catch (error) {
    if (error instanceof AuthError && error.code === ErrorCode.TooManyAttempts) return false;
    throw error;
  }
}

/** A refused finish: `login.failed`, and 40100, the same answer for every address and reason (PL-3). */
function refuse(auth: Auth, holder: UserRecord | null, input: FinishEmailSignInInput): never {
  auth.emit({ type: "login.failed", userId: holder?.id ?? null, reason: "invalid_credentials", at: auth.now(), ip: input.ip });
  throw invalidSignIn();
}

/**
 * Makes the account of a sign-up by email code: local, no password, the address verified and as its
 * username (as `emailKeyOf` compares it), `signUp.defaultRoles`.
 */
async function signUpByEmail(auth: Auth, emailKey: string): Promise<UserRecord> {
  const roles = auth.config.signUp.defaultRoles;
  return createUserRecord(auth, { username: emailKey, email: emailKey, emailVerified: true, roles }, { by: "sign_up" });
}
