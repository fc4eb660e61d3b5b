import { isIP } from "node:net";
import { type Duration, type OptionNames, durationSeconds, positiveInteger, refuseUnknownOptions } from "../config-values.js";
import { rolesProblem } from "../users/roles.js";
import type { AnswerLimits } from "./provider-fetch.js";

/** What a provider says about the person, mapped onto Portcullis's account fields. */
export interface ExternalProfile {
  /** The provider's stable id for the person: the key of the link (OA-7). */
  subject: string;
  /** The username for an account created on first sign-in. */
  username?: string;
  email?: string;
  emailVerified?: boolean;
  displayName?: string;
  /** Roles an account created on first sign-in gets besides the default roles; later sign-ins do not change roles. */
  roles?: string[];
}

/** Which claims of the ID token or user-info hold each profile field (OIDC). */
export interface ClaimMapping {
  /** Default `sub`. */
  subject?: string;
  /** Default `preferred_username`. */
  username?: string;
  /** Default `email`. */
  email?: string;
  /** Default `email_verified`. */
  emailVerified?: string;
  /** Default `name`. */
  displayName?: string;
  /** No default: roles come from `provisioning.defaultRoles` only. */
  roles?: string;
}

/** One provider of `oauth.providers`: OpenID Connect with `issuer`, or plain OAuth 2.0 with its URLs. */
export interface OAuthProviderConfig {
  /** OpenID Connect: the issuer; its discovery document is fetched and its `issuer` must equal this (OA-4). */
  issuer?: string;
  /** Plain OAuth 2.0: the authorization endpoint. */
  authorizationUrl?: string;
  /** Plain OAuth 2.0: the token endpoint. */
  tokenUrl?: string;
  /** Plain OAuth 2.0: where the profile is read with the access token. */
  userInfoUrl?: string;
  clientId: string;
  /** Absent for a public client, which then relies on PKCE alone. */
  clientSecret?: string;
  /** The exact redirect URI registered at the provider (OA-5). */
  redirectUri: string;
  /** Default `["openid", "email", "profile"]` for OIDC (`openid` is always sent), none for OAuth 2.0. */
  scopes?: string[];
  /** Shown on the sign-in page. Default: the provider's name. */
  displayName?: string;
  /** OIDC: which claims hold each field. */
  claims?: ClaimMapping;
  /** Maps the user-info answer to a profile; required for plain OAuth 2.0, optional for OIDC. */
  profile?: (info: Record<string, unknown>) => ExternalProfile;
  /** Create an account on first sign-in. Default on, with no roles. */
  provisioning?: boolean | { defaultRoles?: string[] };
  /** Link a first sign-in to the account with the same verified email. Default off (OA-7). */
  linkByVerifiedEmail?: boolean;
  /**
   * Let this provider's sign-in stand for the second factor when the provider asserts one (STUP-5):
   * its ID token's `amr` holds `mfa` or values of two kinds of factor (`pwd` and `otp`, `hwk` and
   * `pin`, …), or its `acr` is one of {@link secondFactorAcrValues}. Such a sign-in asks no TOTP
   * code and its session's `amr` holds `mfa`; any other asks a TOTP user for the code (40102), as
   * without the option. OpenID Connect only. Default off: every TOTP user gets 40102.
   */
  trustedForSecondFactor?: boolean;
  /**
   * With `trustedForSecondFactor`: the `acr` values that mean the provider asked for a second
   * factor, exactly as the provider writes them (such as `"http://schemas.openid.net/pape/policies/2007/06/multi-factor"`,
   * or a Keycloak level such as `"2"`). Default none: only `amr` counts.
   */
  secondFactorAcrValues?: string[];
  /**
   * UNSAFE, with `trustedForSecondFactor`: every sign-in through this provider counts as two factors
   * whether or not it asserts one, as `trustedForSecondFactor` alone did before STUP-5: no TOTP
   * step, and `mfa` in the session's `amr`. Only for a provider that you know asks every user for a
   * second factor but does not say so in its ID tokens. Default false.
   */
  unsafeTrustForSecondFactorWithoutAssertion?: boolean;
  /**
   * UNSAFE: accept this provider's callback without the `iss` parameter even when the provider
   * advertises it (RFC 9207), for a client whose callback page drops it. An `iss` that is present
   * must still name the provider's issuer. Allowed only when no other provider shares this
   * provider's `redirectUri`, the alternative mix-up defence of RFC 9700 §4.4.2: `createAuth`
   * refuses the configuration otherwise (OA-12). Default false.
   */
  unsafeAllowMissingIss?: boolean;
}

