import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";

/**
 * What a throttle counts: failures of one account (`account`), or of one device token
 * (`device`, RL-5); attempts from one address at a secret (`ip`), or at routes that store
 * something for an unauthenticated caller (`unauthenticatedWrites`, RL-7); requests for a reset
 * link per account and per address (`passwordResetRequests`, `passwordResetRequestsIp`, PR-1),
 * address changes per user (`emailChanges`), and requests for a sign-in code or link per address
 * asked for and per client address (`emailSignInRequests`, `emailSignInRequestsIp`): budgets of
 * their own, so that none spends another (RL-5).
 */
export type ThrottleScope =
  | "account"
  | "device"
  | "ip"
  | "unauthenticatedWrites"
  | "passwordResetRequests"
  | "passwordResetRequestsIp"
  | "emailChanges"
  | "emailSignInRequests"
  | "emailSignInRequestsIp";

/** A throttling tier: at most `limit` attempts per `window`. */
export interface ThrottleTier {
  limit: number;
  window: Duration;
}

/** A throttling tier in milliseconds. */
export interface ResolvedTier {
  limit: number;
  windowMs: number;
}

/** The `throttle` options of `createAuth`. */
export interface ThrottleConfig {
  /**
   * Failures per account (password, directory, TOTP and recovery codes together) from clients
   * that hold no device token of the account (RL-1). Default 5 per 15 minutes and 20 per day.
   */
  account?: ThrottleTier[];
  /**
   * Failures per device token: a client that signed in to the account before spends this budget
   * of its own instead of the account's, so failures from elsewhere never lock it out (RL-5).
   * Default 5 per 15 minutes and 20 per day.
   */
  device?: ThrottleTier[];
  /** How long a device token is honoured after the sign-in that issued it. Default `"90d"`. */
  deviceTokenLifetime?: Duration;
  /** Attempts per client address (IPv6 counted per /64). Default 100 per 15 minutes. */
  ip?: ThrottleTier[];
  /**
   * Requests per client address that make storage keep something for a caller who is not signed
   * in: OAuth authorize, passkey sign-in begin, sign-up (RL-7). Default 30 per minute and 300 per hour.
   */
  unauthenticatedWrites?: ThrottleTier[];
  /**
   * `POST /auth/password/forgot` per username or address asked for, known or not (PR-1): its own
   * budget, so flooding it never spends the account's sign-in budget. Default 3 per 15 minutes and
   * 10 per day.
   */
  passwordResetRequests?: ThrottleTier[];
  /** `POST /auth/password/forgot` per client address (IPv6 per /64). Default 10 per 15 minutes. */
  passwordResetRequestsIp?: ThrottleTier[];
  /** `POST /auth/email` (a verification link to a new address) per user. Default 5 per hour and 20 per day. */
  emailChanges?: ThrottleTier[];
  /**
   * `POST /auth/email-sign-in/begin` per address asked for, held or not: its own budget, so
   * flooding it never spends the account's sign-in budget. Default 5 per 15 minutes and 20 per day.
   */
  emailSignInRequests?: ThrottleTier[];
  /** `POST /auth/email-sign-in/begin` per client address (IPv6 per /64). Default 10 per 15 minutes. */
  emailSignInRequestsIp?: ThrottleTier[];
}

/** {@link ThrottleConfig} with its defaults filled in. */
export interface ResolvedThrottleConfig {
  account: ResolvedTier[];
  device: ResolvedTier[];
  deviceTokenLifetimeSeconds: number;
  ip: ResolvedTier[];
  unauthenticatedWrites: ResolvedTier[];
  passwordResetRequests: ResolvedTier[];
  passwordResetRequestsIp: ResolvedTier[];
  emailChanges: ResolvedTier[];
  emailSignInRequests: ResolvedTier[];
  emailSignInRequestsIp: ResolvedTier[];
}

