import { type Duration, type OptionNames, durationSeconds, fail, refuseUnknownOptions } from "../config-values.js";

/** The `reauthentication` options of `createAuth`. */
export interface ReauthenticationConfig {
  /**
   * How long after a sign-in the user may enrol TOTP or register a passkey without
   * proving the password or a TOTP code again. Default `"5m"`, at most 1 hour; `false` asks
   * for proof every time.
   */
  recentSignIn?: Duration | false;
}

/** {@link ReauthenticationConfig} with its default filled in: 0 when proof is asked every time. */
export interface ResolvedReauthenticationConfig {
  recentSignInSeconds: number;
}

/** Checks the `reauthentication` options and fills in their default; throws a `TypeError` naming a bad one. */
export function resolveReauthenticationConfig(config: ReauthenticationConfig | undefined): ResolvedReauthenticationConfig {
  refuseUnknownOptions(config, { recentSignIn: true } satisfies OptionNames<ReauthenticationConfig>, "reauthentication.");
  const recentSignIn = config?.recentSignIn ?? "5m";
  const recentSignInSeconds = recentSignIn === false ? 0 : durationSeconds(recentSignIn, "reauthentication.recentSignIn");
  if (recentSignInSeconds > 3600) fail(`reauthentication.recentSignIn must be at most 1h; got ${recentSignInSeconds} seconds`);
  return { recentSignInSeconds };
}