/** The `oauth` setting of `createAuth`. */
export interface OAuthConfig {
  providers: Record<string, OAuthProviderConfig>;
  /**
   * UNSAFE: accept `http://` provider URLs on loopback hosts (127.0.0.1, ::1, localhost), for a
   * provider running on this machine in development and tests. Default false: https only.
   */
  unsafeAllowHttpLoopbackProviders?: boolean;
  /**
   * The most bytes of one answer from a provider (discovery, JWKS, token, user-info) that are
   * read: a longer one fails the sign-in with 50300 and stores nothing (OA-11). At least 1024.
   * Default 1 MiB (1048576).
   */
  maxProviderAnswerBytes?: number;
  /**
   * How long one request to a provider may take, its whole answer included: a slower one fails
   * the sign-in with 50300 (OA-11). Default `"10s"`, at most `"60s"`.
   */
  providerTimeout?: Duration;
}

/** One provider, checked, with its defaults. */
export interface ResolvedOAuthProvider {
  name: string;
  displayName: string;
  kind: "oidc" | "oauth2";
  issuer: URL | undefined;
  /** The issuer exactly as configured: the discovery document must name it character for character (OA-4). */
  issuerIdentifier: string | undefined;
  authorizationUrl: URL | undefined;
  tokenUrl: URL | undefined;
  userInfoUrl: URL | undefined;
  clientId: string;
  clientSecret: string | undefined;
  redirectUri: string;
  scopes: string[];
  claims: Required<Omit<ClaimMapping, "roles">> & { roles: string | undefined };
  profile: ((info: Record<string, unknown>) => ExternalProfile) | undefined;
  provisioning: { enabled: boolean; defaultRoles: string[] };
  linkByVerifiedEmail: boolean;
  trustedForSecondFactor: boolean;
  /** `secondFactorAcrValues`: the `acr` values that assert a second factor (STUP-5). */
  secondFactorAcrValues: string[];
  /** `unsafeTrustForSecondFactorWithoutAssertion`: every sign-in counts as two factors (STUP-5). */
  trustWithoutAssertion: boolean;
  /** `unsafeAllowMissingIss`: a callback without `iss` is accepted (OA-12). */
  allowMissingIss: boolean;
  allowHttpLoopback: boolean;
  /** `maxProviderAnswerBytes` and `providerTimeout`, shared by every provider (OA-11). */
  answerLimits: AnswerLimits;
}

/** The default of `oauth.maxProviderAnswerBytes`: 1 MiB. */
export const defaultMaxProviderAnswerBytes = 1024 * 1024;

