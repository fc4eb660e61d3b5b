import type { AuthMethod } from "../storage/types.js";
import { factorsProven } from "./amr.js";

/**
 * What the re-authentication decision reads (STUP-3): whether the account has a second factor,
 * what the session proved at a recent enough sign-in or re-authentication, and what the request
 * offers. Nothing here is checked yet: the decision says which proofs would be enough.
 */
export interface ReauthenticationFacts {
  /** Whether the account has a second factor (TOTP on). */
  secondFactor: boolean;
  /** What the session proved (its `amr`) when that was within the window; null when it was not, or there is no session of the user. */
  recent: readonly AuthMethod[] | null;
  /** The proofs the request offers, as the methods they would prove: `pwd` for a password, `otp` for a TOTP code. */
  offered: readonly AuthMethod[];
}

/** The decision: check the offered proofs and go on, or refuse naming which factors are still missing. */
export type ReauthenticationDecision =
  | { outcome: "prove" }
  | {
      outcome: "missing";
      /** No first factor (a password, a passkey, a provider) is proven or offered. */
      first: boolean;
      /** The account has a second factor, and none (a TOTP or recovery code, a user-verified passkey) is proven or offered. */
      second: boolean;
    };

/**
 * Whether a change that needs re-authentication may go on once the offered proofs check out
 * (STUP-3, ASVS 7.5.1, 6.4.3): every factor the account has must be proven, by the request or by
 * the session's recent sign-in or re-authentication. A first factor always (a password, a passkey,
 * a provider); a second factor too when the account has one (a TOTP or recovery code, or a
 * user-verified passkey, which proves both). So a hijacked session with a phished password cannot
 * turn TOTP off, and a recent sign-in counts only for the factors it proved itself. A pure
 * function of what was read.
 */
export function decideReauthentication(facts: ReauthenticationFacts): ReauthenticationDecision {
  const proven = factorsProven([...(facts.recent ?? []), ...facts.offered]);
  const first = !proven.first;
  const second = facts.secondFactor && !proven.second;
  return first || second ? { outcome: "missing", first, second } : { outcome: "prove" };
}

/**
 * The ways an account can prove it is its user again (a 40001's `data.reauthenticateWith`): its
 * password (local or the directory's), one of its passkeys, or a provider it is linked to.
 */
export type ReauthenticationWay = "password" | "passkey" | "provider";

/**
 * The 40001 message of a refusal: what to send, or to re-authenticate first (`POST
 * /auth/reauthenticate`); for an account without a password (`ways` lacks it: a passkey-only or
 * provider-only account), to re-authenticate first with what it has.
 */
export function missingProofMessage(
  missing: Extract<ReauthenticationDecision, { outcome: "missing" }>,
  ways: readonly ReauthenticationWay[] = ["password"],
): string {
  if (!ways.includes("password")) {
    return "Confirm it is you: this account has no password, so re-authenticate first with a passkey or its provider";
  }
  if (!missing.first) return "This account has a second factor: send a current TOTP code as well, or re-authenticate first";
  const what = missing.second ? "the current password and a current TOTP code" : "the current password";
  return `Confirm it is you: send ${what}, or re-authenticate first`;
}
