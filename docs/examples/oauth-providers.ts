import type { ExternalProfile, OAuthConfig } from "@portcullis/core";

/**
 * The profile of a GitHub-like user-info answer (`GET /user`): a numeric `id` that never
 * changes (the subject), a `login` the user may rename (the username), `name`, and an `email`
 * that may be null. Such an answer does not say whether the email is verified, so it is never
 * marked verified and never links accounts by email.
 */
export function forgeProfile(info: Record<string, unknown>): ExternalProfile {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  return {
    subject: typeof info.id === "number" || typeof info.id === "string" ? String(info.id) : "",
    username: text(info.login),
    displayName: text(info.name),
    email: text(info.email),
    emailVerified: false,
  };
}

/** Where the two providers of {@link oauthProviders} are, and this app's client at each. */
export interface ProviderSettings {
  /** This app's origin, e.g. `https://app.example.com`: the redirect URIs are pages of it. */
  appOrigin: string;
  corp: { issuer: string; clientId: string; clientSecret?: string };
  forge: { baseUrl: string; apiUrl: string; clientId: string; clientSecret: string };
}

/**
 * The `oauth` setting for an OpenID Connect provider found by discovery (`corp`) and a plain
 * OAuth 2.0 provider with a GitHub-like API (`forge`). Each redirect URI is the app's page
 * `/oauth/<name>`, which relays its query to `GET /api/v1/auth/oauth/<name>/callback`.
 *
 * @example
 * ```ts
 * const auth = createAuth({ ...config, oauth: oauthProviders(settingsFromEnvironment) });
 * ```
 */
export function oauthProviders(settings: ProviderSettings): OAuthConfig {
  return {
    providers: {
      corp: {
        issuer: settings.corp.issuer,
        clientId: settings.corp.clientId,
        clientSecret: settings.corp.clientSecret,
        redirectUri: `${settings.appOrigin}/oauth/corp`,
        displayName: "Corp ID",
        provisioning: { defaultRoles: ["member"] },
      },
      forge: {
        authorizationUrl: `${settings.forge.baseUrl}/login/oauth/authorize`,
        tokenUrl: `${settings.forge.baseUrl}/login/oauth/access_token`,
        userInfoUrl: `${settings.forge.apiUrl}/user`,
        clientId: settings.forge.clientId,
        clientSecret: settings.forge.clientSecret,
        redirectUri: `${settings.appOrigin}/oauth/forge`,
        scopes: ["read:user"],
        displayName: "Forge",
        profile: forgeProfile,
      },
    },
  };
}