const defaultAccountTiers: ThrottleTier[] = [
  { limit: 5, window: "15m" },
  { limit: 20, window: "24h" },
];
const defaultIpTiers: ThrottleTier[] = [{ limit: 100, window: "15m" }];
const defaultUnauthenticatedWriteTiers: ThrottleTier[] = [
  { limit: 30, window: "1m" },
  { limit: 300, window: "1h" },
];

const defaultPasswordResetRequestTiers: ThrottleTier[] = [
  { limit: 3, window: "15m" },
  { limit: 10, window: "24h" },
];
const defaultPasswordResetRequestIpTiers: ThrottleTier[] = [{ limit: 10, window: "15m" }];
const defaultEmailSignInRequestTiers: ThrottleTier[] = [
  { limit: 5, window: "15m" },
  { limit: 20, window: "24h" },
];
const defaultEmailSignInRequestIpTiers: ThrottleTier[] = [{ limit: 10, window: "15m" }];
const defaultEmailChangeTiers: ThrottleTier[] = [
  { limit: 5, window: "1h" },
  { limit: 20, window: "24h" },
];

/**
 * Checks a list of throttling tiers (`what` names the option in messages) and resolves it to
 * milliseconds; `fallback` when absent. Throws a `TypeError` naming a bad tier.
 */
export function resolveTiers(value: ThrottleTier[] | undefined, what: string, fallback: ThrottleTier[]): ResolvedTier[] {
  const list = value ?? fallback;
  if (!Array.isArray(list) || list.length === 0) fail(`${what} must be a non-empty list of { limit, window }`);
  return list.map((tier, index) => {
    // No default limit: a tier without one would count for ever and refuse nothing.
    if (tier?.limit === undefined) fail(`${what}[${index}].limit is required: a whole number of at least 1`);
    refuseUnknownOptions(tier, { limit: true, window: true } satisfies OptionNames<ThrottleTier>, `${what}[${index}].`);
    return {
      limit: positiveInteger(tier.limit, `${what}[${index}].limit`, Number.NaN),
      windowMs: durationSeconds(tier.window, `${what}[${index}].window`) * 1000,
    };
  });
}

/** Checks the `throttle` options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolveThrottleConfig(config: ThrottleConfig | undefined): ResolvedThrottleConfig {
  const options = {
    account: true,
    device: true,
    deviceTokenLifetime: true,
    ip: true,
    unauthenticatedWrites: true,
    passwordResetRequests: true,
    passwordResetRequestsIp: true,
    emailChanges: true,
    emailSignInRequests: true,
    emailSignInRequestsIp: true,
  } satisfies OptionNames<ThrottleConfig>;
  refuseUnknownOptions(config, options, "throttle.");
  return {
    account: resolveTiers(config?.account, "throttle.account", defaultAccountTiers),
    device: resolveTiers(config?.device, "throttle.device", defaultAccountTiers),
    deviceTokenLifetimeSeconds: durationSeconds(config?.deviceTokenLifetime ?? "90d", "throttle.deviceTokenLifetime"),
    ip: resolveTiers(config?.ip, "throttle.ip", defaultIpTiers),
    unauthenticatedWrites: resolveTiers(
      config?.unauthenticatedWrites,
      "throttle.unauthenticatedWrites",
      defaultUnauthenticatedWriteTiers,
    ),
    passwordResetRequests: resolveTiers(
      config?.passwordResetRequests,
      "throttle.passwordResetRequests",
      defaultPasswordResetRequestTiers,
    ),
    passwordResetRequestsIp: resolveTiers(
      config?.passwordResetRequestsIp,
      "throttle.passwordResetRequestsIp",
      defaultPasswordResetRequestIpTiers,
    ),
    emailChanges: resolveTiers(config?.emailChanges, "throttle.emailChanges", defaultEmailChangeTiers),
    emailSignInRequests: resolveTiers(
      config?.emailSignInRequests,
      "throttle.emailSignInRequests",
      defaultEmailSignInRequestTiers,
    ),
    emailSignInRequestsIp: resolveTiers(
      config?.emailSignInRequestsIp,
      "throttle.emailSignInRequestsIp",
      defaultEmailSignInRequestIpTiers,
    ),
  };
}