function fail(message: string): never {
  throw new TypeError(`Portcullis configuration: oauth.${message}`);
}

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The provider name directory accounts are linked under (subject: the entry's stable id); no OAuth provider may take it. */
export const directoryProvider = "directory";

/** Whether a URL's host name is this machine: `localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  return loopbackHosts.has(hostname) || (isIP(hostname) === 4 && hostname.startsWith("127."));
}

/** A configured URL as an error message may show it: any `user:password@` part replaced. */
function shown(value: unknown): string {
  return JSON.stringify(typeof value === "string" ? value.replace(/\/\/[^/?#]*@/, "//…@") : value);
}

/** A provider URL: https, or http on a loopback host with the unsafe option (OA-5). */
function providerUrl(value: unknown, what: string, allowHttpLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(value as string);
  } catch {
    return fail(`${what} must be an absolute URL such as "https://id.example.com"; got ${shown(value)}`);
  }
  if (typeof value !== "string" || url.hash !== "" || url.username !== "" || url.password !== "") {
    fail(`${what} must be a URL without credentials or fragment; got ${shown(value)}`);
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) {
    if (allowHttpLoopback) return url;
    fail(`${what} uses http on a loopback host: set oauth.unsafeAllowHttpLoopbackProviders for development only`);
  }
  return fail(`${what} must use https; got ${shown(value)}`);
}

/** The app's callback page: https, or http on a loopback host (development), exact, no fragment (OA-5). */
function redirectUri(value: unknown, what: string): string {
  let url: URL;
  try {
    url = new URL(value as string);
  } catch {
    return fail(`${what} must be the absolute URL of your callback page; got ${shown(value)}`);
  }
  const secureEnough = url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
  if (!secureEnough || url.hash !== "" || url.username !== "" || url.password !== "") {
    fail(`${what} must be an https URL without credentials or fragment (http only on localhost); got ${shown(value)}`);
  }
  return url.href;
}

function nonEmptyString(value: unknown, what: string): string {
  if (typeof value !== "string" || value.trim() === "") fail(`${what} must be a non-empty string`);
  return value;
}

function stringList(value: unknown, what: string, pattern: RegExp): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && pattern.test(item))) {
    fail(`${what} must be a list of strings matching ${pattern}; got ${JSON.stringify(value)}`);
  }
  return [...value];
}

/** Checks `maxProviderAnswerBytes` and `providerTimeout` and fills in their defaults. */
function answerLimitsOf(config: OAuthConfig): AnswerLimits {
  const maxBytes = positiveInteger(
    config.maxProviderAnswerBytes,
    "oauth.maxProviderAnswerBytes",
    defaultMaxProviderAnswerBytes,
    1024,
  );
  const timeoutSeconds = durationSeconds(config.providerTimeout ?? "10s", "oauth.providerTimeout");
  if (timeoutSeconds > 60) fail(`providerTimeout must be at most "60s"; got ${JSON.stringify(config.providerTimeout)}`);
  return { maxBytes, timeoutMs: timeoutSeconds * 1000 };
}

const oauthOptions = {
  providers: true,
  unsafeAllowHttpLoopbackProviders: true,
  maxProviderAnswerBytes: true,
  providerTimeout: true,
} satisfies OptionNames<OAuthConfig>;
const providerOptions = {
  issuer: true,
  authorizationUrl: true,
  tokenUrl: true,
  userInfoUrl: true,
  clientId: true,
  clientSecret: true,
  redirectUri: true,
  scopes: true,
  displayName: true,
  claims: true,
  profile: true,
  provisioning: true,
  linkByVerifiedEmail: true,
  trustedForSecondFactor: true,
  secondFactorAcrValues: true,
  unsafeTrustForSecondFactorWithoutAssertion: true,
  unsafeAllowMissingIss: true,
} satisfies OptionNames<OAuthProviderConfig>;
const claimOptions = {
  subject: true,
  username: true,
  email: true,
  emailVerified: true,
  displayName: true,
  roles: true,
} satisfies OptionNames<ClaimMapping>;

/**
 * Checks `trustedForSecondFactor` and the options that refine it (STUP-5): each refinement needs
 * it, and a plain OAuth 2.0 provider, which has no ID token to assert a second factor with, can be
 * trusted only without an assertion (the unsafe option).
 */
