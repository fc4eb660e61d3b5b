import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";

/** What a sign-in message carries: a code to type, a link to open, or both. */
export type EmailSignInMethod = "code" | "link" | "both";

/**
 * The `emailSignIn` options of `createAuth` (PL-1…): signing in with a one-time code or link sent
 * to the account's verified address (`POST /auth/email-sign-in/begin` and `…/finish`). Off unless
 * `enabled`; needs `email`, and `email.signInUrl` for a link.
 */
export interface EmailSignInConfig {
  /** Turns the routes on. Default `false`. Needs `email` configured. */
  enabled?: boolean;
  /** What the message carries. Default `"code"`; `"link"` or `"both"` need `email.signInUrl`. */
  method?: EmailSignInMethod;
  /** Digits of a code, from 6 to 8. Default 6. */
  codeLength?: number;
  /** How long a code and link work. Default `"10m"`, from 1 minute to 1 hour. */
  ttl?: Duration;
  /** Wrong tries one code (and its link) takes before it is void. Default 5, from 1 to 10. */
  maxAttempts?: number;
  /**
   * A code to an address no account holds verified makes an account when it is typed (sign-up by
   * email code). Default `false`; `true` needs `signUp.enabled`.
   */
  signUp?: boolean;
}

/** {@link EmailSignInConfig} with its defaults filled in. */
export interface ResolvedEmailSignInConfig {
  enabled: boolean;
  method: EmailSignInMethod;
  codeLength: number;
  ttlMs: number;
  maxAttempts: number;
  signUp: boolean;
}

const optionNames = {
  enabled: true,
  method: true,
  codeLength: true,
  ttl: true,
  maxAttempts: true,
  signUp: true,
} satisfies OptionNames<EmailSignInConfig>;

const methods: readonly EmailSignInMethod[] = ["code", "link", "both"];

/** What the rest of the configuration says that `emailSignIn` depends on. */
export interface EmailSignInPrerequisites {
  /** Whether `email` is configured. */
  email: boolean;
  /** Whether `email.signInUrl` is set. */
  signInUrl: boolean;
  /** Whether `signUp.enabled`. */
  signUp: boolean;
}

/**
 * Checks the `emailSignIn` options and fills in their defaults; throws a `TypeError` naming a bad
 * one, or one whose prerequisite is missing (`email`, `email.signInUrl`, `signUp.enabled`).
 *
 * @example
 * ```ts
 * resolveEmailSignInConfig({ enabled: true }, { email: true, signInUrl: false, signUp: false }).ttlMs; // 600000
 * ```
 */
export function resolveEmailSignInConfig(
  config: EmailSignInConfig | undefined,
  prerequisites: EmailSignInPrerequisites,
): ResolvedEmailSignInConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`emailSignIn must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, optionNames, "emailSignIn.");
  const { enabled = false, method = "code", ttl = "10m", signUp = false } = options;
  if (typeof enabled !== "boolean") fail(`emailSignIn.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  if (!methods.includes(method)) fail(`emailSignIn.method must be "code", "link" or "both"; got ${JSON.stringify(method)}`);
  const codeLength = positiveInteger(options.codeLength, "emailSignIn.codeLength", 6);
  if (codeLength < 6 || codeLength > 8) fail(`emailSignIn.codeLength must be from 6 to 8; got ${JSON.stringify(codeLength)}`);
  const maxAttempts = positiveInteger(options.maxAttempts, "emailSignIn.maxAttempts", 5);
  if (maxAttempts > 10) fail(`emailSignIn.maxAttempts must be from 1 to 10; got ${JSON.stringify(maxAttempts)}`);
  const seconds = durationSeconds(ttl, "emailSignIn.ttl");
  if (seconds < 60 || seconds > 3600) fail(`emailSignIn.ttl must be from "1m" to "1h"; got ${JSON.stringify(ttl)}`);
  if (typeof signUp !== "boolean") fail(`emailSignIn.signUp must be true or false; got ${JSON.stringify(signUp)}`);
  if (enabled && !prerequisites.email) {
    fail("emailSignIn.enabled needs email configured: the codes and links are sent by email.send");
  }
  if (enabled && method !== "code" && !prerequisites.signInUrl) {
    fail(`emailSignIn.method "${method}" needs email.signInUrl: the page of your front end that a sign-in link opens`);
  }
  if (enabled && signUp && !prerequisites.signUp) fail("emailSignIn.signUp needs signUp.enabled");
  return { enabled, method, codeLength, ttlMs: seconds * 1000, maxAttempts, signUp };
}
