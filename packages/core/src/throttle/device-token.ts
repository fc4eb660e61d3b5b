import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { keyedTag } from "../crypto/keyed-tag.js";
import { constantTimeEqual } from "../crypto/random.js";

/**
 * A device token (RL-5): what a client that signed in to an account gets back, so that its later
 * failures spend a budget of its own rather than the account's, which anyone who knows the
 * username can use up. `<device id>.<issued at, epoch seconds>.<MAC>`: the MAC binds the random
 * device id and the time to the account's username key under a key derived from the configured
 * encryption key, so a token opens nothing but the budget of one device for one account, and
 * storage holds nothing of it.
 */
const tokenShape = /^([A-Za-z0-9_-]{22})\.([0-9]{1,12})\.([A-Za-z0-9_-]{22})$/;

function mac(auth: Auth, deviceId: string, issuedAt: number, usernameKey: string): string {
  return keyedTag(auth.secretBox, "portcullis device token v1", `${deviceId}.${issuedAt}.${usernameKey}`);
}

/**
 * The device id of a device token that this instance issued for the account of `usernameKey`
 * within `throttle.deviceTokenLifetime`, or null for anything else: absent, malformed, another
 * account's, expired, or made under another encryption key.
 */
export function deviceIdOf(auth: Auth, token: string | undefined, usernameKey: string): string | null {
  const parts = tokenShape.exec(String(token));
  if (!parts) return null;
  const [, deviceId, issued, tag] = parts as unknown as [string, string, string, string];
  const issuedAt = Number(issued);
  const age = auth.now() / 1000 - issuedAt;
  if (age < -60 || age >= auth.config.throttle.deviceTokenLifetimeSeconds) return null;
  return constantTimeEqual(tag, mac(auth, deviceId, issuedAt, usernameKey)) ? deviceId : null;
}

/**
 * A device token for the account of `usernameKey`, issued now: for the device `deviceId` when
 * the client already held a valid one (so its failure count carries on), else for a new device.
 */
export function issueDeviceToken(auth: Auth, usernameKey: string, deviceId: string | null = null): string {
  const id = deviceId ?? randomId(auth);
  const issuedAt = Math.floor(auth.now() / 1000);
  return `${id}.${issuedAt}.${mac(auth, id, issuedAt, usernameKey)}`;
}
