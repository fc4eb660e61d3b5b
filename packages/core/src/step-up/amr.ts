import type { AuthMethod, SessionRecord } from "../storage/types.js";

/**
 * The values an access token's `amr` claim holds (RFC 8176 §2): `pwd` a password (local or a
 * directory's), `otp` a TOTP or recovery code, `hwk` a device-bound passkey or security key,
 * `swk` a synced passkey (its key leaves the device: backup eligible), `user` the user
 * verification of that passkey (a PIN or biometric), `fed` a sign-in through a provider, and
 * `mfa` when a first and a second factor were both proven; and `email`, Portcullis's own value
 * (none of RFC 8176 fits), a one-time code or link sent to a verified address (PL-1).
 */
export type AmrValue = "pwd" | "otp" | "hwk" | "swk" | "user" | "fed" | "mfa" | "email";

/** How each way a session was proven reads in the token: Portcullis's own names (`rc`, `ldap`) as the RFC 8176 value they are. */
const claimValueOf: Readonly<Record<AuthMethod, AmrValue>> = {
  pwd: "pwd",
  ldap: "pwd",
  otp: "otp",
  rc: "otp",
  hwk: "hwk",
  swk: "swk",
  user: "user",
  fed: "fed",
  mfa: "mfa",
  email: "email",
};

/**
 * The methods that prove a first factor: something the user knows, a key or a provider that signs
 * them in alone, or a code or link sent to their verified address (`email`: never a second factor,
 * as it proves only access to the mailbox a password reset would reach too).
 */
const firstFactors: ReadonlySet<string> = new Set<AuthMethod>(["pwd", "ldap", "hwk", "swk", "fed", "email"]);

/** The methods that prove a second factor: a TOTP or recovery code, the user verification of a passkey, or a provider's assertion (STUP-5). */
const secondFactors: ReadonlySet<string> = new Set<AuthMethod>(["otp", "rc", "user", "mfa"]);

/** Which of the two factors some methods prove. */
export interface ProvenFactors {
  first: boolean;
  second: boolean;
}

/**
 * Which factors `methods` prove: a first (a password, a passkey, a provider) and a second (a TOTP
 * or recovery code, or the user verification of a passkey, which makes that passkey both).
 */
export function factorsProven(methods: readonly string[]): ProvenFactors {
  return {
    first: methods.some((method) => firstFactors.has(method)),
    second: methods.some((method) => secondFactors.has(method)),
  };
}

/**
 * The `amr` claim of a session proven by `methods` (STUP-1): each as its RFC 8176 value, once, in
 * the order proven, and `mfa` last when a first and a second factor were both proven. A value no
 * release wrote is left out rather than guessed at.
 *
 * @example
 * ```ts
 * amrClaim(["pwd", "rc"]); // ["pwd", "otp", "mfa"]
 * ```
 */
export function amrClaim(methods: readonly AuthMethod[]): AmrValue[] {
  const values: AmrValue[] = [];
  for (const method of methods) {
    const value = Object.hasOwn(claimValueOf, method) ? claimValueOf[method] : undefined;
    if (value !== undefined && !values.includes(value)) values.push(value);
  }
  const { first, second } = factorsProven(methods);
  if (first && second && !values.includes("mfa")) values.push("mfa");
  return values;
}

/**
 * When a session's methods were last proven, epoch milliseconds: its `authTime`, or its
 * `createdAt` for a session a store wrote before sessions had one (the sign-in that began it).
 */
export function authTimeOf(session: Pick<SessionRecord, "authTime" | "createdAt">): number {
  return Number.isFinite(session.authTime) ? session.authTime : session.createdAt;
}
