import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";
import { type ResolvedTier, type ThrottleTier, resolveTiers } from "../throttle/throttle-config.js";
import { environmentPattern } from "./api-key-format.js";

/** The `apiKeys` options of `createAuth` (AK-1…): personal access tokens for scripts and services. Off unless `enabled`. */
export interface ApiKeysConfig {
  /** Turns API keys and the `/auth/api-keys…` routes on. Default `false` (the routes answer 40400, `requireAuth` refuses keys). */
  enabled?: boolean;
  /** The environment tag in every key (`pc_<environment>_…`): lower-case letters and digits, 1 to 16. Default `"live"`. A key of another tag is refused unread. */
  environment?: string;
  /** A new key's lifetime when its request names none. Default `"90d"`. */
  defaultTtl?: Duration;
  /** The longest lifetime a key may be given. Default `"365d"`. */
  maxTtl?: Duration;
  /** How many live keys a user may hold. Default 50. */
  maxPerUser?: number;
  /**
   * Requests each key may make, per tier (`[{ limit: 600, window: "1m" }]`): past it, 42900 with
   * `Retry-After` (AK-5). Counted in the counters store, so every instance sharing it shares the
   * budget. Default none: each counted request is a write to the counters store.
   */
  rateLimit?: ThrottleTier[];
  /**
   * The scopes a key may hold, when you define a fixed set (`["reports:read", "deploy"]`); a key
   * asking another is refused (42200). Default: any scope of 1 to 128 visible ASCII characters.
   */
  scopes?: string[];
}

/** {@link ApiKeysConfig} with its defaults filled in. */
export interface ResolvedApiKeysConfig {
  enabled: boolean;
  environment: string;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  maxPerUser: number;
  /** Empty: no per-key limit. */
  rateLimit: ResolvedTier[];
  /** Null: any scope. */
  scopes: string[] | null;
}

const optionNames = {
  enabled: true,
  environment: true,
  defaultTtl: true,
  maxTtl: true,
  maxPerUser: true,
  rateLimit: true,
  scopes: true,
} satisfies OptionNames<ApiKeysConfig>;

/**
 * Checks the `apiKeys` options and fills in their defaults; throws a `TypeError` naming a bad one.
 *
 * @example
 * ```ts
 * resolveApiKeysConfig({ enabled: true }).defaultTtlSeconds; // 7776000 (90 days)
 * ```
 */
export function resolveApiKeysConfig(config: ApiKeysConfig | undefined): ResolvedApiKeysConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`apiKeys must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, optionNames, "apiKeys.");
  const { enabled = false, environment = "live", defaultTtl = "90d", maxTtl = "365d" } = options;
  if (typeof enabled !== "boolean") fail(`apiKeys.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  checkEnvironment(environment, "apiKeys.environment");
  const defaultTtlSeconds = durationSeconds(defaultTtl, "apiKeys.defaultTtl");
  const maxTtlSeconds = durationSeconds(maxTtl, "apiKeys.maxTtl");
  if (defaultTtlSeconds > maxTtlSeconds) fail("apiKeys.defaultTtl must not be longer than apiKeys.maxTtl");
  return {
    enabled,
    environment,
    defaultTtlSeconds,
    maxTtlSeconds,
    maxPerUser: positiveInteger(options.maxPerUser, "apiKeys.maxPerUser", 50),
    rateLimit: options.rateLimit === undefined ? [] : resolveTiers(options.rateLimit, "apiKeys.rateLimit", []),
    scopes: scopeListOf(options.scopes, "apiKeys.scopes"),
  };
}

/** What a scope may be: 1 to 128 visible ASCII characters, no spaces. */
export const scopePattern = /^[\x21-\x7e]{1,128}$/;

/** Checks an environment tag option (`apiKeys.environment`, `serviceAccounts.environment`). */
export function checkEnvironment(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string" || !environmentPattern.test(value)) {
    fail(`${what} must be 1 to 16 lower-case letters and digits, such as "live" or "test"; got ${JSON.stringify(value)}`);
  }
}

/** Reads an option listing the scopes a host defines (`apiKeys.scopes`, `serviceAccounts.scopes`): null when absent. */
export function scopeListOf(value: unknown, what: string): string[] | null {
  if (value === undefined) return null;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((scope) => typeof scope === "string" && scopePattern.test(scope))
  ) {
    fail(`${what} must be a non-empty list of scopes of 1 to 128 visible ASCII characters; got ${JSON.stringify(value)}`);
  }
  return [...new Set(value as string[])];
}
