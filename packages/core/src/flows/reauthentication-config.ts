import { type Duration, type OptionNames, durationSeconds, fail, refuseUnknownOptions } from "../config-values.js";

/** The `reauthentication` options of `createAuth`. */
export interface ReauthenticationConfig {
  /**
   * How long after a sign-in the user may enrol TOTP or register a passkey without
   * proving the password or a TOTP code again. Default `"5m"`, at most 1 hour; `false` asks
   * for proof every time.
   */
  recentSignIn?: Duration | false;
  /**
   * UNSAFE: let a signed-in session start and finish TOTP enrolment (`2fa/setup`, `2fa/enable`)
   * without re-authenticating, however old its sign-in (TOTP-7), for a client whose enrolment
   * page has no password field (`docs/compatibility.md`). The risk: whoever holds a stolen access
   * token can bind their own authenticator to the account, and enabling ends the owner's other
   * sessions, so the owner is then locked out until an administrator removes the factor. A
   * password the request does offer is still checked, the new authenticator must still prove a
   * code at `2fa/enable`, and nothing else is relaxed: turning TOTP off, new recovery codes,
   * passkeys, the password, the address, sessions and providers still need re-authentication
   * (STUP-3). Default false.
   */
  unsafeAllowTotpEnrolmentWithoutProof?: boolean;
  /**
   * UNSAFE: let a user with TOTP on change their password with the current password alone
   * (`POST /auth/password` and its alias), however old the sign-in, for a client whose password
   * page has no code field (`docs/compatibility.md`; TOTP-8). The risk: whoever holds a stolen
   * access token and has phished or guessed the password can change it without the
   * authenticator, and the change ends the owner's other sessions. A `totpCode` the request does
   * send is still required to be right, the current password is checked and throttled as always,
   * and nothing else is relaxed (STUP-3). Default false.
   */
  unsafeAllowPasswordChangeWithoutSecondFactor?: boolean;
}

/** {@link ReauthenticationConfig} with its default filled in: 0 when proof is asked every time. */
export interface ResolvedReauthenticationConfig {
  recentSignInSeconds: number;
  /** Whether TOTP enrolment skips re-authentication (TOTP-7). */
  unsafeAllowTotpEnrolmentWithoutProof: boolean;
  /** Whether a password change needs the current password only, TOTP on or not (TOTP-8). */
  unsafeAllowPasswordChangeWithoutSecondFactor: boolean;
}

/** Checks the `reauthentication` options and fills in their default; throws a `TypeError` naming a bad one. */
export function resolveReauthenticationConfig(config: ReauthenticationConfig | undefined): ResolvedReauthenticationConfig {
  const options = {
    recentSignIn: true,
    unsafeAllowTotpEnrolmentWithoutProof: true,
    unsafeAllowPasswordChangeWithoutSecondFactor: true,
  } satisfies OptionNames<ReauthenticationConfig>;
  refuseUnknownOptions(config, options, "reauthentication.");
  const recentSignIn = config?.recentSignIn ?? "5m";
  const recentSignInSeconds = recentSignIn === false ? 0 : durationSeconds(recentSignIn, "reauthentication.recentSignIn");
  if (recentSignInSeconds > 3600) fail(`reauthentication.recentSignIn must be at most 1h; got ${recentSignInSeconds} seconds`);
  const unsafeAllowTotpEnrolmentWithoutProof = flagOption(
    config?.unsafeAllowTotpEnrolmentWithoutProof,
    "unsafeAllowTotpEnrolmentWithoutProof",
  );
  const unsafeAllowPasswordChangeWithoutSecondFactor = flagOption(
    config?.unsafeAllowPasswordChangeWithoutSecondFactor,
    "unsafeAllowPasswordChangeWithoutSecondFactor",
  );
  return { recentSignInSeconds, unsafeAllowTotpEnrolmentWithoutProof, unsafeAllowPasswordChangeWithoutSecondFactor };
}

/** A true-or-false option of `reauthentication`, false when absent; throws naming it otherwise. */
function flagOption(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") fail(`reauthentication.${name} must be true or false; got ${JSON.stringify(value)}`);
  return value;
}
