import { checkEnvironment, scopeListOf } from "../api-keys/api-key-config.js";
import { type Duration, type OptionNames, durationSeconds, fail, lacksScheme, refuseUnknownOptions } from "../config-values.js";

/**
 * The `serviceAccounts` options of `createAuth` (SA-1…): principals that are not people, which get
 * short access tokens from `POST /auth/token` with the OAuth 2.0 client-credentials grant. Off
 * unless `enabled`.
 */
export interface ServiceAccountsConfig {
  /** Turns service accounts, their administration routes and `POST /auth/token` on. Default `false`. */
  enabled?: boolean;
  /** The lifetime of a service account's access token. Default `"10m"`; at most `"1h"`. No refresh token is issued. */
  tokenTtl?: Duration;
  /** The environment tag in every client secret (`pcs_<environment>_…`): lower-case letters and digits, 1 to 16. Default `"live"`. */
  environment?: string;
  /** The lifetime of a new client secret when its request names none. Default none: a secret lasts until it is removed. */
  secretTtl?: Duration;
  /** The scopes a service account may hold, when you define a fixed set. Default: any scope of 1 to 128 visible ASCII characters. */
  scopes?: string[];
  /**
   * The token endpoint's public URL, which a `private_key_jwt` client assertion's `aud` may name
   * besides the `issuer` (RFC 7523 §3). Default: `issuer`'s origin with the base path and
   * `/auth/token` (`https://api.example.com/api/v1/auth/token`).
   */
  tokenEndpoint?: string;
}

/** {@link ServiceAccountsConfig} with its defaults filled in. */
export interface ResolvedServiceAccountsConfig {
  enabled: boolean;
  tokenTtlSeconds: number;
  environment: string;
  /** Null: a secret lasts until removed. */
  secretTtlSeconds: number | null;
  /** Null: any scope. */
  scopes: string[] | null;
  /** Null: derived from `issuer` and the base path. */
  tokenEndpoint: string | null;
}

/** How many client secrets, and how many public keys, an account holds at once: two, so one can replace the other (SA-2). */
export const maxCredentialsOfKind = 2;

const maxTokenTtlSeconds = 3600;

const optionNames = {
  enabled: true,
  tokenTtl: true,
  environment: true,
  secretTtl: true,
  scopes: true,
  tokenEndpoint: true,
} satisfies OptionNames<ServiceAccountsConfig>;

/**
 * Checks the `serviceAccounts` options and fills in their defaults; throws a `TypeError` naming a bad one.
 *
 * @example
 * ```ts
 * resolveServiceAccountsConfig({ enabled: true }).tokenTtlSeconds; // 600
 * ```
 */
export function resolveServiceAccountsConfig(config: ServiceAccountsConfig | undefined): ResolvedServiceAccountsConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`serviceAccounts must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, optionNames, "serviceAccounts.");
  const { enabled = false, environment = "live", tokenTtl = "10m" } = options;
  if (typeof enabled !== "boolean") fail(`serviceAccounts.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  checkEnvironment(environment, "serviceAccounts.environment");
  const tokenTtlSeconds = durationSeconds(tokenTtl, "serviceAccounts.tokenTtl");
  if (tokenTtlSeconds > maxTokenTtlSeconds)
    fail('serviceAccounts.tokenTtl must be at most "1h": no refresh token makes it short');
  return {
    enabled,
    tokenTtlSeconds,
    environment,
    secretTtlSeconds: options.secretTtl === undefined ? null : durationSeconds(options.secretTtl, "serviceAccounts.secretTtl"),
    scopes: scopeListOf(options.scopes, "serviceAccounts.scopes"),
    tokenEndpoint: tokenEndpointOf(options.tokenEndpoint),
  };
}

function tokenEndpointOf(value: unknown): string | null {
  if (value === undefined) return null;
  let url: URL | null = null;
  try {
    url = typeof value === "string" && !lacksScheme(value) ? new URL(value) : null;
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== "https:" && url.protocol !== "http:")) {
    fail(
      `serviceAccounts.tokenEndpoint must be an absolute URL such as "https://api.example.com/api/v1/auth/token"; got ${JSON.stringify(value)}`,
    );
  }
  return value as string;
}
