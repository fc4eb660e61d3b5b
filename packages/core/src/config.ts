import type { JsonWebKey } from "node:crypto";
import { availableParallelism } from "node:os";
import { type Duration, durationSeconds, fail, positiveInteger } from "./config-values.js";
import type { Directory } from "./directory/directory.js";
import {
  type DirectoryLimitsConfig,
  type ResolvedDirectoryLimits,
  resolveDirectoryLimits,
} from "./directory/directory-limits.js";
import { type OAuthConfig, type ResolvedOAuthProvider, resolveOAuthConfig } from "./oauth/provider-config.js";
import { resolveSweepInterval } from "./storage/sweep.js";
import type { Storage } from "./storage/types.js";
import { type ResolvedThrottleConfig, type ThrottleConfig, resolveThrottleConfig } from "./throttle/throttle-config.js";

export { type Duration, durationSeconds } from "./config-values.js";
export type { ResolvedTier, ThrottleConfig, ThrottleTier } from "./throttle/throttle-config.js";

import { type PasskeyConfig, type ResolvedPasskeyConfig, resolvePasskeyConfig } from "./webauthn/passkey-config.js";

/** A JSON Web Key (RFC 7517): what `node:crypto` reads, with the members a key set publishes. */
export type JWK = JsonWebKey & { kid?: string; alg?: string; use?: string };

/** An asymmetric signing key for access tokens, published at `/.well-known/jwks.json`. */
export interface AsymmetricSigningKey {
  alg: "EdDSA" | "ES256";
  /** The private key as PKCS#8 PEM or a private JWK. */
  privateKey: string | JWK;
  /** Key id put in the token header; defaults to the key's JWK thumbprint (RFC 7638). */
  kid?: string;
}

/** A key that signed tokens before a rotation and may still verify them. */
export type VerificationKey = string | { alg: "EdDSA" | "ES256"; publicKey: string | JWK; kid?: string } | AsymmetricSigningKey;

/** The encryption keys for secrets at rest: the current one seals, any of them opens. */
export interface EncryptionKeyring {
  current: string;
  /** Key id → 32-byte key as 64 hex characters or base64/base64url. */
  keys: Record<string, string>;
}

