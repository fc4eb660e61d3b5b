import { type OptionNames, fail, refuseUnknownOptions } from "../config-values.js";

/** The highest `sessions.maxPerUser`: a cap is for a handful of devices, and the sessions list shows 100. */
const highestSessionCap = 1000;

/** The `sessions` options of `createAuth`: what a session records of where it is used from, and how many one account may hold. */
export interface SessionConfig {
  /**
   * Record each session's whole client address. Default false: the network only (IPv4 /24 such as
   * `203.0.113.0/24`, IPv6 /48 such as `2001:db8:1::/48`), enough for a user to tell their own
   * sessions apart in the list, and less kept about where they are.
   */
  keepFullAddress?: boolean;
  /**
   * The most live sessions one account may hold at once (STUP-8, ASVS 7.1.2), 1 to 1000. A sign-in
   * that passes it ends the account's oldest sessions (by when they began), each reported as
   * `session.revoked` with reason `session_limit`. Default: no cap.
   */
  maxPerUser?: number;
}

/** {@link SessionConfig} with its defaults filled in: `maxPerUser` null when there is no cap. */
export interface ResolvedSessionConfig {
  keepFullAddress: boolean;
  maxPerUser: number | null;
}

/** Checks the `sessions` options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolveSessionConfig(config: SessionConfig | undefined): ResolvedSessionConfig {
  if (config === undefined) return { keepFullAddress: false, maxPerUser: null };
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    fail(`sessions must be an object such as { keepFullAddress: true }; got ${JSON.stringify(config)}`);
  }
  refuseUnknownOptions(config, { keepFullAddress: true, maxPerUser: true } satisfies OptionNames<SessionConfig>, "sessions.");
  const keepFullAddress = config.keepFullAddress ?? false;
  if (typeof keepFullAddress !== "boolean") {
    fail(`sessions.keepFullAddress must be true or false; got ${JSON.stringify(keepFullAddress)}`);
  }
  const { maxPerUser } = config;
  if (maxPerUser === undefined) return { keepFullAddress, maxPerUser: null };
  if (!Number.isInteger(maxPerUser) || maxPerUser < 1 || maxPerUser > highestSessionCap) {
    fail(
      `sessions.maxPerUser must be a whole number from 1 to ${highestSessionCap}, or left out for no cap; got ${JSON.stringify(maxPerUser)}`,
    );
  }
  return { keepFullAddress, maxPerUser };
}
