/**
 * Shared fixture of the passkey tests: an auth with passkeys configured for
 * `https://app.example.com`, and the software authenticator of `test/fixtures` driving the
 * real flows. Not a test file itself.
 */
import { type SoftwareAuthenticator, type SoftwareAuthenticatorOptions, createSoftwareAuthenticator } from "@portcullis/testing";
import type { Auth } from "../auth.js";
import type { PasskeyConfig } from "../webauthn/passkey-config.js";
import type { PasskeyInfo } from "../webauthn/passkey-info.js";
import { type AuthOverrides, type Harness, addUser, goodPassword, makeAuth } from "./fixtures.test-support.js";
import { webauthnBegin, webauthnFinish } from "./webauthn-login.js";
import { webauthnRegisterBegin, webauthnRegisterFinish } from "./webauthn-register.js";

export const rpId = "example.com";
export const origin = "https://app.example.com";

/** The passkey configuration of the tests: rpId `example.com`, origin `https://app.example.com`. */
export const passkeys: PasskeyConfig = { rpId, rpName: "Example", origins: [origin] };

/** An auth with {@link passkeys} configured (merged with `passkeysOverrides`). */
export function makePasskeyAuth(overrides: AuthOverrides = {}, passkeysOverrides: Partial<PasskeyConfig> = {}): Harness {
  return makeAuth({ ...overrides, passkeys: { ...passkeys, ...passkeysOverrides } });
}

/** A software authenticator whose pages run at {@link origin}. */
export function makeAuthenticator(options: SoftwareAuthenticatorOptions = {}): SoftwareAuthenticator {
  return createSoftwareAuthenticator({ origin, ...options });
}

/**
 * Registers a passkey for a user through the real flows, re-authenticated with the password,
 * and returns what the user sees of it. The registration raises the user's token version.
 */
export async function registerPasskey(
  auth: Auth,
  userId: string,
  authenticator: SoftwareAuthenticator,
  label = "Laptop",
): Promise<PasskeyInfo> {
  const { ceremonyId, options } = await webauthnRegisterBegin(auth, { userId, label, password: goodPassword });
  return webauthnRegisterFinish(auth, { userId, ceremonyId, response: authenticator.register(options) });
}

/** A user with a password and one registered passkey. */
export async function userWithPasskey(
  harness: Harness,
  username = "alice",
  authenticator = makeAuthenticator(),
): Promise<{ userId: string; passkey: PasskeyInfo; authenticator: SoftwareAuthenticator }> {
  const userId = await addUser(harness.auth, username);
  const passkey = await registerPasskey(harness.auth, userId, authenticator);
  return { userId, passkey, authenticator };
}

/** Signs in with a passkey through begin and finish, discoverable unless `username` is given. */
export async function passkeySignIn(auth: Auth, authenticator: SoftwareAuthenticator, username?: string) {
  const { ceremonyId, options } = await webauthnBegin(auth, { username });
  return webauthnFinish(auth, { ceremonyId, response: authenticator.authenticate(options) });
}
