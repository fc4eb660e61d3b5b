import { type ApiKeysConfig, type ResolvedApiKeysConfig, resolveApiKeysConfig } from "./api-keys/api-key-config.js";
import { type Duration, type OptionNames, fail, lacksScheme, refuseUnknownOptions } from "./config-values.js";
import { type PasswordConfig, type ResolvedPasswordConfig, resolvePasswordConfig } from "./crypto/password-config.js";
import type { EncryptionKeyring } from "./crypto/secret-box.js";
import type { Directory } from "./directory/directory.js";
import {
  type DirectoryLimitsConfig,
  type ResolvedDirectoryLimits,
  resolveDirectoryLimits,
} from "./directory/directory-limits.js";
import { type EmailConfig, type ResolvedEmailConfig, resolveEmailConfig } from "./email/email-config.js";
import {
  type ReauthenticationConfig,
  type ResolvedReauthenticationConfig,
  resolveReauthenticationConfig,
} from "./flows/reauthentication-config.js";
import { type ResolvedSignUpConfig, type SignUpConfig, resolveSignUpConfig } from "./flows/sign-up-config.js";
import { type HttpConfig, type ResolvedHttpConfig, resolveHttpConfig } from "./http/http-config.js";
import {
  type ImpersonationConfig,
  type ResolvedImpersonationConfig,
  resolveImpersonationConfig,
} from "./impersonation/impersonation-config.js";
import { type OAuthConfig, type ResolvedOAuthProvider, resolveOAuthConfig } from "./oauth/provider-config.js";
import {
  type OrganizationsConfig,
  type ResolvedOrganizationsConfig,
  resolveOrganizationsConfig,
} from "./organizations/organization-config.js";
import {
  type EmailSignInConfig,
  type ResolvedEmailSignInConfig,
  resolveEmailSignInConfig,
} from "./passwordless/email-sign-in-config.js";
import {
  type ResolvedSecondFactorConfig,
  type SecondFactorConfig,
  resolveSecondFactorConfig,
} from "./required-factor/required-factor-config.js";
import {
  type ResolvedServiceAccountsConfig,
  type ServiceAccountsConfig,
  resolveServiceAccountsConfig,
} from "./service-accounts/service-account-config.js";
import { resolveSweepInterval } from "./storage/sweep.js";
import type { Storage } from "./storage/types.js";
import { type ResolvedThrottleConfig, type ThrottleConfig, resolveThrottleConfig } from "./throttle/throttle-config.js";
import {
  type AsymmetricSigningKey,
  type ResolvedTokenConfig,
  type SigningSecrets,
  type TokenConfig,
  resolveTokenConfig,
} from "./tokens/token-config.js";
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
  /**
   * A second factor the operator requires (STUP-4): `{ required: "always" | { roles } | (user) => boolean }`.
   * A user who must have one and has none signs in to an enrolment-only state (40105). See `SecondFactorConfig`.
   */
  secondFactor?: SecondFactorConfig;
  /** Accounts people make for themselves (`POST /auth/register`): off unless `enabled` (SU-1). */
  signUp?: SignUpConfig;
  /**
   * Organizations (OR-1…): members with roles of their own, invitations by email, an active
   * organization in every access token (`org`, `org_roles`). Off unless `enabled`; needs a storage
   * with `organizations`. See `OrganizationsConfig`.
   */
  organizations?: OrganizationsConfig;
  /**
   * API keys (AK-1…): personal access tokens for scripts, `pc_<environment>_…`, accepted by
   * `requireAuth` with `scopes`. Off unless `enabled`; needs a storage with `apiKeys`. See `ApiKeysConfig`.
   */
  apiKeys?: ApiKeysConfig;
  /**
   * Service accounts (SA-1…): principals that are not people, with client secrets or registered
   * public keys, getting short access tokens from `POST /auth/token` (OAuth 2.0 client
   * credentials). Off unless `enabled`; needs a storage with `serviceAccounts`. See `ServiceAccountsConfig`.
   */
  serviceAccounts?: ServiceAccountsConfig;
  /**
   * Impersonation (IMP-1…): an administrator holding `adminRole` and `impersonation.role` acts as a
   * user for support, in a short session marked `act` in its tokens. Off unless `enabled`. See `ImpersonationConfig`.
   */
  impersonation?: ImpersonationConfig;
  /**
   * Password reset by email, verified addresses and security notices, delivered by your `send`;
   * without it those routes answer 40400. See `EmailConfig`.
   */
  email?: EmailConfig;
  /**
   * Sign-in with a one-time code or link sent to the account's verified address (PL-1…), and
   * optionally sign-up by such a code. Off unless `enabled`; needs `email`. See `EmailSignInConfig`.
   */
  emailSignIn?: EmailSignInConfig;
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
  /**
   * Explains refusals caused by configuration on stderr, one line each: a passkey ceremony from
   * an origin or for a relying party not configured, a provider naming another issuer, an access
   * token for another issuer or audience. The `check.failed` event is emitted either way. Lines
   * name the values compared, never secret material. Default `false`.
   */
  debug?: boolean;
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
  secondFactor: ResolvedSecondFactorConfig;
  /** Null when passkeys are not configured. */
  passkeys: ResolvedPasskeyConfig | null;
  /** OAuth providers by name; empty when none are configured. */
  oauthProviders: Map<string, ResolvedOAuthProvider>;
  /** The role the admin routes require. */
  adminRole: string;
  signUp: ResolvedSignUpConfig;
  organizations: ResolvedOrganizationsConfig;
  apiKeys: ResolvedApiKeysConfig;
  serviceAccounts: ResolvedServiceAccountsConfig;
  impersonation: ResolvedImpersonationConfig;
  /** Null when email is not configured. */
  email: ResolvedEmailConfig | null;
  emailSignIn: ResolvedEmailSignInConfig;
  throttle: ResolvedThrottleConfig;
  sessions: ResolvedSessionConfig;
  directoryLimits: ResolvedDirectoryLimits;
  /** Milliseconds between two sweeps of expired rows; null when the service sweeps itself. */
  sweepIntervalMs: number | null;
  /** Whether refusals caused by configuration are explained on stderr. */
  debug: boolean;
}

