import type { Auth } from "../auth.js";
import { beginOAuthSignIn } from "../oauth/authorize.js";
import { verifyOAuthCallback } from "../oauth/callback.js";
import { linkAndSignIn, signInWithIdentity } from "../oauth/identity-sign-in.js";
import { finishOAuthReauthentication } from "../oauth/reauthenticate.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import type { LoginResult } from "./login-result.js";

/** A provider as the sign-in page lists it: no URLs, no client, no secret. */
export interface OAuthProviderInfo {
  name: string;
  displayName: string;
}

/**
 * The configured sign-in providers (`GET /auth/oauth/providers`), in configuration order.
 *
 * @example
 * ```ts
 * for (const { name, displayName } of oauthProviders(auth)) addButton(name, displayName);
 * ```
 */
export function oauthProviders(auth: Auth): OAuthProviderInfo[] {
  return [...auth.config.oauthProviders.values()].map(({ name, displayName }) => ({ name, displayName }));
}

/** The input of {@link oauthAuthorize}. */
export interface OAuthAuthorizeInput {
  /** The provider's name, as in `oauth.providers`. */
  provider: string;
  /** Where the app sends the browser afterwards: a path of this app only (OA-8). Default `/`. */
  redirect?: string;
  /** The client address: each may begin `throttle.unauthenticatedWrites` sign-ins (default 30 a minute, 300 an hour; RL-7). */
  ip?: string;
}

/**
 * Begins a sign-in with a provider (`GET /auth/oauth/:provider/authorize`): returns the URL to
 * send the browser to, and `browserBinding`, the value of the HttpOnly cookie that ties the
 * flow to this browser (OA-1); the HTTP route sets it. The state, PKCE verifier (S256), nonce,
 * expected issuer and return path stay in storage for 10 minutes, so any instance can finish.
 * Each client address may begin at most `throttle.unauthenticatedWrites` of them (RL-7).
 *
 * @throws {AuthError} 40002 bad `redirect`, 40400 unknown provider, 42900 too many from `ip`,
 * 50300 provider unreachable.
 * @example
 * ```ts
 * const { authUrl, browserBinding } = await oauthAuthorize(auth, { provider: "corp", redirect: "/account" });
 * ```
 */
export async function oauthAuthorize(
  auth: Auth,
  input: OAuthAuthorizeInput,
): Promise<{ authUrl: string; browserBinding: string }> {
  return beginOAuthSignIn(auth, { provider: input.provider, redirect: input.redirect, ip: input.ip });
}

/** The input of {@link oauthCallback}. */
export interface OAuthCallbackInput {
  provider: string;
  /** The query string the provider sent the browser back with (`code`, `state`, `iss`, or `error`). */
  query: string;
  /** The value of the binding cookie {@link oauthAuthorize} gave this browser. */
  browserBinding: string | undefined;
  /** The client address, for events. */
  ip?: string;
  /** The request's `User-Agent`, kept with the new session (shown in the sessions list). */
  userAgent?: string;
}

/**
 * What {@link oauthCallback} answers: a login result, or for a flow begun by
 * `beginOAuthReauthentication` the token set of the new session that replaced the one it began
 * from (`reauthenticated`), and the return path the flow began with.
 */
export type OAuthCallbackResult = (LoginResult | { status: "reauthenticated"; tokens: TokenSet }) & {
  /** The same-origin path given to {@link oauthAuthorize} (`/` by default), for the page to go on to. */
  returnPath: string;
};

/**
 * Finishes a sign-in with a provider (`GET /auth/oauth/:provider/callback`): verifies the
 * callback (OA-1 … OA-6, OA-9), then signs in the account linked to (provider, subject),
 * creating it on first sign-in when provisioning is on (OA-7); or, for a flow begun by
 * `linkIdentity`, links the provider account to that user and signs them in afresh. A user with TOTP gets a
 * temporary token unless the provider is trusted for the second factor and asserted one; the
 * session's `amr` and sign-in time are what the provider's ID token stated (STUP-5). For a flow
 * begun by `beginOAuthReauthentication`, ends the session that began it and begins a new one in its
 * place instead (STUP-5, ASVS 7.2.4).
 *
 * @throws {AuthError} 40100 refused, 40101 a re-authenticated session no longer live, 40300 disabled, 40400 unknown provider, 50300 provider unreachable.
 */
export async function oauthCallback(auth: Auth, input: OAuthCallbackInput): Promise<OAuthCallbackResult> {
  const verified = await verifyOAuthCallback(auth, input);
  const { provider, profile, authentication, userId, returnPath, reauthentication } = verified;
  const client = { ip: input.ip, userAgent: input.userAgent };
  if (reauthentication !== null) {
    const tokens = await finishOAuthReauthentication(auth, { ...verified, reauthentication }, client);
    return { status: "reauthenticated", tokens, returnPath };
  }
  const result =
    userId === null
      ? await signInWithIdentity(auth, provider, profile, client, authentication)
      : await linkAndSignIn(auth, provider, profile, userId, client, authentication);
  return { ...result, returnPath };
}
