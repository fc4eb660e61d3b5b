import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { addressBucket } from "../http/client-address.js";
import type { ResolvedTier, ThrottleScope } from "./throttle-config.js";

export type { ThrottleScope } from "./throttle-config.js";

/**
 * The counter key of a subject, per scope: an account by the keyed pseudonym of its username key,
 * never the typed name (bounded in size, and no password typed as a username reaches storage); a
 * device by its token's random id; an address by its bucket (RL-3); a reset request by the keyed
 * pseudonym of the username or address key asked for, a sign-in code request by the keyed
 * pseudonym of the address asked for; an address change by the user's id.
 */
const counterKeys: Record<ThrottleScope, (auth: Auth, subject: string) => string> = {
  account: (auth, usernameKey) => `account:${auth.pseudonym(usernameKey)}`,
  device: (_, deviceId) => `device:${deviceId}`,
  ip: (_, address) => `ip:${addressBucket(address)}`,
  unauthenticatedWrites: (_, address) => `write:${addressBucket(address)}`,
  passwordResetRequests: (auth, accountKey) => `reset:${auth.pseudonym(accountKey)}`,
  passwordResetRequestsIp: (_, address) => `reset-ip:${addressBucket(address)}`,
  emailChanges: (_, userId) => `email:${userId}`,
  emailSignInRequests: (auth, addressKey) => `sign-in-email:${auth.pseudonym(addressKey)}`,
  emailSignInRequestsIp: (_, address) => `sign-in-email-ip:${addressBucket(address)}`,
};

/**
 * Takes one attempt from every tier of a scope, up to the first tier that refuses, before the
 * attempt is evaluated, so that N concurrent wrong attempts are evaluated at most `limit`
 * times (RL-4). When a tier is spent, throws {@link AuthError} 42900 with the seconds until it
 * refills.
 */
export async function takeAttempt(auth: Auth, scope: ThrottleScope, subject: string, ip?: string): Promise<void> {
  const key = counterKeys[scope](auth, subject);
  const now = auth.now();
  const retryAt = await hitTiers(auth, key, auth.config.throttle[scope], now);
  if (retryAt === 0) return;
  const retryAfterSeconds = Math.max(1, Math.ceil((retryAt - now) / 1000));
  const eventKey = key.slice(key.indexOf(":") + 1);
  auth.emit({ type: "throttled", scope, key: eventKey, retryAfterSeconds, at: now, ip });
  throw new AuthError(ErrorCode.TooManyAttempts, undefined, { retryAfterSeconds });
}

/**
 * Counts one hit on each tier's counter of `key` (`key:0`, `key:1`…) in turn, up to the first
 * tier that refuses it. Returns 0 when every tier counted it, else when the refusing tier's
 * window ends.
 */
export async function hitTiers(
  auth: Pick<Auth, "storage">,
  key: string,
  tiers: readonly ResolvedTier[],
  now: number,
): Promise<number> {
  for (const [index, tier] of tiers.entries()) {
    const hit = await auth.storage.counters.hit(`${key}:${index}`, tier.limit, tier.windowMs, now);
    // What one tier refuses goes no further, so it must not use up the later tiers: a burst
    // during a 15-minute lockout would otherwise fill the daily tier at once (RL-1).
    if (!hit.allowed) return hit.resetAt;
  }
  return 0;
}

/**
 * Clears the failures of an account (or of a device, RL-5) after a completed sign-in. Never
 * called when only the password was proven, so a fresh temporary token does not reset
 * second-factor failures (RL-2).
 */
export async function clearFailures(auth: Auth, scope: "account" | "device", subject: string): Promise<void> {
  const key = counterKeys[scope](auth, subject);
  await Promise.all(auth.config.throttle[scope].map((_, index) => auth.storage.counters.reset(`${key}:${index}`)));
}

/** Clears an account's failures after a completed sign-in: {@link clearFailures} for `account`. */
export async function clearAccountFailures(auth: Auth, usernameKey: string): Promise<void> {
  await clearFailures(auth, "account", usernameKey);
}
