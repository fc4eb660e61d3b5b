import { fail } from "../config-values.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ServiceAccountContext } from "../service-accounts/service-token.js";
import { scopePattern } from "./api-key-config.js";
import type { ApiKeyContext } from "./verify-api-key.js";

/** A kind of credential a route may accept: a person's access token, an API key, a service account's token. */
export type CredentialKind = "access_token" | "api_key" | "service_account";

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
   * `scopes`): a person's access token or an API key: a bearer value starting `pc_` is verified as
   * an API key (with `apiKeys.enabled`; otherwise it is an invalid token, 40101), any other as an
   * access token. `"api_key"`: keys only, an access token is refused (40300). `"service_account"`:
   * service accounts' tokens only (SA-4). A list names several kinds:
   * `["access_token", "service_account"]`. `"any"` never includes service accounts, which act for
   * no user: a route takes them only where it names them, so no handler written for a user meets one.
   */
  credentials?: CredentialKind | "any" | readonly CredentialKind[];
}

/** {@link CredentialOptions} checked: which kinds of credential pass, and the scopes a key or service account must hold. */
export interface CredentialRequirement {
  readonly accessTokens: boolean;
  readonly apiKeys: boolean;
  readonly serviceAccounts: boolean;
  readonly scopes: readonly string[];
}

const credentialKinds: readonly string[] = ["access_token", "api_key", "service_account"];

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

/** The kinds `credentials` names, or a `TypeError`. */
function kindsOf(credentials: CredentialOptions["credentials"], scopes: unknown): Set<CredentialKind> {
  const named = credentials ?? (scopes === undefined ? "access_token" : "any");
  const list: readonly unknown[] = named === "any" ? ["access_token", "api_key"] : Array.isArray(named) ? named : [named];
  if (list.length === 0 || !list.every((kind) => typeof kind === "string" && credentialKinds.includes(kind))) {
    fail(
      `requireAuth's credentials must be "access_token", "api_key", "service_account", "any" or a non-empty list of the first three; got ${JSON.stringify(credentials)}`,
    );
  }
  return new Set(list as CredentialKind[]);
}

function resolveRequirement(options: CredentialOptions & SignInOptionNames): CredentialRequirement | null {
  const { scopes, credentials } = options;
  const kinds = kindsOf(credentials, scopes);
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === "string" && scopePattern.test(scope)))
  ) {
    fail(`requireAuth's scopes must be a list of scopes of 1 to 128 visible ASCII characters; got ${JSON.stringify(scopes)}`);
  }
  if (kinds.size === 1 && kinds.has("access_token")) {
    if (scopes !== undefined) {
      fail('requireAuth\'s scopes are for API keys and service accounts: they cannot go with credentials: "access_token"');
    }
    return null;
  }
  const asksSignIn = ["maxAge", "secondFactor", "amr", "org"].find(
    (name) => options[name as keyof SignInOptionNames] !== undefined && options[name as keyof SignInOptionNames] !== false,
  );
  if (!kinds.has("access_token") && asksSignIn !== undefined) {
    fail(
      `requireAuth's ${asksSignIn} asks about a sign-in, which an API key or a service account never had: it needs credentials that accept access tokens`,
    );
  }
  return Object.freeze({
    accessTokens: kinds.has("access_token"),
    apiKeys: kinds.has("api_key"),
    serviceAccounts: kinds.has("service_account"),
    scopes: Object.freeze([...(scopes ?? [])]),
  });
}

/**
 * Lets an API key or a service account's token through when it holds every scope asked and the
 * route asks nothing of a sign-in.
 *
 * @throws {AuthError} 40300 a scope missing, or a step-up or organization requirement (no sign-in is behind either).
 */
export function requireMachineAllowed(
  context: ApiKeyContext | ServiceAccountContext,
  requirement: CredentialRequirement,
  asksSignIn: boolean,
): void {
  if (asksSignIn) {
    const what = context.kind === "api_key" ? "an API key" : "a service account";
    throw new AuthError(ErrorCode.Forbidden, `This route asks for a signed-in session: ${what} cannot use it`);
  }
  if (!requirement.scopes.every((scope) => context.scopes.includes(scope))) {
    throw new AuthError(ErrorCode.Forbidden, "A scope this route requires is missing");
  }
}
