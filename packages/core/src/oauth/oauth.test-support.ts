import { type OidcTestProvider, defaultOidcRedirectUri } from "../../../../test/fixtures/oidc-provider.js";
import { type AuthOverrides, type Harness, makeAuth, makeClock } from "../flows/fixtures.test-support.js";
import { type OAuthProviderConfig, type ResolvedOAuthProvider, resolveOAuthConfig } from "./provider-config.js";

/** A test provider configured by discovery, with one of its registered clients and the default redirect URI. */
export function discoveredProvider(
  idp: OidcTestProvider,
  changes: Partial<OAuthProviderConfig> = {},
  client: "confidential" | "public" = "confidential",
): OAuthProviderConfig {
  const registered = idp.clients[client];
  return {
    issuer: idp.issuer,
    clientId: registered.clientId,
    clientSecret: registered.clientSecret,
    redirectUri: defaultOidcRedirectUri,
    ...changes,
  };
}

/** The same test provider configured as plain OAuth 2.0, by the URLs its discovery document names. */
export async function plainOAuthProvider(
  idp: OidcTestProvider,
  changes: Partial<OAuthProviderConfig> & Pick<OAuthProviderConfig, "profile">,
): Promise<OAuthProviderConfig> {
  const document = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  const { issuer: _discovered, ...client } = discoveredProvider(idp);
  return {
    ...client,
    authorizationUrl: document.authorization_endpoint,
    tokenUrl: document.token_endpoint,
    userInfoUrl: document.userinfo_endpoint,
    scopes: ["openid"],
    ...changes,
  };
}

/** A harness whose auth has these providers, on loopback (the unsafe option), its clock at the real time. */
export function authWithProviders(providers: Record<string, OAuthProviderConfig>, overrides: AuthOverrides = {}): Harness {
  return makeAuth({
    clock: makeClock(Date.now()),
    ...overrides,
    oauth: { providers, unsafeAllowHttpLoopbackProviders: true },
  });
}

/** An OIDC provider `corp` at `https://id.example.com` with these changes, resolved as `createAuth` resolves it (nothing is fetched). */
export function resolvedProvider(changes: Partial<OAuthProviderConfig> = {}): ResolvedOAuthProvider {
  const config: OAuthProviderConfig = {
    issuer: "https://id.example.com",
    clientId: "portcullis",
    redirectUri: "https://app.example.com/callback",
    ...changes,
  };
  return resolveOAuthConfig({ providers: { corp: config } }).get("corp") as ResolvedOAuthProvider;
}