function adminRoleOf(value: unknown): string {
  if (value === undefined) return "admin";
  if (typeof value !== "string" || value.length === 0 || value.length > 64) {
    fail(`adminRole must be a role name of 1 to 64 characters; got ${JSON.stringify(value)}`);
  }
  return value;
}

const secretOptions = { signing: true, previousSigning: true, encryption: true } satisfies OptionNames<AuthSecrets>;
const signingKeyOptions = { alg: true, privateKey: true, kid: true } satisfies OptionNames<AsymmetricSigningKey>;
const keyringOptions = { current: true, keys: true } satisfies OptionNames<EncryptionKeyring>;

/** The strings of a secrets setting that are keys of one purpose: the signing secrets, or the encryption keys. */
function secretStrings(values: readonly unknown[]): string[] {
  return values.filter((value): value is string => typeof value === "string" && value.length > 0);
}

/**
 * Refuses unknown keys in `secrets` and one secret used for both purposes: a key that signs
 * tokens must never also encrypt secrets at rest, or knowing one use gives the other.
 */
function checkSecrets(secrets: AuthSecrets): void {
  refuseUnknownOptions(secrets, secretOptions, "secrets.");
  // Without its privateKey, keys.ts says what a signing key needs; with it, a stray key is a typo.
  if (typeof secrets.signing === "object" && secrets.signing?.privateKey !== undefined) {
    refuseUnknownOptions(secrets.signing, signingKeyOptions, "secrets.signing.");
  }
  const { encryption } = secrets;
  if (typeof encryption === "object") refuseUnknownOptions(encryption, keyringOptions, "secrets.encryption.");
  const signing = secretStrings([secrets.signing, ...(Array.isArray(secrets.previousSigning) ? secrets.previousSigning : [])]);
  const encrypting = secretStrings(
    typeof encryption === "object" && encryption !== null ? Object.values(encryption.keys ?? {}) : [encryption],
  );
  if (signing.some((secret) => encrypting.includes(secret))) {
    fail(
      `secrets.signing and secrets.encryption must be different secrets: one value is used for both; generate another with: node -p "require('crypto').randomBytes(32).toString('base64url')"`,
    );
  }
}