function secondFactorTrustOf(
  config: OAuthProviderConfig,
  at: string,
  kind: ResolvedOAuthProvider["kind"],
): Pick<ResolvedOAuthProvider, "trustedForSecondFactor" | "secondFactorAcrValues" | "trustWithoutAssertion"> {
  const trusted = config.trustedForSecondFactor === true;
  const withoutAssertion = config.unsafeTrustForSecondFactorWithoutAssertion === true;
  const acrValues = config.secondFactorAcrValues;
  if (acrValues !== undefined) {
    if (!trusted)
      fail(`${at}.secondFactorAcrValues needs trustedForSecondFactor: true (it says which acr values prove a second factor)`);
    if (!Array.isArray(acrValues) || !acrValues.every((value) => typeof value === "string" && value.trim() !== "")) {
      fail(
        `${at}.secondFactorAcrValues must be a list of acr values, as the provider writes them; got ${JSON.stringify(acrValues)}`,
      );
    }
  }
  if (withoutAssertion && !trusted) fail(`${at}.unsafeTrustForSecondFactorWithoutAssertion needs trustedForSecondFactor: true`);
  if (trusted && !withoutAssertion && kind === "oauth2") {
    fail(
      `${at}.trustedForSecondFactor needs an OpenID Connect provider, whose ID tokens can assert a second factor (amr, acr); a plain OAuth 2.0 provider asserts none: set unsafeTrustForSecondFactorWithoutAssertion as well to trust every sign-in`,
    );
  }
  return {
    trustedForSecondFactor: trusted,
    secondFactorAcrValues: [...(acrValues ?? [])],
    trustWithoutAssertion: withoutAssertion,
  };
}

function resolveProvider(
  name: string,
  config: OAuthProviderConfig,
  allowHttpLoopback: boolean,
  answerLimits: AnswerLimits,
): ResolvedOAuthProvider {
  const at = `providers.${name}`;
  if (config === null || typeof config !== "object") fail(`${at} must be an object`);
  refuseUnknownOptions(config, providerOptions, `oauth.${at}.`);
  if (typeof config.provisioning === "object") {
    refuseUnknownOptions(config.provisioning, { defaultRoles: true }, `oauth.${at}.provisioning.`);
  }
  refuseUnknownOptions(config.claims, claimOptions, `oauth.${at}.claims.`);
  const plainUrls = [config.authorizationUrl, config.tokenUrl, config.userInfoUrl];
  const kind = config.issuer !== undefined ? "oidc" : "oauth2";
  if (kind === "oidc" && plainUrls.some((url) => url !== undefined)) {
    fail(
      `${at}: give either issuer (OpenID Connect, discovered) or authorizationUrl, tokenUrl and userInfoUrl (OAuth 2.0), not both`,
    );
  }
  if (kind === "oauth2" && plainUrls.some((url) => url === undefined)) {
    fail(`${at} needs issuer (OpenID Connect), or authorizationUrl, tokenUrl and userInfoUrl (OAuth 2.0)`);
  }
  if (kind === "oauth2" && typeof config.profile !== "function") {
    fail(`${at}.profile is required for an OAuth 2.0 provider: (info) => ({ subject, username, … })`);
  }
  if (config.profile !== undefined && typeof config.profile !== "function") fail(`${at}.profile must be a function`);
  const url = (value: unknown, field: string) =>
    value === undefined ? undefined : providerUrl(value, `${at}.${field}`, allowHttpLoopback);
  const scopes =
    config.scopes === undefined
      ? kind === "oidc"
        ? ["openid", "email", "profile"]
        : []
      : stringList(config.scopes, `${at}.scopes`, /^[\x21\x23-\x5B\x5D-\x7E]+$/);
  if (kind === "oidc" && !scopes.includes("openid")) scopes.unshift("openid");
  const provisioning = config.provisioning ?? true;
  if (typeof provisioning !== "boolean" && typeof provisioning !== "object") {
    fail(`${at}.provisioning must be true, false or { defaultRoles }`);
  }
  const defaultRoles = typeof provisioning === "object" ? (provisioning.defaultRoles ?? []) : [];
  const rolesRefusal = rolesProblem(defaultRoles);
  if (rolesRefusal !== null) fail(`${at}.provisioning.defaultRoles ${rolesRefusal}; got ${JSON.stringify(defaultRoles)}`);
  const flags = [
    "linkByVerifiedEmail",
    "trustedForSecondFactor",
    "unsafeTrustForSecondFactorWithoutAssertion",
    "unsafeAllowMissingIss",
  ] as const;
  for (const flag of flags) {
    if (config[flag] !== undefined && typeof config[flag] !== "boolean") fail(`${at}.${flag} must be true or false`);
  }
  const secondFactorTrust = secondFactorTrustOf(config, at, kind);
  const claims = config.claims ?? {};
  for (const [field, claim] of Object.entries(claims)) nonEmptyString(claim, `${at}.claims.${field}`);
  return {
    name,
    displayName: config.displayName === undefined ? name : nonEmptyString(config.displayName, `${at}.displayName`),
    kind,
    issuer: url(config.issuer, "issuer"),
    issuerIdentifier: config.issuer,
    authorizationUrl: url(config.authorizationUrl, "authorizationUrl"),
    tokenUrl: url(config.tokenUrl, "tokenUrl"),
    userInfoUrl: url(config.userInfoUrl, "userInfoUrl"),
    clientId: nonEmptyString(config.clientId, `${at}.clientId`),
    clientSecret: config.clientSecret === undefined ? undefined : nonEmptyString(config.clientSecret, `${at}.clientSecret`),
    redirectUri: redirectUri(config.redirectUri, `${at}.redirectUri`),
    scopes,
    claims: {
      subject: claims.subject ?? "sub",
      username: claims.username ?? "preferred_username",
      email: claims.email ?? "email",
      emailVerified: claims.emailVerified ?? "email_verified",
      displayName: claims.displayName ?? "name",
      roles: claims.roles,
    },
    profile: config.profile,
    provisioning: { enabled: provisioning !== false, defaultRoles: [...new Set(defaultRoles)] },
    linkByVerifiedEmail: config.linkByVerifiedEmail ?? false,
    ...secondFactorTrust,
    allowMissingIss: config.unsafeAllowMissingIss ?? false,
    allowHttpLoopback,
    answerLimits,
  };
}

