import { fail } from "../config-values.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { scopePattern } from "./api-key-config.js";
import type { ApiKeyContext } from "./verify-api-key.js";

/**
 * Which credentials a route of yours accepts, and the scopes a key must hold (AK-2): options
 * `requireAuth` takes in every adapter. Without either, only access tokens are accepted, exactly as
 * before API keys existed (no extra step).
 */
export interface CredentialOptions {
  /**
   * Scopes an API key must all hold (40300 "missing scope" otherwise). Giving them accepts keys
   * (`credentials` defaults to `"any"`). An access token, a person's own session, passes this
   * check: scopes limit what a key may do, not what its user may. An empty list asks none.
   */
  scopes?: readonly string[];
  /**
   * `"access_token"` (the default without `scopes`): access tokens only. `"any"` (the default with
   * `scopes`): a bearer value starting `pc_` is verified as an API key (with `apiKeys.enabled`;
   * otherwise it is an invalid token, 40101), any other as an access token. `"api_key"`: keys only,
   * an access token is refused (40300).
   */
  credentials?: "access_token" | "api_key" | "any";
}

/** {@link CredentialOptions} checked: whether access tokens pass, and the scopes a key must hold. */
export interface CredentialRequirement {
  /** False with `credentials: "api_key"`. */
  readonly accessTokens: boolean;
  readonly scopes: readonly string[];
}

const credentialKinds = ["access_token", "api_key", "any"];

const resolved = new WeakMap<object, CredentialRequirement | null>();

/**
 * The credential requirement of `requireAuth` options, or null when they accept access tokens only
 * (no `scopes`, no `credentials` or `credentials: "access_token"`). Checked once per options object
 * (the adapters call it when `requireAuth` is called, so a mistake fails at start-up).
 *
 * `maxAge`, `secondFactor`, `amr` and `org` ask about a sign-in, which a key never had: beside
 * `credentials: "api_key"` no request could pass, so that is a `TypeError`; beside `"any"` a key is
 * refused with 40300 at the request.
 *
 * @throws {TypeError} scopes that are not a list of scopes, an unknown `credentials`, `scopes` with
 *   `credentials: "access_token"`, step-up or `org` options with `credentials: "api_key"`.
 * @example
 * ```ts
 * credentialRequirementOf({ scopes: ["reports:read"] }); // { accessTokens: true, scopes: ["reports:read"] }
 * ```
 */
export function credentialRequirementOf(options: CredentialOptions & SignInOptionNames): CredentialRequirement | null {
  const known = resolved.get(options);
  if (known !== undefined) return known;
  const requirement = resolveRequirement(options);
  resolved.set(options, requirement);
  return requirement;
}

/** The options that ask about a sign-in: only their presence matters here. */
interface SignInOptionNames {
  maxAge?: unknown;
  secondFactor?: unknown;
  amr?: unknown;
  org?: unknown;
}

function resolveRequirement(options: CredentialOptions & SignInOptionNames): CredentialRequirement | null {
  const { scopes, credentials } = options;
  if (credentials !== undefined && !credentialKinds.includes(credentials)) {
    fail(`requireAuth's credentials must be "access_token", "api_key" or "any"; got ${JSON.stringify(credentials)}`);
  }
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === "string" && scopePattern.test(scope)))
  ) {
    fail(`requireAuth's scopes must be a list of scopes of 1 to 128 visible ASCII characters; got ${JSON.stringify(scopes)}`);
  }
  const kind = credentials ?? (scopes === undefined ? "access_token" : "any");
  if (kind === "access_token") {
    if (scopes !== undefined) fail('requireAuth\'s scopes are for API keys: they cannot go with credentials: "access_token"');
    return null;
  }
  const asksSignIn = ["maxAge", "secondFactor", "amr", "org"].find(
    (name) => options[name as keyof SignInOptionNames] !== undefined && options[name as keyof SignInOptionNames] !== false,
  );
  if (kind === "api_key" && asksSignIn !== undefined) {
    fail(
      `requireAuth's ${asksSignIn} asks about a sign-in, which an API key never had: it cannot go with credentials: "api_key"`,
    );
  }
  return Object.freeze({ accessTokens: kind === "any", scopes: Object.freeze([...(scopes ?? [])]) });
}

/**
 * Lets a key through when it holds every scope asked and the route asks nothing of a sign-in.
 *
 * @throws {AuthError} 40300 a scope missing, or a step-up or organization requirement (a key has no sign-in).
 */
export function requireKeyAllowed(key: ApiKeyContext, requirement: CredentialRequirement, asksSignIn: boolean): void {
  if (asksSignIn) {
    throw new AuthError(ErrorCode.Forbidden, "This route asks for a signed-in session: an API key cannot use it");
  }
  if (!requirement.scopes.every((scope) => key.scopes.includes(scope))) {
    throw new AuthError(ErrorCode.Forbidden, "A scope this route requires is missing");
  }
}