function debugOf(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== "boolean") fail(`debug must be true or false; got ${JSON.stringify(value)}`);
  return value;
}

/** The `organizations` options, refused when enabled over a storage that keeps no organizations. */
function resolveOrganizations(config: AuthConfig): ResolvedOrganizationsConfig {
  const organizations = resolveOrganizationsConfig(config.organizations);
  if (organizations.enabled && config.storage.organizations === undefined) {
    fail(
      "organizations.enabled needs a storage with organizations: memoryStorage(), @portcullis/kysely at schema version 6, or a store of your own with an organizations store",
    );
  }
  return organizations;
}

/** The `apiKeys` options, refused when enabled over a storage that keeps no API keys. */
function resolveApiKeys(config: AuthConfig): ResolvedApiKeysConfig {
  const apiKeys = resolveApiKeysConfig(config.apiKeys);
  if (apiKeys.enabled && config.storage.apiKeys === undefined) {
    fail(
      "apiKeys.enabled needs a storage with apiKeys: memoryStorage(), @portcullis/kysely at schema version 7, or a store of your own with an apiKeys store",
    );
  }
  return apiKeys;
}

/** The `serviceAccounts` options, refused when enabled over a storage that keeps no service accounts. */
function resolveServiceAccounts(config: AuthConfig): ResolvedServiceAccountsConfig {
  const serviceAccounts = resolveServiceAccountsConfig(config.serviceAccounts);
  if (serviceAccounts.enabled && config.storage.serviceAccounts === undefined) {
    fail(
      "serviceAccounts.enabled needs a storage with serviceAccounts: memoryStorage(), @portcullis/kysely at schema version 8, or a store of your own with a serviceAccounts store",
    );
  }
  return serviceAccounts;
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
  if (lacksScheme(config.issuer)) {
    fail(`issuer must start with its scheme, such as "https://${config.issuer}"; got ${JSON.stringify(config.issuer)}`);
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
  checkSecrets(config.secrets);

  const tokens = resolveTokenConfig(config);
  const password = resolvePasswordConfig(config.password);
  const http = resolveHttpConfig(config.http);
  const reauthentication = resolveReauthenticationConfig(config.reauthentication);
  if (config.directory !== undefined && !isDirectory(config.directory)) {
    fail("directory must be a directory client such as ldapDirectory() from @portcullis/ldap");
  }
  const totp = resolveTotpConfig(config.totp, issuerUrl.host);
  const signUp = resolveSignUpConfig(config.signUp, adminRoleOf(config.adminRole));
  const email = resolveEmailConfig(config.email, issuerUrl.host);

  return {
    issuer: config.issuer,
    audience: config.audience,
    ...http,
    ...tokens,
    password,
    totp,
    reauthentication,
    secondFactor: resolveSecondFactorConfig(config.secondFactor),
    passkeys: resolvePasskeyConfig(config.passkeys),
    oauthProviders: resolveOAuthConfig(config.oauth),
    adminRole: adminRoleOf(config.adminRole),
    signUp,
    organizations: resolveOrganizations(config),
    apiKeys: resolveApiKeys(config),
    serviceAccounts: resolveServiceAccounts(config),
    impersonation: resolveImpersonationConfig(config.impersonation, adminRoleOf(config.adminRole)),
    email,
    emailSignIn: resolveEmailSignInConfig(config.emailSignIn, {
      email: email !== null,
      signInUrl: email?.signInUrl != null,
      signUp: signUp.enabled,
    }),
    throttle: resolveThrottleConfig(config.throttle),
    sessions: resolveSessionConfig(config.sessions),
    directoryLimits: resolveDirectoryLimits(config.directoryLimits),
    sweepIntervalMs: resolveSweepInterval(config.sweepInterval),
    debug: debugOf(config.debug),
  };
}
