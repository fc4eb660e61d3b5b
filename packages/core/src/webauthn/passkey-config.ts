import { isIP } from "node:net";
import {
  type Duration,
  type OptionNames,
  durationSeconds,
  lacksScheme,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";

/** Passkeys and security keys (WebAuthn). Absent: the public-key routes answer 40400. */
export interface PasskeyConfig {
  /**
   * The relying-party ID: the domain the passkeys are bound to, e.g. `"example.com"`. It must be
   * the host of every origin or a parent domain of it (`"example.com"` serves
   * `https://login.example.com`); `"localhost"` for local development.
   */
  rpId: string;
  /** The name the browser shows when it asks to create a passkey, e.g. `"Example"`. */
  rpName: string;
  /**
   * The exact origins of the pages that run the ceremonies, e.g. `["https://example.com"]`:
   * https, or http only for `localhost`.
   */
  origins: string[];
  /**
   * `"required"` (default): the authenticator must verify the user (PIN, biometrics), and a
   * passkey is a complete sign-in. `"preferred"` also accepts a mere touch; such a sign-in then
   * asks for the TOTP code when the user has TOTP on.
   */
  userVerification?: "required" | "preferred";
  /**
   * `"reject"` (default) refuses an assertion whose signature counter did not grow (a cloned
   * authenticator; WA-5) unless both counters are 0. UNSAFE `"allow-stale"` accepts it.
   */
  counterPolicy?: "reject" | "allow-stale";
  /** How long a begun ceremony may be finished. Default `"5m"`, at most 10 minutes (WA-1). */
  ceremonyTtl?: Duration;
  /**
   * How many passkey registrations one user may begin within one `ceremonyTtl`; past it,
   * register/begin answers 42900 with `Retry-After` until the window ends, so one account holds at
   * most twice this many open registration ceremonies in storage (RL-7). Default 10.
   */
  registrationCeremonyLimit?: number;
  /**
   * How long after a sign-in a passkey may be registered without the password or a TOTP code
   * again. Default: `reauthentication.recentSignIn`; `false` asks every time; at most 1 hour.
   */
  reauthenticationWindow?: Duration | false;
  /**
   * Whether the answer of a password or email sign-in says to offer a passkey (`offerPasskey`) to
   * an account that has none and has not declined lately (PL-13). Default true.
   */
  offerAfterSignIn?: boolean;
  /** How long a declined offer stays declined for the account (PL-14). Default `"90d"`, 1 day to 1 year. */
  offerDeclinedFor?: Duration;
}

/** {@link PasskeyConfig} checked, with its defaults. */
export interface ResolvedPasskeyConfig {
  rpId: string;
  rpName: string;
  origins: string[];
  userVerification: "required" | "preferred";
  counterPolicy: "reject" | "allow-stale";
  ceremonyTtlSeconds: number;
  registrationCeremonyLimit: number;
  /** Undefined: the general `reauthentication.recentSignIn` applies. */
  reauthenticationWindowSeconds: number | undefined;
  offerAfterSignIn: boolean;
  offerDeclinedForSeconds: number;
}

function fail(message: string): never {
  throw new TypeError(`Portcullis configuration: passkeys.${message}`);
}

/** A DNS name of letters, digits and hyphens, lower case, with no trailing dot. */
const hostName = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

const passkeyOptions = {
  rpId: true,
  rpName: true,
  origins: true,
  userVerification: true,
  counterPolicy: true,
  ceremonyTtl: true,
  registrationCeremonyLimit: true,
  reauthenticationWindow: true,
  offerAfterSignIn: true,
  offerDeclinedFor: true,
} satisfies OptionNames<PasskeyConfig>;

function checkOrigin(value: unknown, index: number, rpId: string): string {
  const what = `origins[${index}]`;
  if (lacksScheme(value)) {
    fail(
      `${what} must start with its scheme, "https://" (or "http://" for localhost): "https://${value}"; got ${JSON.stringify(value)}`,
    );
  }
  let url: URL;
  try {
    url = new URL(value as string);
  } catch {
    return fail(`${what} must be an origin such as "https://example.com"; got ${JSON.stringify(value)}`);
  }
  if (url.origin !== value) {
    fail(
      `${what} must be an origin alone, scheme, host and port, no path or trailing slash: "${url.origin}"; got ${JSON.stringify(value)}`,
    );
  }
  const local = url.hostname === "localhost";
  if (url.protocol !== "https:" && !(url.protocol === "http:" && local)) {
    fail(`${what} must use https (http is allowed only for localhost); got ${JSON.stringify(value)}`);
  }
  if (url.hostname !== rpId && !url.hostname.endsWith(`.${rpId}`)) {
    fail(`rpId "${rpId}" must be the host of ${what} (${url.hostname}) or a parent domain of it`);
  }
  return url.origin;
}

/**
 * Checks the passkey configuration: every mistake throws a `TypeError` naming the setting and
 * what to fix. The rpId must be a domain name (not an IP address, not a single label other than
 * `localhost`) and the host of every origin or a parent domain of it, as browsers require.
 */
export function resolvePasskeyConfig(config: PasskeyConfig | undefined): ResolvedPasskeyConfig | null {
  if (config === undefined) return null;
  if (config === null || typeof config !== "object") {
    throw new TypeError("Portcullis configuration: passkeys must be { rpId, rpName, origins }");
  }
  refuseUnknownOptions(config, passkeyOptions, "passkeys.");
  const { rpId, rpName, origins } = config;
  if (typeof rpId !== "string" || !hostName.test(rpId) || isIP(rpId) !== 0 || (!rpId.includes(".") && rpId !== "localhost")) {
    fail(
      `rpId must be the lower-case domain the passkeys belong to, such as "example.com" (or "localhost"), not a URL, an IP address or a top-level domain; got ${JSON.stringify(rpId)}`,
    );
  }
  if (typeof rpName !== "string" || rpName.trim() === "") fail('rpName must be the name shown to users, such as "Example"');
  if (!Array.isArray(origins) || origins.length === 0) {
    fail('origins must list the origins of the pages that sign in, such as ["https://example.com"]');
  }
  const userVerification = config.userVerification ?? "required";
  if (userVerification !== "required" && userVerification !== "preferred") {
    fail(`userVerification must be "required" or "preferred"; got ${JSON.stringify(userVerification)}`);
  }
  const counterPolicy = config.counterPolicy ?? "reject";
  if (counterPolicy !== "reject" && counterPolicy !== "allow-stale") {
    fail(`counterPolicy must be "reject" or "allow-stale"; got ${JSON.stringify(counterPolicy)}`);
  }
  const ceremonyTtlSeconds = durationSeconds(config.ceremonyTtl ?? "5m", "passkeys.ceremonyTtl");
  if (ceremonyTtlSeconds > 600) fail(`ceremonyTtl must be at most 10m; got ${ceremonyTtlSeconds} seconds`);
  const registrationCeremonyLimit = positiveInteger(config.registrationCeremonyLimit, "passkeys.registrationCeremonyLimit", 10);
  const window = config.reauthenticationWindow;
  let reauthenticationWindowSeconds: number | undefined;
  if (window !== undefined) {
    reauthenticationWindowSeconds = window === false ? 0 : durationSeconds(window, "passkeys.reauthenticationWindow");
    if (reauthenticationWindowSeconds > 3600) {
      fail(`reauthenticationWindow must be at most 1h; got ${reauthenticationWindowSeconds} seconds`);
    }
  }
  const offerAfterSignIn = config.offerAfterSignIn ?? true;
  if (typeof offerAfterSignIn !== "boolean")
    fail(`offerAfterSignIn must be true or false; got ${JSON.stringify(offerAfterSignIn)}`);
  const offerDeclinedForSeconds = durationSeconds(config.offerDeclinedFor ?? "90d", "passkeys.offerDeclinedFor");
  if (offerDeclinedForSeconds < 86_400 || offerDeclinedForSeconds > 366 * 86_400) {
    fail(`offerDeclinedFor must be from 1d to 366d; got ${offerDeclinedForSeconds} seconds`);
  }
  return {
    rpId,
    rpName,
    origins: origins.map((origin, index) => checkOrigin(origin, index, rpId)),
    userVerification,
    counterPolicy,
    ceremonyTtlSeconds,
    registrationCeremonyLimit,
    reauthenticationWindowSeconds,
    offerAfterSignIn,
    offerDeclinedForSeconds,
  };
}
