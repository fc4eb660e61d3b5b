import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";

/** The `totp` options of `createAuth`. */
export interface TotpConfig {
  /** Steps accepted either side of now: 0 or 1. Default 1. */
  window?: 0 | 1;
  /** The issuer shown in authenticator apps. Default: the host of `issuer`. */
  label?: string;
}

/** {@link TotpConfig} with its defaults filled in. */
export interface ResolvedTotpConfig {
  window: 0 | 1;
  label: string;
  /** Wrong codes one temporary token allows before it is void (TMP-4). */
  maxAttemptsPerToken: number;
}

/**
 * Checks the `totp` options and fills in their defaults, the label from `issuerHost` (the host
 * of the configured `issuer`); throws a `TypeError` naming a bad one.
 */
export function resolveTotpConfig(config: TotpConfig | undefined, issuerHost: string): ResolvedTotpConfig {
  refuseUnknownOptions(config, { window: true, label: true } satisfies OptionNames<TotpConfig>, "totp.");
  const window = config?.window ?? 1;
  if (window !== 0 && window !== 1) fail("totp.window must be 0 or 1");
  return { window, label: config?.label ?? issuerHost, maxAttemptsPerToken: 5 };
}
