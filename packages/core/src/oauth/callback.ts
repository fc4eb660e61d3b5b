import type * as OAuth from "oauth4webapi";
import type { Auth } from "../auth.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { oauth4webapi } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { authorizationServerOf, requestOptions } from "./authorization-server.js";
import { type OAuthReauthentication, type OAuthState, providerNamed, verifierContext } from "./authorize.js";
import {
  type ProviderAuthentication,
  idTokenClockToleranceSeconds,
  notStated,
  readProviderAuthentication,
  signedInAfresh,
} from "./provider-authentication.js";
import type { ExternalProfile, ResolvedOAuthProvider } from "./provider-config.js";
import { ProviderRequestFailed, providerUnreachable } from "./provider-fetch.js";

/** What a verified callback yields: who the provider says the person is, how they signed in, and the kept state. */
export interface VerifiedCallback {
  provider: ResolvedOAuthProvider;
  profile: ExternalProfile;
  /** What the ID token stated of the sign-in (`auth_time`, `amr`, `acr`; STUP-5); nothing for plain OAuth 2.0. */
  authentication: ProviderAuthentication;
  returnPath: string;
  /** Set when a signed-in user began the flow to link this provider, or to re-authenticate through it. */
  userId: string | null;
  /** Set when a signed-in session began the flow to re-authenticate (STUP-5): the session and what it proved already. */
  reauthentication: OAuthReauthentication | null;
}

const refused = (message: string, cause?: unknown) => new AuthError(ErrorCode.AuthenticationFailed, message, { cause });
const badState = () => refused("The sign-in state is missing, unknown, expired or already used");

/** Whether a kept state was begun for this provider, in the browser whose binding cookie came with the callback (OA-1). */
function beganHere(kept: OAuthState, provider: ResolvedOAuthProvider, browserBinding: string | undefined): boolean {
  return (
    kept.provider === provider.name &&
    typeof browserBinding === "string" &&
    constantTimeEqual(sha256(browserBinding), kept.bindingHash)
  );
}

/** The profile a provider's claims describe, through the configured mapping or `profile` function. */
function profileOf(provider: ResolvedOAuthProvider, claims: Record<string, unknown>): ExternalProfile {
  if (provider.profile) return provider.profile(claims);
  const text = (name: string) => (typeof claims[name] === "string" ? (claims[name] as string) : undefined);
  const roles = provider.claims.roles === undefined ? undefined : claims[provider.claims.roles];
  return {
    subject: text(provider.claims.subject) ?? "",
    username: text(provider.claims.username),
    email: text(provider.claims.email),
    emailVerified: claims[provider.claims.emailVerified] === true,
    displayName: text(provider.claims.displayName),
    roles: Array.isArray(roles) ? roles.filter((role): role is string => typeof role === "string") : undefined,
  };
}

/**
 * Verifies a provider's callback, the protocol half of a provider sign-in: the state must have
 * been begun for this provider in this browser, checked before it is spent (OA-10), and is
 * spent once (OA-1); an `error` from the provider is answered with a fixed message, never its
 * text (OA-9); the `iss` parameter must name the expected issuer, and must be present when the
 * provider advertises it (OA-3, RFC 9207) unless the provider's `unsafeAllowMissingIss` is set
 * (OA-12); the code is exchanged with the PKCE verifier and the exact redirect URI (OA-2, OA-5);
 * the ID token's algorithm, signature (against the provider's published keys, although it came
 * straight from the token endpoint), `iss`, `aud`, `exp`, `iat` (not more than 30 seconds ahead),
 * `sub` and `nonce` are checked, and the user-info `sub` must equal the ID token's (OA-6). The ID
 * token's `auth_time`, `amr` and `acr` are read, and refused when malformed (STUP-5, see
 * `readProviderAuthentication`); for a re-authentication, which asked for `max_age=0`, an
 * `auth_time` that is missing or more than 30 seconds old is refused (OpenID Connect Core
 * §3.1.3.7 step 13): the provider answered with a session of its own from before.
 *
 * @throws {AuthError} 40100 refused, 40400 unknown provider, 50300 provider unreachable.
 */
