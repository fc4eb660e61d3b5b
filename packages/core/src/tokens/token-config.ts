import type { JsonWebKey } from "node:crypto";
import {
  type Duration,
  type OptionNames,
  durationSeconds,
  fail,
  positiveInteger,
  refuseUnknownOptions,
} from "../config-values.js";

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

/** The access-token keys of `secrets`: what `loadTokenKeys` reads and checks (AT-5). */
export interface SigningSecrets {
  /**
   * Signs access tokens: an HS256 secret of at least 32 bytes, or an asymmetric key
   * (EdDSA or ES256) whose public half is served at `/.well-known/jwks.json`.
   */
  signing: string | AsymmetricSigningKey;
  /** Keys that signed tokens before a rotation; they verify, never sign. */
  previousSigning?: VerificationKey[];
}

/** The token options of `createAuth`: lifetimes, clock tolerance and the verification caches. */
export interface TokenConfig {
  /** Token lifetimes. Defaults: access 15m, refresh 30d (absolute), refreshIdle 7d, temporary 5m. */
  ttl?: { access?: Duration; refresh?: Duration; refreshIdle?: Duration; temporary?: Duration };
  /** Allowed clock skew when checking `exp` and `nbf`: at most 60 s. Default 5 s. */
  clockToleranceSeconds?: number;
  /**
   * How long the refresh token replaced last may still be presented (seconds, or a string like
   * `"30s"`; at most 60 s): within it, it is answered with the session's current refresh token
   * and a new access token instead of being taken as reuse, for tabs of one browser that share
   * their tokens and refresh at once. After it, reuse ends the session (RT-2). Either way the
   * reuse is a `refresh_token.reused` event. Default 0: every reuse ends the session.
   */
  refreshReuseInterval?: Duration;
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
}

/** {@link TokenConfig} with its defaults filled in; lifetimes in seconds. */
export interface ResolvedTokenConfig {
  ttl: { access: number; refresh: number; refreshIdle: number; temporary: number };
  clockToleranceSeconds: number;
  /** Seconds; 0 when reuse is never tolerated. */
  refreshReuseInterval: number;
  tokenStateCacheSeconds: number;
  verifiedTokenCacheSize: number;
}

const ttlOptions = { access: true, refresh: true, refreshIdle: true, temporary: true } satisfies OptionNames<
  NonNullable<TokenConfig["ttl"]>
>;

/** Checks the token options and fills in their defaults; throws a `TypeError` naming a bad one. */
export function resolveTokenConfig(config: TokenConfig): ResolvedTokenConfig {
  refuseUnknownOptions(config.ttl, ttlOptions, "ttl.");
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
  const refreshReuseInterval =
    config.refreshReuseInterval === undefined || config.refreshReuseInterval === 0
      ? 0
      : durationSeconds(config.refreshReuseInterval, "refreshReuseInterval");
  if (refreshReuseInterval > 60) fail(`refreshReuseInterval must be at most 60 seconds; got ${refreshReuseInterval}`);
  const tokenStateCacheSeconds = positiveInteger(config.tokenStateCacheSeconds, "tokenStateCacheSeconds", 0, 0);
  if (tokenStateCacheSeconds >= ttl.access) {
    fail("tokenStateCacheSeconds must be shorter than ttl.access, or revoked tokens would outlive their lifetime");
  }
  const verifiedTokenCacheSize = positiveInteger(config.verifiedTokenCacheSize, "verifiedTokenCacheSize", 10_000, 0);
  return { ttl, clockToleranceSeconds, refreshReuseInterval, tokenStateCacheSeconds, verifiedTokenCacheSize };
}
