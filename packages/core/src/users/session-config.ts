import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";

/** The `sessions` options of `createAuth`: what a session records of where it is used from. */
export interface SessionConfig {
  /**
   * Record each session's whole client address. Default false: the network only (IPv4 /24 such as
   * `203.0.113.0/24`, IPv6 /48 such as `2001:db8:1::/48`), enough for a user to tell their own
   * sessions apart in the list, and less kept about where they are.
   */
  keepFullAddress?: boolean;
}

/** {@link SessionConfig} with its default filled in. */
export interface ResolvedSessionConfig {
  keepFullAddress: boolean;
}

/** Checks the `sessions` options and fills in their default; throws a `TypeError` naming a bad one. */
export function resolveSessionConfig(config: SessionConfig | undefined): ResolvedSessionConfig {
  if (config === undefined) return { keepFullAddress: false };
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    fail(`sessions must be an object such as { keepFullAddress: true }; got ${JSON.stringify(config)}`);
  }
  refuseUnknownOptions(config, { keepFullAddress: true } satisfies OptionNames<SessionConfig>, "sessions.");
  const keepFullAddress = config.keepFullAddress ?? false;
  if (typeof keepFullAddress !== "boolean") {
    fail(`sessions.keepFullAddress must be true or false; got ${JSON.stringify(keepFullAddress)}`);
  }
  return { keepFullAddress };
}