export async function verifyOAuthCallback(
  auth: Auth,
  input: { provider: string; query: string; browserBinding: string | undefined },
): Promise<VerifiedCallback> {
  const provider = providerNamed(auth, input.provider);
  const params = new URLSearchParams(input.query);
  const state = params.get("state");
  if (!state) throw badState();
  const stateHash = sha256(state);
  // OA-10: the browser and the provider are checked before the state is spent, so a leaked
  // state in another browser cannot void the flow of the one that began it.
  const found = await auth.storage.challenges.find(stateHash, "oauth_state", auth.now());
  if (!found || !beganHere(found.data as unknown as OAuthState, provider, input.browserBinding)) throw badState();
  const record = await auth.storage.challenges.consume(stateHash, "oauth_state", auth.now());
  if (!record) throw badState();
  const kept = record.data as unknown as OAuthState;
  if (params.has("error")) throw refused("The provider did not sign you in");

  const server = await authorizationServerOf(auth, provider);
  const oauth = await oauth4webapi();
  if (server.issuer !== kept.issuer) throw refused("The provider's issuer changed during the sign-in");
  const client: OAuth.Client = { client_id: provider.clientId };
  let validated: URLSearchParams;
  try {
    // OA-12: with the provider's unsafe option, an absent `iss` is let through as if the provider
    // did not advertise it (its redirect URI being its own); one that is present is still checked.
    const expected =
      provider.allowMissingIss && !params.has("iss")
        ? { ...server, authorization_response_iss_parameter_supported: false }
        : server;
    validated = oauth.validateAuthResponse(expected, client, params, state);
  } catch (cause) {
    throw refused("The provider's answer was not valid", cause);
  }
  const verifier = auth.secretBox.open(kept.sealedVerifier, verifierContext(stateHash)).toString("utf8");
  const clientAuth = provider.clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(provider.clientSecret);
  let response: Response;
  try {
    response = await oauth.authorizationCodeGrantRequest(
      server,
      client,
      clientAuth,
      validated,
      provider.redirectUri,
      verifier,
      requestOptions(oauth, provider),
    );
  } catch (cause) {
    throw providerUnreachable(cause);
  }
  let claims: Record<string, unknown>;
  let authentication = notStated;
  try {
    const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, {
      expectedNonce: kept.nonce ?? oauth.expectNoNonce,
      requireIdToken: provider.kind === "oidc",
    });
    if (provider.kind === "oauth2") {
      const headers = new Headers({ accept: "application/json" });
      const url = provider.userInfoUrl as URL;
      const answer = await oauth.protectedResourceRequest(
        tokens.access_token,
        "GET",
        url,
        headers,
        null,
        requestOptions(oauth, provider),
      );
      if (!answer.ok) throw new Error(`user-info answered ${answer.status}`);
      claims = (await answer.json()) as Record<string, unknown>;
    } else {
      const idToken = oauth.getValidatedIdTokenClaims(tokens) as OAuth.IDToken;
      // oauth4webapi checks that iat is a number, not that it is past (OIDC Core 3.1.3.7 step 10).
      if (idToken.iat > auth.now() / 1000 + idTokenClockToleranceSeconds) throw new Error("the ID token's iat is in the future");
      authentication = readProviderAuthentication(idToken, auth.now());
      await oauth.validateApplicationLevelSignature(server, response, requestOptions(oauth, provider));
      claims = { ...idToken };
      if (server.userinfo_endpoint) {
        const answer = await oauth.userInfoRequest(server, client, tokens.access_token, requestOptions(oauth, provider));
        const info = await oauth.processUserInfoResponse(server, client, idToken.sub, answer);
        claims = { ...info, ...claims };
      }
    }
  } catch (cause) {
    // A JWKS or user-info request that failed or went over a limit (OA-11) is the provider's
    // trouble, not a refusal.
    throw cause instanceof ProviderRequestFailed
      ? providerUnreachable(cause)
      : refused("The provider's answer was not valid", cause);
  }
  const reauthentication = kept.reauthentication ?? null;
  if (reauthentication !== null && !signedInAfresh(authentication, auth.now())) {
    throw refused("The provider did not sign you in again: it answered with an earlier sign-in");
  }
  const profile = profileOf(provider, claims);
  if (typeof profile?.subject !== "string" || profile.subject === "") throw refused("The provider did not say who you are");
  return { provider, profile, authentication, returnPath: kept.returnPath, userId: record.userId, reauthentication };
}
