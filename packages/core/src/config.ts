import { type Duration, fail } from "./config-values.js";
import { type PasswordConfig, type ResolvedPasswordConfig, resolvePasswordConfig } from "./crypto/password-config.js";
import type { EncryptionKeyring } from "./crypto/secret-box.js";
import type { Directory } from "./directory/directory.js";
import {
  type DirectoryLimitsConfig,
  type ResolvedDirectoryLimits,
  resolveDirectoryLimits,
} from "./directory/directory-limits.js";
import {
  type ReauthenticationConfig,
  type ResolvedReauthenticationConfig,
  resolveReauthenticationConfig,
} from "./flows/reauthentication-config.js";
import { type ResolvedSignUpConfig, type SignUpConfig, resolveSignUpConfig } from "./flows/sign-up-config.js";
import { type HttpConfig, type ResolvedHttpConfig, resolveHttpConfig } from "./http/http-config.js";
import { type OAuthConfig, type ResolvedOAuthProvider, resolveOAuthConfig } from "./oauth/provider-config.js";
import { resolveSweepInterval } from "./storage/sweep.js";
import type { Storage } from "./storage/types.js";
import { type ResolvedThrottleConfig, type ThrottleConfig, resolveThrottleConfig } from "./throttle/throttle-config.js";
import { type ResolvedTokenConfig, type SigningSecrets, type TokenConfig, resolveTokenConfig } from "./tokens/token-config.js";
import { type ResolvedTotpConfig, type TotpConfig, resolveTotpConfig } from "./totp/totp-config.js";
import { type ResolvedSessionConfig, type SessionConfig, resolveSessionConfig } from "./users/session-config.js";
import { type PasskeyConfig, type ResolvedPasskeyConfig, resolvePasskeyConfig } from "./webauthn/passkey-config.js";

/** The `secrets` of {@link AuthConfig}: the token signing keys, and the key of secrets at rest. */
export interface AuthSecrets extends SigningSecrets {
  /** Encrypts TOTP secrets at rest: one 32-byte key, or a keyring for rotation. */
  encryption: string | EncryptionKeyring;
}

/** The configuration given to {@link createAuth}. Only `storage`, `issuer`, `audience` and `secrets` are required. */
export interface AuthConfig extends TokenConfig {
  storage: Storage;
  /** Access-token `iss`: the URL of this service, e.g. `https://api.example.com`. */
  issuer: string;
  /** Access-token `aud`: the name of the API that accepts the tokens. */
  audience: string;
  secrets: AuthSecrets;
  password?: PasswordConfig;
  totp?: TotpConfig;
  /** Passkeys and security keys (WebAuthn); without it the public-key routes answer 40400. */
  passkeys?: PasskeyConfig;
  /** Sign-in with OAuth 2.0 and OpenID Connect providers, keyed by the name used in paths. */
  oauth?: OAuthConfig;
  /**
   * A directory to sign users in against: `ldapDirectory()` of `@portcullis/ldap`. How it is
   * reached and how its groups map to roles is the saved directory policy
   * (`saveDirectoryPolicy`), which operators change at run time; directory login stays off until
   * a policy with `enabled: true` is saved.
   */
  directory?: Directory;
  /** Directory calls at once, waiting, and the deadline of each: see `DirectoryLimitsConfig`. */
  directoryLimits?: DirectoryLimitsConfig;
  /** The role the admin routes (the directory policy, user administration) require. Default `"admin"`. */
  adminRole?: string;
  reauthentication?: ReauthenticationConfig;
  /** Accounts people make for themselves (`POST /auth/register`): off unless `enabled` (SU-1). */
  signUp?: SignUpConfig;
  throttle?: ThrottleConfig;
  http?: HttpConfig;
  /** What each session records of where it is used from: see `SessionConfig`. */
  sessions?: SessionConfig;
  /**
   * How often the instance deletes expired rows (challenges, ended throttling windows, refresh
   * tokens and sessions past their expiry), in bounded batches, one instance at a time among those
   * sharing the storage. Default `"5m"`, from 1 second to `"1d"`; `false` leaves it to you
   * (`sweepExpired(auth)` from a job).
   */
  sweepInterval?: Duration | false;
  /** The clock, in epoch milliseconds. Tests freeze it. */
  now?: () => number;
  /** The source of randomness. Default: the system's CSPRNG (`crypto.randomFillSync`), drawn 4 KiB at a time. */
  randomBytes?: (size: number) => Uint8Array;
}

