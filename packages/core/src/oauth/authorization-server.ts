import type * as OAuth from "oauth4webapi";
import type { Auth } from "../auth.js";
import { oauth4webapi } from "../dependencies.js";
import { reportCheckFailure } from "../diagnostics/check-failures.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ResolvedOAuthProvider } from "./provider-config.js";
import { boundedFetch, providerUnreachable } from "./provider-fetch.js";

/** How long a discovery document is kept before it is fetched again. */
const discoveryCacheMs = 60 * 60 * 1000;

const discovered = new WeakMap<Auth, Map<string, { server: OAuth.AuthorizationServer; fetchedAt: number }>>();

/**
 * The options every request to a provider carries: the unsafe http allowance, and the fetch that
 * holds each request to the provider's answer limits (OA-11: size and time).
 */
export function requestOptions(oauth: typeof OAuth, provider: ResolvedOAuthProvider) {
  return {
    [oauth.allowInsecureRequests]: provider.allowHttpLoopback,
    [oauth.customFetch]: (url: string, init: RequestInit) => boundedFetch(url, init, provider.answerLimits),
  };
}

/** The issuer a discovery document named when oauth4webapi refused it for naming another than the one asked for. */
function issuerNamedInstead(oauth: typeof OAuth, error: unknown): string | undefined {
  if (!(error instanceof oauth.OperationProcessingError) || error.code !== oauth.JSON_ATTRIBUTE_COMPARISON) return undefined;
  const detail = error.cause as { attribute?: unknown; body?: { issuer?: unknown } } | undefined;
  return detail?.attribute === "issuer" && typeof detail.body?.issuer === "string" ? detail.body.issuer : undefined;
}

/** OA-4's refusal of a discovery document naming another issuer: 50300, explained to the operator. */
function issuerMismatch(auth: Auth, provider: ResolvedOAuthProvider, named: string, cause?: unknown): AuthError {
  reportCheckFailure(auth, { check: "oauth_issuer", expected: [String(provider.issuerIdentifier)], received: named });
  return new AuthError(ErrorCode.Unavailable, "The provider's discovery document names another issuer than the configured one", {
    cause,
  });
}

/**
 * The provider's endpoints: for OpenID Connect from its discovery document, whose `issuer` must
 * equal the configured one character for character (OA-4), cached for an hour per auth instance; for plain
 * OAuth 2.0 from the configuration alone. Endpoints never come from anywhere else.
 *
 * @throws {AuthError} 50300 when the provider cannot be reached, answers over the limits
 * (OA-11) or its document is not valid (the cause is kept for `onInternalError`).
 */
export async function authorizationServerOf(auth: Auth, provider: ResolvedOAuthProvider): Promise<OAuth.AuthorizationServer> {
  if (provider.kind === "oauth2") {
    return {
      issuer: (provider.authorizationUrl as URL).origin,
      authorization_endpoint: (provider.authorizationUrl as URL).href,
      token_endpoint: (provider.tokenUrl as URL).href,
      userinfo_endpoint: (provider.userInfoUrl as URL).href,
    };
  }
  const cache = discovered.get(auth) ?? new Map();
  discovered.set(auth, cache);
  const cached = cache.get(provider.name);
  const now = auth.now();
  if (cached && now - cached.fetchedAt >= 0 && now - cached.fetchedAt < discoveryCacheMs) return cached.server;
  const issuer = provider.issuer as URL;
  const oauth = await oauth4webapi();
  let server: OAuth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuer, { ...requestOptions(oauth, provider), algorithm: "oidc" });
    server = await oauth.processDiscoveryResponse(issuer, response);
  } catch (cause) {
    const named = issuerNamedInstead(oauth, cause);
    throw named === undefined ? providerUnreachable(cause) : issuerMismatch(auth, provider, named, cause);
  }
  if (server.issuer !== provider.issuerIdentifier) throw issuerMismatch(auth, provider, server.issuer);
  cache.set(provider.name, { server, fetchedAt: now });
  return server;
}