/**
 * Checks `oauth`: every provider's URLs, client and mapping. A provider name is what appears in
 * paths (`/auth/oauth/<name>/authorize`): 1 to 32 lower-case letters, digits, `-` or `_`.
 * Nothing is fetched here: a provider that cannot be reached fails its sign-ins with 50300, never
 * the start of the service.
 */
export function resolveOAuthConfig(config: OAuthConfig | undefined): Map<string, ResolvedOAuthProvider> {
  const providers = new Map<string, ResolvedOAuthProvider>();
  if (config === undefined) return providers;
  const listed = (config as { providers?: unknown } | null)?.providers;
  if (typeof listed !== "object" || listed === null || Array.isArray(listed)) {
    fail("providers must be an object of providers keyed by their name, e.g. { corp: { issuer, clientId, … } }");
  }
  refuseUnknownOptions(config, oauthOptions, "oauth.");
  const allowHttpLoopback = config.unsafeAllowHttpLoopbackProviders ?? false;
  if (typeof allowHttpLoopback !== "boolean") fail("unsafeAllowHttpLoopbackProviders must be true or false");
  const answerLimits = answerLimitsOf(config);
  for (const [name, provider] of Object.entries(config.providers)) {
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(name)) {
      fail(`providers: the name ${JSON.stringify(name)} must be 1 to 32 lower-case letters, digits, "-" or "_"`);
    }
    if (name === directoryProvider)
      fail(`providers: a provider must not be named "${directoryProvider}", which is kept for directory (LDAP) accounts`);
    providers.set(name, resolveProvider(name, provider, allowHttpLoopback, answerLimits));
  }
  refuseSharedRedirectWithoutIss(providers);
  return providers;
}

/**
 * OA-12: a provider whose callbacks may come without `iss` must have a redirect URI of its own,
 * so the callback's path alone tells which provider answered (RFC 9700 §4.4.2, the mix-up
 * defence without RFC 9207).
 */
function refuseSharedRedirectWithoutIss(providers: Map<string, ResolvedOAuthProvider>): void {
  for (const lax of providers.values()) {
    if (!lax.allowMissingIss) continue;
    for (const other of providers.values()) {
      if (other !== lax && other.redirectUri === lax.redirectUri) {
        fail(
          `providers.${lax.name}.unsafeAllowMissingIss needs a redirectUri no other provider uses, but providers.${other.name} uses the same ${shown(lax.redirectUri)}`,
        );
      }
    }
  }
}