/** {@link AuthConfig} with every default filled in and every value checked. */
export interface ResolvedConfig extends ResolvedHttpConfig, ResolvedTokenConfig {
  issuer: string;
  audience: string;
  password: ResolvedPasswordConfig;
  totp: ResolvedTotpConfig;
  reauthentication: ResolvedReauthenticationConfig;
  /** Null when passkeys are not configured. */
  passkeys: ResolvedPasskeyConfig | null;
  /** OAuth providers by name; empty when none are configured. */
  oauthProviders: Map<string, ResolvedOAuthProvider>;
  /** The role the admin routes require. */
  adminRole: string;
  signUp: ResolvedSignUpConfig;
  throttle: ResolvedThrottleConfig;
  sessions: ResolvedSessionConfig;
  directoryLimits: ResolvedDirectoryLimits;
  /** Milliseconds between two sweeps of expired rows; null when the service sweeps itself. */
  sweepIntervalMs: number | null;
}

function adminRoleOf(value: unknown): string {
  if (value === undefined) return "admin";
  if (typeof value !== "string" || value.length === 0 || value.length > 64) {
    fail(`adminRole must be a role name of 1 to 64 characters; got ${JSON.stringify(value)}`);
  }
  return value;
}

function isDirectory(value: unknown): value is Directory {
  const candidate = value as Partial<Record<keyof Directory, unknown>> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    (["authenticate", "lookup", "check", "close"] as const).every((method) => typeof candidate[method] === "function")
  );
}

/**
 * Checks a configuration and fills in its defaults. Every mistake throws a `TypeError` whose
 * message names the setting and says what to fix, so a service fails at startup rather than
 * at the first sign-in. Each feature's options are checked by the resolver beside the feature
 * (`resolveTokenConfig` in `tokens/token-config.ts`, `resolvePasswordConfig`, ...).
 */
export function resolveConfig(config: AuthConfig): ResolvedConfig {
  if (config === null || typeof config !== "object") fail("createAuth needs a configuration object");
  if (!config.storage || typeof config.storage !== "object") {
    fail("storage is required: pass memoryStorage() or a storage adapter");
  }
  if (typeof config.issuer !== "string" || config.issuer.length === 0) {
    fail('issuer is required: the URL of this service, e.g. "https://api.example.com"');
  }
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(config.issuer);
  } catch {
    fail(`issuer must be an absolute URL such as "https://api.example.com"; got ${JSON.stringify(config.issuer)}`);
  }
  if (typeof config.audience !== "string" || config.audience.length === 0) {
    fail('audience is required: the name of the API that accepts the tokens, e.g. "example-api"');
  }
  if (!config.secrets || typeof config.secrets !== "object") {
    fail("secrets is required: { signing, encryption }");
  }

  const tokens = resolveTokenConfig(config);
  const password = resolvePasswordConfig(config.password);
  const http = resolveHttpConfig(config.http);
  const reauthentication = resolveReauthenticationConfig(config.reauthentication);
  if (config.directory !== undefined && !isDirectory(config.directory)) {
    fail("directory must be a directory client such as ldapDirectory() from @portcullis/ldap");
  }
  const totp = resolveTotpConfig(config.totp, issuerUrl.host);

  return {
    issuer: config.issuer,
    audience: config.audience,
    ...http,
    ...tokens,
    password,
    totp,
    reauthentication,
    passkeys: resolvePasskeyConfig(config.passkeys),
    oauthProviders: resolveOAuthConfig(config.oauth),
    adminRole: adminRoleOf(config.adminRole),
    signUp: resolveSignUpConfig(config.signUp, adminRoleOf(config.adminRole)),
    throttle: resolveThrottleConfig(config.throttle),
    sessions: resolveSessionConfig(config.sessions),
    directoryLimits: resolveDirectoryLimits(config.directoryLimits),
    sweepIntervalMs: resolveSweepInterval(config.sweepInterval),
  };
}
