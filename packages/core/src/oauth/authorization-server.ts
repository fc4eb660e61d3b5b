import type * as OAuth from "oauth4webapi";
import type { Auth } from "../auth.js";
import { oauth4webapi } from "../dependencies.js";
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
  let server: OAuth.AuthorizationServer;
  try {
    const oauth = await oauth4webapi();
    const response = await oauth.discoveryRequest(issuer, { ...requestOptions(oauth, provider), algorithm: "oidc" });
    server = await oauth.processDiscoveryResponse(issuer, response);
  } catch (cause) {
    throw providerUnreachable(cause);
  }
  if (server.issuer !== provider.issuerIdentifier) {
    throw new AuthError(ErrorCode.Unavailable, "The provider's discovery document names another issuer than the configured one");
  }
  cache.set(provider.name, { server, fetchedAt: now });
  return server;
}
