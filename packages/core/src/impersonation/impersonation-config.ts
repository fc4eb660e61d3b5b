import { type Duration, type OptionNames, durationSeconds, fail, refuseUnknownOptions } from "../config-values.js";

/**
 * The `impersonation` options of `createAuth` (IMP-1…): an administrator acting as a user for
 * support, in a session of its own that is marked in its tokens and ends by itself. Off unless
 * `enabled`.
 */
export interface ImpersonationConfig {
  /** Turns `POST /auth/admin/users/:id/impersonate` and `POST /auth/impersonation/end` on. Default `false`. */
  enabled?: boolean;
  /**
   * The role an administrator must hold beside `adminRole` to impersonate: the `impersonate`
   * permission. Default `"impersonator"`. A user holding `adminRole` or this role cannot be impersonated.
   */
  role?: string;
  /** How long an impersonated session lasts, from its start; refreshes never extend it. Default `"30m"`, at most `"4h"`. */
  duration?: Duration;
}

/** {@link ImpersonationConfig} with its defaults filled in. */
export interface ResolvedImpersonationConfig {
  enabled: boolean;
  role: string;
  durationSeconds: number;
}

const optionNames = { enabled: true, role: true, duration: true } satisfies OptionNames<ImpersonationConfig>;

const maxDurationSeconds = 4 * 3600;

/**
 * Checks the `impersonation` options and fills in their defaults; throws a `TypeError` naming a bad one.
 *
 * @example
 * ```ts
 * resolveImpersonationConfig({ enabled: true }).durationSeconds; // 1800
 * ```
 */
export function resolveImpersonationConfig(
  config: ImpersonationConfig | undefined,
  adminRole: string,
): ResolvedImpersonationConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`impersonation must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, optionNames, "impersonation.");
  const { enabled = false, role = "impersonator", duration = "30m" } = options;
  if (typeof enabled !== "boolean") fail(`impersonation.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  if (typeof role !== "string" || !/^[\x21-\x7e]{1,64}$/.test(role)) {
    fail(`impersonation.role must be a role name of 1 to 64 visible ASCII characters; got ${JSON.stringify(role)}`);
  }
  if (role === adminRole) {
    fail("impersonation.role must differ from adminRole: impersonating is a permission of some administrators, not of all");
  }
  const seconds = durationSeconds(duration, "impersonation.duration");
  if (seconds > maxDurationSeconds) fail('impersonation.duration must be at most "4h": an impersonated session is short');
  return { enabled, role, durationSeconds: seconds };
}
