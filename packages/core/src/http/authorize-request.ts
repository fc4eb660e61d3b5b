import { looksLikeApiKey } from "../api-keys/api-key-format.js";
import {
  type CredentialOptions,
  type CredentialRequirement,
  credentialRequirementOf,
  requireMachineAllowed,
} from "../api-keys/credential-requirement.js";
import { type ApiKeyContext, verifyApiKey } from "../api-keys/verify-api-key.js";
import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { type AccessContext, verifyAccessToken, withCurrentState } from "../flows/verify-access-token.js";
import {
  type OrganizationOptions,
  type OrganizationRequirement,
  organizationRequirementOf,
  requireOrganization,
} from "../organizations/organization-requirement.js";
import { type ServiceAccountContext, looksLikeServiceToken, verifyServiceToken } from "../service-accounts/service-token.js";
import { type StepUpOptions, type StepUpRequirement, requireStepUp, stepUpRequirementOf } from "../step-up/requirement.js";
import { telemetryOf } from "../telemetry/telemetry.js";
import { requireTls } from "./require-tls.js";
import type { HttpRequest } from "./types.js";

/** Who a request's credential speaks for on a route that accepts more than access tokens. */
export type CredentialContext = AccessContext | ApiKeyContext | ServiceAccountContext;

/**
 * Extracts the bearer token of an `Authorization` header (AT-6): the only place an access
 * token is read from, never a query string.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
  return match ? (match[1] as string) : undefined;
}

/**
 * The access of a request's bearer token, the role check, the organization check (OR-7), then the
 * step-up check (STUP-2). A missing token throws at once; without roles, organization or step-up
 * the token check's own promise is handed back, with no further hop.
 */
export function verifyBearer(
  auth: Auth,
  authorization: string | undefined,
  roles: readonly string[] | undefined,
  stepUp: StepUpRequirement | null = null,
  org: OrganizationRequirement | null = null,
): Promise<AccessContext> {
  const verified = verifyPresentedToken(auth, authorization);
  if (!roles && stepUp === null && org === null) return verified;
  return verified.then((access) => {
    if (roles && !roles.some((role) => access.roles.includes(role))) {
      throw new AuthError(ErrorCode.Forbidden, "A role this route requires is missing");
    }
    if (org !== null) requireOrganization(access, org, auth.config.organizations.roles);
    if (stepUp !== null) requireStepUp(access, stepUp, auth.now());
    return access;
  });
}

/**
 * The options of {@link authorizeRequest}: the roles, the active organization and the roles in it
 * (OR-7), what the route asks of the session's sign-in (STUP-2), and whether API keys are accepted
 * and the scopes they must hold (AK-2).
 */
export interface AuthorizeOptions extends StepUpOptions, OrganizationOptions, CredentialOptions {
  /**
   * The user must hold at least one of these roles (40300 otherwise); an empty list lets no one
   * through. For an API key, the roles its user holds now.
   */
  roles?: readonly string[];
}

/**
 * The credential of a request's bearer value where a route accepts more than access tokens (AK-2,
 * SA-4): a value starting `pc_` is verified as an API key, a service account's token (its
 * `client_id` and no `sid`) as one where the route accepts them, any other as a person's access
 * token; a kind the route does not take is refused (40300 for access tokens and keys it does not
 * name, an invalid token for a service token where none are taken). Then the roles, and for a key
 * or a service account its scopes and no sign-in requirement, for an access token the organization
 * and step-up checks.
 */
function verifyCredential(
  auth: Auth,
  authorization: string | undefined,
  roles: readonly string[] | undefined,
  stepUp: StepUpRequirement | null,
  org: OrganizationRequirement | null,
  credential: CredentialRequirement,
): Promise<CredentialContext> {
  const token = bearerToken(authorization);
  if (!token) throw new AuthError(ErrorCode.InvalidToken, "A bearer access token or API key is required");
  const asksSignIn = stepUp !== null || org !== null;
  let machine: Promise<ApiKeyContext | ServiceAccountContext>;
  if (looksLikeApiKey(token)) {
    if (!credential.apiKeys) throw new AuthError(ErrorCode.Forbidden, "This route does not accept API keys");
    machine = verifyApiKey(auth, { key: token });
  } else if (credential.serviceAccounts && looksLikeServiceToken(token)) {
    machine = verifyServiceToken(auth, token);
  } else {
    if (!credential.accessTokens) {
      throw new AuthError(
        ErrorCode.Forbidden,
        `This route accepts only ${credential.serviceAccounts ? "machine credentials" : "API keys"}`,
      );
    }
    return verifyBearer(auth, authorization, roles, stepUp, org);
  }
  return machine.then((context) => {
    if (roles && !roles.some((role) => context.roles.includes(role))) {
      throw new AuthError(ErrorCode.Forbidden, "A role this route requires is missing");
    }
    requireMachineAllowed(context, credential, asksSignIn);
    return context;
  });
}

const bearerPrefix = "Bearer ";

