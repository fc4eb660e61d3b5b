import { type Duration, durationSeconds, fail } from "../config-values.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AccessContext } from "../tokens/access-token.js";
import type { AmrValue } from "./amr.js";

/**
 * What a route of yours may ask of the session beyond a live access token (STUP-2): the options
 * `requireAuth` takes in every adapter besides `roles`. A session that falls short is answered
 * 40104 (HTTP 401) with `data.required` naming what is missing; the user re-authenticates
 * (`POST /auth/reauthenticate…`) and the request is sent again.
 */
export interface StepUpOptions {
  /**
   * The session's sign-in, or its latest re-authentication, must be at most this old (the access
   * token's `auth_time`): whole seconds or a string such as `"5m"`. Answered with
   * `required.maxAge` in seconds.
   */
  maxAge?: Duration;
  /**
   * The session must have proven a second factor (its `amr` holds `mfa`: a password and a TOTP
   * code, or a user-verified passkey). A user without one cannot step up: tell them to enrol.
   */
  secondFactor?: boolean;
  /** RFC 8176 values the session's `amr` must all hold, such as `["hwk"]` for a device-bound key. Missing ones are named in `required.amr`. */
  amr?: readonly AmrValue[];
}

/** {@link StepUpOptions} checked: the age in seconds and every `amr` value asked, `mfa` included for `secondFactor`. */
export interface StepUpRequirement {
  maxAgeSeconds?: number;
  amr: readonly AmrValue[];
}

/** What a session lacks for a route (the `data.required` of a 40104): the route's `maxAge` in seconds when it is older, and the `amr` values it misses. */
export interface StepUpShortfall {
  maxAge?: number;
  amr?: AmrValue[];
}

const amrValues: readonly AmrValue[] = ["pwd", "otp", "hwk", "swk", "user", "fed", "mfa", "email"];

const resolved = new WeakMap<object, StepUpRequirement | null>();

/**
 * The requirement of `requireAuth` options, or null when they ask nothing beyond a live token.
 * Checked once per options object (the adapters call it when `requireAuth` is called, so a
 * mistake fails at startup); other keys (`roles`, an adapter's own) are not its business.
 *
 * @throws {TypeError} a `maxAge` that is no positive duration, a `secondFactor` that is no boolean, an `amr` value RFC 8176 does not define here.
 * @example
 * ```ts
 * stepUpRequirementOf({ maxAge: "5m", secondFactor: true }); // { maxAgeSeconds: 300, amr: ["mfa"] }
 * ```
 */
export function stepUpRequirementOf(options: StepUpOptions): StepUpRequirement | null {
  const known = resolved.get(options);
  if (known !== undefined) return known;
  const requirement = resolveRequirement(options);
  resolved.set(options, requirement);
  return requirement;
}

function resolveRequirement({ maxAge, secondFactor, amr }: StepUpOptions): StepUpRequirement | null {
  if (secondFactor !== undefined && typeof secondFactor !== "boolean") {
    fail(`requireAuth's secondFactor must be true or false; got ${JSON.stringify(secondFactor)}`);
  }
  const asked = amr === undefined ? [] : checkedAmr(amr);
  if (secondFactor && !asked.includes("mfa")) asked.push("mfa");
  if (maxAge === undefined && asked.length === 0) return null;
  const requirement: StepUpRequirement = { amr: asked };
  if (maxAge !== undefined) requirement.maxAgeSeconds = durationSeconds(maxAge, "requireAuth's maxAge");
  return requirement;
}

function checkedAmr(amr: unknown): AmrValue[] {
  const list = `requireAuth's amr must be a list of RFC 8176 values, of ${amrValues.join(", ")}`;
  if (!Array.isArray(amr)) return fail(`${list}; got ${JSON.stringify(amr)}`);
  const asked: AmrValue[] = [];
  for (const value of amr) {
    if (!amrValues.includes(value)) fail(`${list}; got ${JSON.stringify(value)}`);
    if (!asked.includes(value)) asked.push(value);
  }
  return asked;
}

/**
 * What a session (its access token's `authTime` in seconds and `amr`) lacks for a requirement at
 * `now` (epoch milliseconds), or null when it has it all: a pure decision (STUP-2). A sign-in
 * older than `maxAgeSeconds` misses `maxAge` (as OpenID Connect's `max_age`, an age equal to it
 * passes); each value of `amr` the session's lacks is named.
 */
export function stepUpShortfall(
  session: Pick<AccessContext, "authTime" | "amr">,
  requirement: StepUpRequirement,
  now: number,
): StepUpShortfall | null {
  const shortfall: StepUpShortfall = {};
  const { maxAgeSeconds } = requirement;
  if (maxAgeSeconds !== undefined && Math.floor(now / 1000) - session.authTime > maxAgeSeconds) shortfall.maxAge = maxAgeSeconds;
  const missing = requirement.amr.filter((value) => !session.amr.includes(value));
  if (missing.length > 0) shortfall.amr = missing;
  return shortfall.maxAge === undefined && shortfall.amr === undefined ? null : shortfall;
}

/**
 * Lets a session through when it meets the requirement; otherwise throws 40104 with
 * `data.required` (see {@link stepUpShortfall}).
 *
 * @throws {AuthError} 40104 step-up required.
 */
export function requireStepUp(
  session: Pick<AccessContext, "authTime" | "amr">,
  requirement: StepUpRequirement,
  now: number,
): void {
  const required = stepUpShortfall(session, requirement, now);
  if (required !== null) {
    throw new AuthError(ErrorCode.StepUpRequired, undefined, { data: { required } });
  }
}
