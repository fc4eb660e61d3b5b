import type { AuthMethod } from "../storage/types.js";
import type { ResolvedOAuthProvider } from "./provider-config.js";

/**
 * How far ahead of this instance's clock a provider's time (an ID token's `iat`, `auth_time`) may
 * be: oauth4webapi's tolerance for `exp` and `nbf`, and the most a re-authentication's `auth_time`
 * may lag behind now (STUP-5).
 */
export const idTokenClockToleranceSeconds = 30;

/**
 * What an ID token says of how the person authenticated at the provider (OpenID Connect Core §2),
 * checked for type: `auth_time` in epoch seconds, the `amr` values as stated (RFC 8176 or the
 * provider's own), the `acr`. Each is absent when not stated.
 */
export interface ProviderAuthentication {
  authTime: number | undefined;
  amr: readonly string[];
  acr: string | undefined;
}

/** A provider that states nothing of the sign-in (plain OAuth 2.0, or an ID token without the claims): the minimum is assumed. */
export const notStated: ProviderAuthentication = Object.freeze({ authTime: undefined, amr: Object.freeze([]), acr: undefined });

/**
 * Reads `auth_time`, `amr` and `acr` from an ID token's validated claims (STUP-5, ASVS 6.8.4):
 * `auth_time` a non-negative number at most {@link idTokenClockToleranceSeconds} ahead of `now`
 * (epoch milliseconds), `amr` a list of strings, `acr` a string. oauth4webapi checks the signature,
 * issuer, audience and the type of `auth_time`, not the rest.
 *
 * @throws {Error} naming the claim that is not as OpenID Connect Core §2 defines it (the callback answers 40100).
 */
export function readProviderAuthentication(claims: Record<string, unknown>, now: number): ProviderAuthentication {
  const { auth_time: authTime, amr, acr } = claims;
  if (authTime !== undefined) {
    if (typeof authTime !== "number" || !Number.isFinite(authTime) || authTime < 0) {
      throw new Error("the ID token's auth_time is not a time");
    }
    if (authTime > now / 1000 + idTokenClockToleranceSeconds) throw new Error("the ID token's auth_time is in the future");
  }
  if (amr !== undefined && !(Array.isArray(amr) && amr.every((value) => typeof value === "string"))) {
    throw new Error("the ID token's amr is not a list of strings");
  }
  if (acr !== undefined && typeof acr !== "string") throw new Error("the ID token's acr is not a string");
  return { authTime, amr: amr ?? [], acr };
}

/**
 * Whether a re-authentication's sign-in happened just now (STUP-5, ASVS 7.6.1): the request asked
 * for `max_age=0` and `prompt=login`, so the ID token must state `auth_time` (OpenID Connect Core
 * §3.1.2.1), no older than {@link idTokenClockToleranceSeconds}. A provider that answered with a
 * session of its own from before did not authenticate the person again.
 */
export function signedInAfresh(authentication: ProviderAuthentication, now: number): boolean {
  return authentication.authTime !== undefined && authentication.authTime >= now / 1000 - idTokenClockToleranceSeconds;
}

type FactorKind = "knowledge" | "possession" | "inherence";

/**
 * The kind of factor each RFC 8176 value proves, where it proves one: something known, something
 * held, something the person is. `user` (presence), `mca`, `rba`, `geo`, `wia` and values outside
 * RFC 8176 prove none.
 */
const factorKindOf: Readonly<Record<string, FactorKind>> = Object.freeze({
  pwd: "knowledge",
  pin: "knowledge",
  kba: "knowledge",
  otp: "possession",
  sms: "possession",
  tel: "possession",
  hwk: "possession",
  swk: "possession",
  sc: "possession",
  pop: "possession",
  fpt: "inherence",
  face: "inherence",
  iris: "inherence",
  retina: "inherence",
  vbm: "inherence",
  bio: "inherence",
});

/** The RFC 8176 values a session carries as they are, when the provider is believed (see {@link providerSignIn}). */
const carried: ReadonlySet<string> = new Set<AuthMethod>(["pwd", "otp", "hwk", "swk"]);

/**
 * Whether the provider asserts that the person proved a second factor (STUP-5, ASVS 6.8.4): its
 * `amr` holds `mfa`, or values of two kinds of factor (`pwd` and `otp`, `hwk` and `pin`, `swk` and
 * `face`, …), or its `acr` is one the provider's `secondFactorAcrValues` lists. Two values of one
 * kind (`otp` and `sms`) are one factor.
 */
export function assertsSecondFactor(
  provider: Pick<ResolvedOAuthProvider, "secondFactorAcrValues">,
  authentication: ProviderAuthentication,
): boolean {
  if (authentication.acr !== undefined && provider.secondFactorAcrValues.includes(authentication.acr)) return true;
  if (authentication.amr.includes("mfa")) return true;
  const kinds = new Set(
    authentication.amr.filter((value) => Object.hasOwn(factorKindOf, value)).map((value) => factorKindOf[value]),
  );
  return kinds.size >= 2;
}

/** What a provider's sign-in proves for the session it begins or raises. */
export interface ProviderSignIn {
  /** The session's methods: `fed`, then what the provider asserted where Portcullis names it, and `mfa`. */
  methods: AuthMethod[];
  /** Whether the sign-in counts as two factors: no TOTP step, and the session's `amr` holds `mfa`. */
  multiFactor: boolean;
  /**
   * When the person authenticated, epoch milliseconds: the provider's `auth_time` (now, when it
   * states a later one); undefined when it states none, and the sign-in's own time counts, as for a password.
   */
  authTime: number | undefined;
}

/**
 * What a provider's sign-in proves (STUP-5, ASVS 6.8.4, 7.6.1), a pure decision. It counts as two
 * factors only when the provider is `trustedForSecondFactor` and {@link assertsSecondFactor}, or
 * has `unsafeTrustForSecondFactorWithoutAssertion`; then the session's methods are `fed`, the
 * provider's `pwd`, `otp`, `hwk` and `swk` in the order stated, and `mfa`. Otherwise they are
 * `fed` alone, whatever the provider says: the minimum a sign-in through it proves. Its time is
 * the provider's `auth_time` (never after `now`), so a session the provider kept from before does
 * not count as a fresh sign-in; without one, the sign-in's own (ASVS 6.8.4's documented fallback).
 */
export function providerSignIn(
  provider: Pick<ResolvedOAuthProvider, "trustedForSecondFactor" | "secondFactorAcrValues" | "trustWithoutAssertion">,
  authentication: ProviderAuthentication,
  now: number,
): ProviderSignIn {
  const multiFactor =
    provider.trustWithoutAssertion || (provider.trustedForSecondFactor && assertsSecondFactor(provider, authentication));
  const methods: AuthMethod[] = ["fed"];
  if (multiFactor) {
    for (const value of authentication.amr) {
      if (carried.has(value) && !methods.includes(value as AuthMethod)) methods.push(value as AuthMethod);
    }
    methods.push("mfa");
  }
  const { authTime } = authentication;
  return { methods, multiFactor, authTime: authTime === undefined ? undefined : Math.min(authTime * 1000, now) };
}
