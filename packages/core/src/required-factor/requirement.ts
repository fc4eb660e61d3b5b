import type { Auth } from "../auth.js";
import type { UserRecord } from "../storage/types.js";
import type { SecondFactorSubject } from "./required-factor-config.js";

/**
 * What a proven first factor leads to: `tokens` a session; `totp_required` the TOTP step (40102);
 * `enrolment_required` the enrolment-only state (40105); `passkey_required` a refusal (40300):
 * the account's second factor is a passkey, so it signs in with the passkey (STUP-4).
 */
export type SignInStep = "tokens" | "totp_required" | "enrolment_required" | "passkey_required";

/** What {@link nextSignInStep} decides from. */
export interface SignInFacts {
  /** The sign-in proved two factors itself: a user-verified passkey, or a provider trusted for the second factor. */
  multiFactor: boolean;
  /** The account has TOTP on (a pending factor is not on). */
  totpEnabled: boolean;
  /** The operator's `secondFactor.required` names this user. */
  required: boolean;
  /** The account has a passkey, and passkeys require user verification: a passkey sign-in is itself two factors. */
  countedPasskey: boolean;
}

/**
 * The decision, a pure function of what was read (STUP-4, ASVS 6.3.3). A sign-in that proved two
 * factors gets tokens; else TOTP, where the account has it, is asked for, whether required or
 * not; else a user nobody requires anything of gets tokens; else a required user whose second
 * factor is a passkey must sign in with it (the password alone may not enrol a new factor past
 * it), and one with no second factor enrols one first.
 */
export function nextSignInStep(facts: SignInFacts): SignInStep {
  if (facts.multiFactor) return "tokens";
  if (facts.totpEnabled) return "totp_required";
  if (!facts.required) return "tokens";
  return facts.countedPasskey ? "passkey_required" : "enrolment_required";
}

/**
 * Whether the operator's `secondFactor.required` names this user. A function is given a frozen
 * {@link SecondFactorSubject}, and must answer true or false: any other answer throws (the sign-in
 * fails with 50000, closed rather than open), as does a function that throws.
 */
export async function secondFactorRequired(auth: Auth, user: UserRecord): Promise<boolean> {
  const { required } = auth.config.secondFactor;
  if (required === null) return false;
  if (required === "always") return true;
  if (typeof required === "object") return user.roles.some((role) => required.roles.includes(role));
  const subject: SecondFactorSubject = Object.freeze({
    id: user.id,
    username: user.username,
    roles: Object.freeze([...user.roles]),
    source: user.source,
  });
  const answer: unknown = await required(subject);
  if (typeof answer !== "boolean") {
    throw new TypeError(`secondFactor.required must answer true or false; it answered ${String(JSON.stringify(answer))}`);
  }
  return answer;
}

/**
 * Whether the account has a passkey that is a second factor: passkeys are configured with
 * `userVerification: "required"`, so each was registered, and signs in, with user verification.
 * Under `"preferred"` a passkey may prove possession only, and whether it verified the user at
 * registration is not stored: it does not count.
 */
export async function hasCountedPasskey(auth: Auth, user: UserRecord): Promise<boolean> {
  if (auth.config.passkeys?.userVerification !== "required") return false;
  return (await auth.storage.passkeys.listByUser(user.id)).length > 0;
}

/**
 * {@link nextSignInStep} for a user whose first factor was just proven, reading only what decides:
 * nothing after a multi-factor sign-in, the TOTP factor, then the requirement, then the passkeys.
 * `totpEnabled`, when the caller has read it already, spares the read.
 */
export async function signInStepOf(
  auth: Auth,
  user: UserRecord,
  multiFactor: boolean,
  totpEnabled?: boolean,
): Promise<SignInStep> {
  if (multiFactor) return "tokens";
  const totp = totpEnabled ?? (await auth.storage.totp.get(user.id))?.enabled === true;
  if (totp) return "totp_required";
  const required = await secondFactorRequired(auth, user);
  const countedPasskey = required && (await hasCountedPasskey(auth, user));
  return nextSignInStep({ multiFactor, totpEnabled: totp, required, countedPasskey });
}

/** Whether the account has a second factor: TOTP on, or a passkey that counts ({@link hasCountedPasskey}). */
export async function hasSecondFactor(auth: Auth, user: UserRecord): Promise<boolean> {
  return (await auth.storage.totp.get(user.id))?.enabled === true || (await hasCountedPasskey(auth, user));
}
