import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";

/**
 * The `directoryLimits` options of `createAuth`: how much of the directory one process uses at
 * once, and how long one call may take (LDAP-4). A call is one login, one refresh's lookup, one
 * re-authentication's lookup or bind, one policy test or preview: each opens its own connection.
 */
export interface DirectoryLimitsConfig {
  /** Directory calls running at once, so connections and TLS handshakes open at once. Default 10. */
  maxConcurrent?: number;
  /** Calls that may wait for a slot; past that, a call is 50300 at once. Default 100; 0 allowed. */
  maxQueued?: number;
  /**
   * The most one call may take, from its arrival: waiting for a slot, connecting, TLS, the binds,
   * searches and group reads together. Past it the call is 50300 and its connections are closed.
   * Default `"10s"`, at most 120 seconds. The policy's `connectTimeoutSecs` and
   * `searchTimeoutSecs` still bound each step within it.
   */
  deadline?: Duration;
}

/** {@link DirectoryLimitsConfig} with its defaults filled in. */
export interface ResolvedDirectoryLimits {
  maxConcurrent: number;
  maxQueued: number;
  deadlineMs: number;
}

/** Checks the `directoryLimits` options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolveDirectoryLimits(config: DirectoryLimitsConfig | undefined): ResolvedDirectoryLimits {
  const options = { maxConcurrent: true, maxQueued: true, deadline: true } satisfies OptionNames<DirectoryLimitsConfig>;
  refuseUnknownOptions(config, options, "directoryLimits.");
  const deadlineSeconds = durationSeconds(config?.deadline ?? "10s", "directoryLimits.deadline");
  if (deadlineSeconds > 120) fail(`directoryLimits.deadline must be at most 120 seconds; got ${deadlineSeconds}`);
  return {
    maxConcurrent: positiveInteger(config?.maxConcurrent, "directoryLimits.maxConcurrent", 10),
    maxQueued: positiveInteger(config?.maxQueued, "directoryLimits.maxQueued", 100, 0),
    deadlineMs: deadlineSeconds * 1000,
  };
}
