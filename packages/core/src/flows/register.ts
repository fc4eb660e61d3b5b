import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { takeAttempt } from "../throttle/throttle.js";
import type { FieldValue } from "../user-fields/field.js";
import { readFieldInput } from "../user-fields/values.js";
import { normalizeEmail } from "../users/email.js";
import { sendVerificationLink } from "./change-email.js";
import { createUserRecord } from "./create-user.js";
import { optionalString, requiredString } from "./input.js";
import type { LoginResult } from "./login-result.js";
import { completeFirstFactor } from "./pending-login.js";

/** The input of {@link register}. Nothing else is read: roles, ids and states come from the configuration (SU-1). */
export interface RegisterInput {
  username: string;
  password: string;
  /** The account's email address (`normalizeEmail`), always stored unverified: only its own token proves it (EV-1). */
  email?: string;
  /** The client address: each may sign up `throttle.unauthenticatedWrites` times (RL-7, SU-1). */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session to show the user. */
  userAgent?: string;
  /** The request's `Accept-Language`: the language of the verification link's message. */
  acceptLanguage?: string | undefined;
  /**
   * Additional fields declared `signUp: true` (any other is 42200, naming it); each checked against
   * its declaration, and those left out get their defaults.
   */
  fields?: Record<string, FieldValue>;
}

/**
 * What {@link register} answers: the new account signed in, or, where the operator requires a
 * second factor of it (`secondFactor.required`), the enrolment token of a 40105 answer (STUP-4):
 * a new account has no second factor.
 */
export type RegisterResult = Exclude<LoginResult, { status: "totp_required" }>;

/**
 * Makes a local account for someone who is not signed in, and signs it in (`POST
 * /auth/register`): a new session with its tokens and a device token, as any sign-in (PW-7,
 * RL-5), or the enrolment token of a 40105 answer when a second factor is required of the account
 * (STUP-4). Only when `signUp.enabled` (SU-1). The account's roles are `signUp.defaultRoles`; its id,
 * token version and state are the library's, never the caller's (SU-1). The username follows the
 * username rule and the password the policy and the breached-password check (PW-3). With `ip`,
 * the fields are checked and then one attempt is taken from the address's
 * `throttle.unauthenticatedWrites` before anything else, refusals included, so that a stream of
 * sign-ups or of probes for taken names is held back per address (RL-7). An `email` is stored
 * unverified, whoever else has it (EV-1: only the address's own token verifies it).
 *
 * @throws {AuthError} 40001/40002 a missing or non-string field, 40002 an `email` that is not an address or a malformed
 *   additional field, 40400 sign-up is off, 40900 the username is taken, 42200 the username or password is refused
 *   (with the reason) or an additional field is not `signUp` or out of its limits, 42900 too many
 *   from `ip`, 50300 the hashing queue is full or `password.isBreached` failed.
 * @example
 * ```ts
 * const result = await register(auth, { username: "newcomer", password: "a long passphrase", ip });
 * if (result.status === "authenticated") useTokens(result.tokens);
 * ```
 */
export async function register(auth: Auth, input: RegisterInput): Promise<RegisterResult> {
  if (!auth.config.signUp.enabled) throw new AuthError(ErrorCode.NotFound, "Sign-up is not enabled");
  const username = requiredString(input.username, "username");
  const password = requiredString(input.password, "password");
  const rawEmail = optionalString(input.email, "email");
  const email = rawEmail === undefined ? undefined : normalizeEmail(rawEmail, "email");
  const fields = readFieldInput(auth.userFields, input.fields, "signUp");
  if (input.ip !== undefined) await takeAttempt(auth, "unauthenticatedWrites", input.ip, input.ip);
  // Never verified, so never 40900 for an address: sign-up neither proves an address nor tells whose it is (EV-1).
  const roles = auth.config.signUp.defaultRoles;
  const user = await createUserRecord(
    auth,
    { username, password, roles, email, emailVerified: false, fields },
    { by: "sign_up" },
  );
  if (email !== undefined && auth.config.email !== null) sendVerificationLink(auth, user, email, input.acceptLanguage);
  // A new account has no second factor: its password completes the sign-in, unless one is required of it (STUP-4).
  return (await completeFirstFactor(auth, user, ["pwd"], input.ip, { userAgent: input.userAgent })) as RegisterResult;
}
