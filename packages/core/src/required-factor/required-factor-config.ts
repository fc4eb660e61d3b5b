import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";
import type { UserSource } from "../storage/types.js";
import { rolesProblem } from "../users/roles.js";

/**
 * What a {@link SecondFactorRequirement} function is told of the user signing in: a frozen copy,
 * never the stored record (which holds the password hash).
 */
export interface SecondFactorSubject {
  readonly id: string;
  readonly username: string;
  readonly roles: readonly string[];
  /** `"local"` (a password of this service, or a provider's account), or `"directory"`. */
  readonly source: UserSource;
}

/**
 * Who must have a second factor: `"always"` everybody; `{ roles }` the holders of any of these
 * roles (compared exactly); a function answering `true` for the users who must (it may answer a
 * promise; anything but `true` or `false`, or a throw, fails the sign-in with 50000).
 */
export type SecondFactorRequirement =
  | "always"
  | { roles: string[] }
  | ((user: SecondFactorSubject) => boolean | Promise<boolean>);

/** The `secondFactor` options of `createAuth`: a second factor the operator requires (STUP-4, ASVS 6.3.3). */
export interface SecondFactorConfig {
  /**
   * Who must have a second factor (see {@link SecondFactorRequirement}). Such a user without one
   * signs in to an enrolment-only state (40105 with a temporary token that can only enrol TOTP or
   * a passkey), then gets tokens. Default: nobody.
   */
  required?: SecondFactorRequirement;
  /** How long the enrolment token of a 40105 answer lives. Default `"10m"`, from 1 minute to 1 hour. */
  enrolmentTtl?: Duration;
  /**
   * How many requests one enrolment token may make (each setup, code, begin and finish takes one,
   * taken before anything is checked); then it is void and the sign-in starts over. Default 10, at most 100.
   */
  enrolmentAttempts?: number;
}

/** {@link SecondFactorConfig} with its defaults filled in. */
export interface ResolvedSecondFactorConfig {
  /** Null when nobody is required to have a second factor. */
  required: SecondFactorRequirement | null;
  enrolmentTtlSeconds: number;
  enrolmentAttempts: number;
}

const secondFactorOptions = {
  required: true,
  enrolmentTtl: true,
  enrolmentAttempts: true,
} satisfies OptionNames<SecondFactorConfig>;

function requirementOf(value: unknown): SecondFactorRequirement | null {
  if (value === undefined) return null;
  if (value === "always" || typeof value === "function") return value as SecondFactorRequirement;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(
      `secondFactor.required must be "always", { roles: [...] } or a function (user) => boolean; got ${JSON.stringify(value)}`,
    );
  }
  refuseUnknownOptions(value, { roles: true } satisfies OptionNames<{ roles: string[] }>, "secondFactor.required.");
  const { roles } = value as { roles?: unknown };
  if (Array.isArray(roles) && roles.length === 0) {
    fail("secondFactor.required.roles must name at least one role; leave secondFactor.required out to require none");
  }
  const problem = rolesProblem(roles);
  if (problem !== null) fail(`secondFactor.required.roles ${problem}; got ${JSON.stringify(roles)}`);
  return { roles: [...new Set(roles as string[])] };
}

/**
 * Checks the `secondFactor` options and fills in their defaults; throws a `TypeError` naming a
 * bad one, so a mistyped requirement stops the service at start-up instead of requiring nobody.
 */
export function resolveSecondFactorConfig(config: SecondFactorConfig | undefined): ResolvedSecondFactorConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`secondFactor must be an object such as { required: "always" }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, secondFactorOptions, "secondFactor.");
  const enrolmentTtlSeconds = durationSeconds(options.enrolmentTtl ?? "10m", "secondFactor.enrolmentTtl");
  if (enrolmentTtlSeconds < 60 || enrolmentTtlSeconds > 3600) {
    fail(`secondFactor.enrolmentTtl must be from 1 minute to 1 hour; got ${enrolmentTtlSeconds} seconds`);
  }
  const enrolmentAttempts = positiveInteger(options.enrolmentAttempts, "secondFactor.enrolmentAttempts", 10);
  if (enrolmentAttempts > 100) fail(`secondFactor.enrolmentAttempts must be at most 100; got ${enrolmentAttempts}`);
  return { required: requirementOf(options.required), enrolmentTtlSeconds, enrolmentAttempts };
}