/** The configuration given to {@link createAuth}. Only `storage`, `issuer`, `audience` and `secrets` are required. */
export interface AuthConfig {
  storage: Storage;
  /** Access-token `iss`: the URL of this service, e.g. `https://api.example.com`. */
  issuer: string;
  /** Access-token `aud`: the name of the API that accepts the tokens. */
  audience: string;
  secrets: {
    /**
     * Signs access tokens: an HS256 secret of at least 32 bytes, or an asymmetric key
     * (EdDSA or ES256) whose public half is served at `/.well-known/jwks.json`.
     */
    signing: string | AsymmetricSigningKey;
    /** Keys that signed tokens before a rotation; they verify, never sign. */
    previousSigning?: VerificationKey[];
    /** Encrypts TOTP secrets at rest: one 32-byte key, or a keyring for rotation. */
    encryption: string | EncryptionKeyring;
  };
  /** Token lifetimes. Defaults: access 15m, refresh 30d (absolute), refreshIdle 7d, temporary 5m. */
  ttl?: { access?: Duration; refresh?: Duration; refreshIdle?: Duration; temporary?: Duration };
  /** Allowed clock skew when checking `exp` and `nbf`: at most 60 s. Default 5 s. */
  clockToleranceSeconds?: number;
  /**
   * How long the check of a token's version and session may be cached per session. Default
   * 0 (checked on every request); must be shorter than the access lifetime (TV-2).
   */
  tokenStateCacheSeconds?: number;
  /**
   * How many verified access tokens are kept, keyed by the exact token, so that a token
   * presented again skips its signature check. An entry is served only before the token's
   * `exp`; the token version and session are still checked as `tokenStateCacheSeconds` says.
   * The oldest entry leaves first. Default 10000 (a few MB); 0 keeps none.
   */
  verifiedTokenCacheSize?: number;
  password?: {
    /** Minimum length in characters. Default 8; at least 8. */
    minLength?: number;
    /** Passwords longer than this many UTF-8 bytes are refused before hashing. Default 1024. */
    maxBytes?: number;
    /** argon2id cost. Defaults are OWASP's: memoryCost 19456 KiB, timeCost 2, parallelism 1. */
    hashing?: { memoryCost?: number; timeCost?: number; parallelism?: number };
    /** Hashes computed at once; more wait in line. Default: the cores this process may use, less one, from 1 to 4. */
    maxConcurrentHashes?: number;
    /** Hashes that may wait; past that, requests get 50300. Default 256. */
    maxQueuedHashes?: number;
    /** More passwords to refuse, on top of the built-in list of common ones. */
    blocklist?: Iterable<string>;
    /**
     * Asks whether a new password appears in a data breach, e.g. through a k-anonymity range
     * API (see `docs/examples/breached-passwords.ts`). Called with the NFKC form once every
     * other check passed; true refuses the password with 42200. A hook that throws or rejects
     * refuses it with 50300, its error kept as `cause` (fail closed); to fail open, catch
     * inside the hook and return false.
     */
    isBreached?: (password: string) => boolean | Promise<boolean>;
  };
  totp?: {
    /** Steps accepted either side of now: 0 or 1. Default 1. */
    window?: 0 | 1;
    /** The issuer shown in authenticator apps. Default: the host of `issuer`. */
    label?: string;
  };
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
  /** The role the admin routes (the directory policy) require. Default `"admin"`. */
  adminRole?: string;
  reauthentication?: {
    /**
     * How long after a sign-in the user may enrol TOTP or register a passkey without
     * proving the password or a TOTP code again. Default `"5m"`, at most 1 hour; `false` asks
     * for proof every time.
     */
    recentSignIn?: Duration | false;
  };
  throttle?: ThrottleConfig;
  http?: {
    /** Where the routes are mounted. Default `/api/v1`. */
    basePath?: string;
    /** `"always-200"` answers every response with status 200 for clients that read only `code`. */
    statusMode?: "standard" | "always-200";
    /**
     * Addresses or CIDR ranges of proxies whose `X-Forwarded-For` is believed. Default none:
     * the client address is the socket's peer (RL-3).
     */
    trustedProxies?: string[];
    /**
     * UNSAFE: serve every route over plain HTTP from any client. By default a request that did
     * not arrive over TLS (directly, or per a trusted proxy's `X-Forwarded-Proto`) is refused
     * with 40300 unless its client is on loopback (HTTP-7). Default false.
     */
    unsafeAllowPlainHttp?: boolean;
    /**
     * Serve the OpenAPI 3.1 document of the routes (`openApiDocument`) at
     * `GET <basePath>/auth/openapi.json`, public. Default false: the route answers 40400.
     */
    openApi?: boolean;
  };
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
export interface ResolvedConfig {
  issuer: string;
  audience: string;
  basePath: string;
  statusMode: "standard" | "always-200";
  trustedProxies: string[];
  unsafeAllowPlainHttp: boolean;
  /** Whether `GET <basePath>/auth/openapi.json` serves the OpenAPI document. */
  openApi: boolean;
  ttl: { access: number; refresh: number; refreshIdle: number; temporary: number };
  clockToleranceSeconds: number;
  tokenStateCacheSeconds: number;
  verifiedTokenCacheSize: number;
  password: {
    minLength: number;
    maxBytes: number;
    hashing: { memoryCost: number; timeCost: number; parallelism: number };
    maxConcurrentHashes: number;
    maxQueuedHashes: number;
    blocklist: Set<string>;
    isBreached: ((password: string) => boolean | Promise<boolean>) | undefined;
  };
  totp: { window: 0 | 1; label: string; maxAttemptsPerToken: number };
  reauthentication: { recentSignInSeconds: number };
  /** Null when passkeys are not configured. */
  passkeys: ResolvedPasskeyConfig | null;
  /** OAuth providers by name; empty when none are configured. */
  oauthProviders: Map<string, ResolvedOAuthProvider>;
  /** The role the admin routes require. */
  adminRole: string;
  throttle: ResolvedThrottleConfig;
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

/** The OWASP argon2id parameters (PW-1). */
/**
 * argon2id runs at once by default: one core fewer than the process may use, so that a login
 * flood leaves a core to the event loop and signed-in requests keep their latency, and at most
 * 4, the size of libuv's thread pool that runs them.
 */
function defaultConcurrentHashes(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

export const defaultHashing = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Checks a configuration and fills in its defaults. Every mistake throws a `TypeError` whose
 * message names the setting and says what to fix, so a service fails at startup rather than
 * at the first sign-in.
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

  const ttl = {
    access: durationSeconds(config.ttl?.access ?? "15m", "ttl.access"),
    refresh: durationSeconds(config.ttl?.refresh ?? "30d", "ttl.refresh"),
    refreshIdle: durationSeconds(config.ttl?.refreshIdle ?? "7d", "ttl.refreshIdle"),
    temporary: durationSeconds(config.ttl?.temporary ?? "5m", "ttl.temporary"),
  };
  if (ttl.access > 86400) fail(`ttl.access must be at most 24h; got ${ttl.access} seconds`);
  if (ttl.access >= ttl.refresh) fail("ttl.access must be shorter than ttl.refresh");
  if (ttl.temporary > 3600) fail(`ttl.temporary must be at most 1h; got ${ttl.temporary} seconds`);

  const clockToleranceSeconds = positiveInteger(config.clockToleranceSeconds, "clockToleranceSeconds", 5, 0);
  if (clockToleranceSeconds > 60) fail("clockToleranceSeconds must be at most 60 (AT-3)");
  const tokenStateCacheSeconds = positiveInteger(config.tokenStateCacheSeconds, "tokenStateCacheSeconds", 0, 0);
  if (tokenStateCacheSeconds >= ttl.access) {
    fail("tokenStateCacheSeconds must be shorter than ttl.access, or revoked tokens would outlive their lifetime");
  }

  const verifiedTokenCacheSize = positiveInteger(config.verifiedTokenCacheSize, "verifiedTokenCacheSize", 10_000, 0);

  const hashing = {
    memoryCost: config.password?.hashing?.memoryCost ?? defaultHashing.memoryCost,
    timeCost: config.password?.hashing?.timeCost ?? defaultHashing.timeCost,
    parallelism: config.password?.hashing?.parallelism ?? defaultHashing.parallelism,
  };
  if (
    !Object.values(hashing).every(Number.isSafeInteger) ||
    hashing.memoryCost < defaultHashing.memoryCost ||
    hashing.timeCost < defaultHashing.timeCost ||
    hashing.parallelism < 1
  ) {
    fail("password.hashing must be at least memoryCost 19456, timeCost 2, parallelism 1 (OWASP argon2id minimum)");
  }
  const minLength = positiveInteger(config.password?.minLength, "password.minLength", 8, 8);
  const maxBytes = positiveInteger(config.password?.maxBytes, "password.maxBytes", 1024, 64);
  const isBreached = config.password?.isBreached;
  if (isBreached !== undefined && typeof isBreached !== "function") {
    const got = isBreached === null ? "null" : typeof isBreached;
    fail(`password.isBreached must be a function (password) => boolean | Promise<boolean>; got ${got}`);
  }

  const basePath = config.http?.basePath ?? "/api/v1";
  if (!/^(\/[A-Za-z0-9._~-]+)*$/.test(basePath)) {
    fail(`http.basePath must look like "/api/v1" (or "" for the root); got ${JSON.stringify(basePath)}`);
  }
  const statusMode = config.http?.statusMode ?? "standard";
  if (statusMode !== "standard" && statusMode !== "always-200") {
    fail(`http.statusMode must be "standard" or "always-200"; got ${JSON.stringify(statusMode)}`);
  }
  const recentSignIn = config.reauthentication?.recentSignIn ?? "5m";
  const recentSignInSeconds = recentSignIn === false ? 0 : durationSeconds(recentSignIn, "reauthentication.recentSignIn");
  if (recentSignInSeconds > 3600) fail(`reauthentication.recentSignIn must be at most 1h; got ${recentSignInSeconds} seconds`);
  const unsafeAllowPlainHttp = config.http?.unsafeAllowPlainHttp ?? false;
  if (typeof unsafeAllowPlainHttp !== "boolean") {
    fail(`http.unsafeAllowPlainHttp must be true or false; got ${JSON.stringify(unsafeAllowPlainHttp)}`);
  }
  const openApi = config.http?.openApi ?? false;
  if (typeof openApi !== "boolean") fail(`http.openApi must be true or false; got ${JSON.stringify(openApi)}`);
  if (config.directory !== undefined && !isDirectory(config.directory)) {
    fail("directory must be a directory client such as ldapDirectory() from @portcullis/ldap");
  }
  const totpWindow = config.totp?.window ?? 1;
  if (totpWindow !== 0 && totpWindow !== 1) fail("totp.window must be 0 or 1");

  return {
    issuer: config.issuer,
    audience: config.audience,
    basePath,
    statusMode,
    trustedProxies: [...(config.http?.trustedProxies ?? [])],
    unsafeAllowPlainHttp,
    openApi,
    ttl,
    clockToleranceSeconds,
    tokenStateCacheSeconds,
    verifiedTokenCacheSize,
    password: {
      minLength,
      maxBytes,
      hashing,
      maxConcurrentHashes: positiveInteger(
        config.password?.maxConcurrentHashes,
        "password.maxConcurrentHashes",
        defaultConcurrentHashes(),
      ),
      maxQueuedHashes: positiveInteger(config.password?.maxQueuedHashes, "password.maxQueuedHashes", 256, 0),
      blocklist: new Set([...(config.password?.blocklist ?? [])].map((entry) => entry.normalize("NFKC").toLowerCase())),
      isBreached,
    },
    totp: { window: totpWindow, label: config.totp?.label ?? issuerUrl.host, maxAttemptsPerToken: 5 },
    reauthentication: { recentSignInSeconds },
    passkeys: resolvePasskeyConfig(config.passkeys),
    oauthProviders: resolveOAuthConfig(config.oauth),
    adminRole: adminRoleOf(config.adminRole),
    throttle: resolveThrottleConfig(config.throttle),
    directoryLimits: resolveDirectoryLimits(config.directoryLimits),
    sweepIntervalMs: resolveSweepInterval(config.sweepInterval),
  };
}