/**
 * The token check of an `Authorization` header. A header of exactly `Bearer <token>` whose token
 * the verified-token cache holds (by its whole text) goes straight to the state check: that text
 * passed {@link bearerToken} when it was first verified, so its syntax check is not run again.
 * Any other header is parsed by {@link bearerToken} first.
 */
function verifyPresentedToken(auth: Auth, authorization: string | undefined): Promise<AccessContext> {
  if (authorization?.startsWith(bearerPrefix)) {
    const now = auth.now();
    const known = auth.verifiedTokens.get(authorization.slice(bearerPrefix.length), now);
    if (known !== undefined) return withCurrentState(auth, known, now);
  }
  const token = bearerToken(authorization);
  if (!token) throw new AuthError(ErrorCode.InvalidToken, "A bearer access token is required");
  return verifyAccessToken(auth, { token });
}

/**
 * Lets a request through only over TLS (HTTP-7, see `http.unsafeAllowPlainHttp` for the
 * exceptions) with a live bearer token in its `Authorization` header (AT-6), when `roles` is
 * given for a user holding at least one of them (so an empty list lets no one through), with
 * `org` for a token carrying an active organization (and with `org.roles`, one of those roles
 * there; OR-7), and when `maxAge`, `secondFactor` or `amr` is given for a session whose sign-in or
 * latest re-authentication meets them (STUP-2, see {@link StepUpOptions}). With `scopes` or
 * `credentials` it accepts API keys too (AK-2, see {@link CredentialOptions}): a key holding every
 * scope asked, refused (40300) where a sign-in is asked (`maxAge`, `secondFactor`, `amr`, `org`); it
 * then answers an {@link ApiKeyContext} (`kind: "api_key"`). What `requireAuth` in each adapter
 * calls; the TLS check runs before the header is read.
 *
 * @param request The request's headers, socket peer address and whether its connection is TLS.
 * @throws {AuthError} 40300 plain HTTP, 40101 missing or invalid token or key, 40300 none of the roles,
 *   40300 no active organization or none of its roles, a scope missing, a key where a sign-in is
 *   asked or an access token where only keys are, 40104 step-up required (`data.required`), 42900 a
 *   key past its rate limit, `TypeError` bad step-up, `org`, `scopes` or `credentials` options.
 *
 * @example
 * ```ts
 * const access = await authorizeRequest(auth, {
 *   header: (name) => req.headers[name] as string | undefined,
 *   peerAddress: req.socket.remoteAddress,
 *   secure: (req.socket as TLSSocket).encrypted === true,
 * }, { roles: ["admin"] });
 * ```
 */
export function authorizeRequest(
  auth: Auth,
  request: Pick<HttpRequest, "header" | "peerAddress" | "secure">,
  options?: AuthorizeOptions & AccessTokensOnly,
): Promise<AccessContext>;
export function authorizeRequest(
  auth: Auth,
  request: Pick<HttpRequest, "header" | "peerAddress" | "secure">,
  options: AuthorizeOptions & WithoutServiceAccounts,
): Promise<AccessContext | ApiKeyContext>;
export function authorizeRequest(
  auth: Auth,
  request: Pick<HttpRequest, "header" | "peerAddress" | "secure">,
  options: AuthorizeOptions,
): Promise<CredentialContext>;
export function authorizeRequest(
  auth: Auth,
  request: Pick<HttpRequest, "header" | "peerAddress" | "secure">,
  options: AuthorizeOptions = {},
): Promise<CredentialContext> {
  try {
    const stepUp = stepUpRequirementOf(options);
    const org = options.org === undefined ? null : organizationRequirementOf(options);
    const credential =
      options.scopes === undefined && options.credentials === undefined ? null : credentialRequirementOf(options);
    const verify = (): Promise<CredentialContext> => {
      requireTls(auth, request);
      const authorization = request.header("authorization");
      return credential === null
        ? verifyBearer(auth, authorization, options.roles, stepUp, org)
        : verifyCredential(auth, authorization, options.roles, stepUp, org, credential);
    };
    const telemetry = telemetryOf(auth);
    return telemetry === null ? verify() : telemetry.traceAuthorize(verify);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * `requireAuth` options that accept access tokens only (no `scopes`, `credentials` absent or
 * `"access_token"`): the request's auth is then an {@link AccessContext}; any other options may
 * give an {@link ApiKeyContext} too.
 */
export interface AccessTokensOnly {
  scopes?: undefined;
  credentials?: "access_token" | undefined;
}

/**
 * `requireAuth` options whose `credentials` do not name `"service_account"` (one kind, `"any"`, or
 * absent): the request's auth is then an {@link AccessContext} or an {@link ApiKeyContext}; options
 * naming service accounts (`credentials: "service_account"`, or a list) may give a
 * {@link ServiceAccountContext} too.
 */
export interface WithoutServiceAccounts {
  credentials?: "access_token" | "api_key" | "any" | undefined;
}
