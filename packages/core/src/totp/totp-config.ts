import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";

/** The `totp` options of `createAuth`. */
export interface TotpConfig {
  /** Steps accepted either side of now: 0 or 1. Default 1. */
  window?: 0 | 1;
  /** The issuer shown in authenticator apps. Default: the host of `issuer`. */
  label?: string;
  /**
   * Also answer `POST /auth/2fa/setup` with the recovery codes (`recoveryCodes`), for a client
   * that shows them on its setup page (`docs/compatibility.md`). They are a pending set, derived
   * from the pending factor and stored nowhere, that becomes usable only when `2fa/enable`
   * succeeds (which answers the same codes); a new setup replaces the set, and a setup never
   * enabled leaves no usable code (RC-4). Default false: `2fa/setup` answers only `secret` and
   * `otpauthUrl`, and `2fa/enable` draws the codes.
   */
  recoveryCodesAtSetup?: boolean;
}

/** {@link TotpConfig} with its defaults filled in. */
export interface ResolvedTotpConfig {
  window: 0 | 1;
  label: string;
  /** Wrong codes one temporary token allows before it is void (TMP-4). */
  maxAttemptsPerToken: number;
  /** Whether `2fa/setup` answers the pending set of recovery codes (RC-4). */
  recoveryCodesAtSetup: boolean;
}

/**
 * Checks the `totp` options and fills in their defaults, the label from `issuerHost` (the host
 * of the configured `issuer`); throws a `TypeError` naming a bad one.
 */
export function resolveTotpConfig(config: TotpConfig | undefined, issuerHost: string): ResolvedTotpConfig {
  const options = { window: true, label: true, recoveryCodesAtSetup: true } satisfies OptionNames<TotpConfig>;
  refuseUnknownOptions(config, options, "totp.");
  const window = config?.window ?? 1;
  if (window !== 0 && window !== 1) fail("totp.window must be 0 or 1");
  const recoveryCodesAtSetup = config?.recoveryCodesAtSetup ?? false;
  if (typeof recoveryCodesAtSetup !== "boolean") {
    fail(`totp.recoveryCodesAtSetup must be true or false; got ${JSON.stringify(recoveryCodesAtSetup)}`);
  }
  return { window, label: config?.label ?? issuerHost, maxAttemptsPerToken: 5, recoveryCodesAtSetup };
}
