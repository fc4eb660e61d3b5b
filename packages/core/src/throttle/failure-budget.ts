import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { deviceIdOf } from "./device-token.js";
import { clearFailures, takeAttempt } from "./throttle.js";

/**
 * Whose failures an attempt at an account's secrets (password, directory password, TOTP or
 * recovery code) spends. `account`: the account's own budget, shared by every client that
 * cannot show it signed in to the account before, with the account-wide cap (RL-1). `device`:
 * the budget of one client that can (RL-5): a device token of the account, a live session of it,
 * or, for the second factor after a passkey, that passkey (RL-6). Failures from elsewhere never
 * spend a device's budget, so a stranger who knows the username cannot lock its owner out.
 */
export type FailureBudget = { scope: "account"; usernameKey: string } | { scope: "device"; subject: string };

/**
 * The budget of an attempt at the account of `usernameKey`: the device's when `deviceToken` is a
 * valid device token of that account, else the account's.
 */
export function budgetOfClient(auth: Auth, usernameKey: string, deviceToken: string | undefined): FailureBudget {
  const deviceId = deviceIdOf(auth, deviceToken, usernameKey);
  return deviceId === null ? { scope: "account", usernameKey } : deviceBudget(deviceId);
}

/** The budget of a device token's device. */
export const deviceBudget = (deviceId: string): FailureBudget => ({ scope: "device", subject: deviceId });

/** The budget of a signed-in session proving a secret again (re-authentication, a pending factor). */
export const sessionBudget = (sessionId: string): FailureBudget => ({ scope: "device", subject: `session:${sessionId}` });

/** The budget of the second factor after a passkey (RL-6): that passkey's, never the password's. */
export const passkeyBudget = (credentialId: string): FailureBudget => ({
  scope: "device",
  subject: `passkey:${sha256(credentialId)}`,
});

/** The device id of a budget that belongs to a device token, for the token a completed sign-in renews. */
export function deviceIdOfBudget(budget: FailureBudget): string | null {
  return budget.scope === "device" && !budget.subject.includes(":") ? budget.subject : null;
}

/** The subject a budget's counter is kept for: the account's username key, or the device's. */
const subjectOf = (budget: FailureBudget): string => (budget.scope === "account" ? budget.usernameKey : budget.subject);

/**
 * Takes one attempt from a budget before the secret is checked (RL-1, RL-4, RL-5).
 *
 * @throws {AuthError} 42900 when the budget is spent, with the seconds until it refills.
 */
export async function takeFailureAttempt(auth: Auth, budget: FailureBudget, ip?: string): Promise<void> {
  await takeAttempt(auth, budget.scope, subjectOf(budget), ip);
}

/** Clears a budget's failures once the secret was proven and the sign-in completed (RL-2). */
export async function clearFailureBudget(auth: Auth, budget: FailureBudget): Promise<void> {
  await clearFailures(auth, budget.scope, subjectOf(budget));
}
