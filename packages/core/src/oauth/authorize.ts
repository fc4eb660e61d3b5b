import type { Auth } from "../auth.js";
import { opaqueToken } from "../crypto/ids.js";
import { base64url, sha256 } from "../crypto/random.js";
import { oauth4webapi } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { sweepNowAndThen } from "../storage/sweep.js";
import type { AuthMethod } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { authorizationServerOf } from "./authorization-server.js";
import type { ResolvedOAuthProvider } from "./provider-config.js";
import { safeReturnPath } from "./return-path.js";

/** How long a begun provider sign-in may be finished (OA-1: at most 10 minutes). */
export const oauthStateTtlMs = 10 * 60 * 1000;

/** What an authorization keeps in `ChallengeStore` under the SHA-256 of its state (OA-1). */
export interface OAuthState {
  provider: string;
  /** The issuer the authorization response and the ID token must name (OA-3, OA-6). */
  issuer: string;
  /** The PKCE verifier, sealed with the encryption key (never stored in plain text). */
  sealedVerifier: { keyId: string; sealed: string };
  /** OpenID Connect only. */
  nonce: string | null;
  /** Where the app sends the browser afterwards (OA-8). */
  returnPath: string;
  /** SHA-256 of the value of the browser's binding cookie (OA-1). */
  bindingHash: string;
  /** Set when a signed-in session began the flow to re-authenticate through the provider (STUP-5). */
  reauthentication?: OAuthReauthentication;
}

/** What a re-authentication through a provider keeps with its state (STUP-5). */
export interface OAuthReauthentication {
  /** The session the flow raises: the one whose access token began it. */
  sessionId: string;
  /** What the request that began it proved already (`otp` for a TOTP code), added to what the provider proves. */
  proven: AuthMethod[];
}

/** The configured provider with this name, or 40400. */
export function providerNamed(auth: Auth, name: unknown): ResolvedOAuthProvider {
  const provider = auth.config.oauthProviders.get(requiredString(name, "provider"));
  if (!provider) throw new AuthError(ErrorCode.NotFound, "No such sign-in provider");
  return provider;
}

/** The associated data that ties a sealed PKCE verifier to its state. */
export function verifierContext(stateHash: string): string {
  return `portcullis oauth verifier ${stateHash}`;
}

/**
 * Begins a sign-in with a provider: a fresh state (256 bits), PKCE S256 verifier and, for
 * OpenID Connect, nonce, kept with the expected issuer and the return path in storage for 10
 * minutes (OA-1, OA-2), and a browser binding whose value the caller sets as an HttpOnly
 * cookie. Returns the provider's authorization URL, with the configured redirect URI exactly
 * (OA-5). With `ip`, the input is checked first, then one attempt is taken from that address's
 * `throttle.unauthenticatedWrites` before the provider is asked or anything is stored; every store
 * counts towards the sweep of expired rows (RL-7). With `reauthentication` (and its user as
 * `userId`), the request asks the provider to authenticate the person again: `max_age=0` and
 * `prompt=login` (OpenID Connect Core §3.1.2.1; STUP-5).
 *
 * @throws {AuthError} 40002 bad return path, 40400 unknown provider, 42900 too many from `ip`,
 * 50300 provider unreachable.
 */
export async function beginOAuthSignIn(
  auth: Auth,
  input: { provider: string; redirect?: string; userId?: string; ip?: string; reauthentication?: OAuthReauthentication },
): Promise<{ authUrl: string; browserBinding: string }> {
  const provider = providerNamed(auth, input.provider);
  const returnPath = safeReturnPath(input.redirect);
  if (input.ip !== undefined) await takeAttempt(auth, "unauthenticatedWrites", input.ip, input.ip);
  const server = await authorizationServerOf(auth, provider);
  const state = base64url(auth.randomBytes(32));
  const verifier = base64url(auth.randomBytes(32));
  const nonce = provider.kind === "oidc" ? base64url(auth.randomBytes(32)) : null;
  const binding = opaqueToken(auth);
  const stateHash = sha256(state);
  const now = auth.now();
  sweepNowAndThen(auth, now);
  const data: OAuthState = {
    provider: provider.name,
    issuer: server.issuer,
    sealedVerifier: auth.secretBox.seal(Buffer.from(verifier), verifierContext(stateHash)),
    nonce,
    returnPath,
    bindingHash: binding.hash,
    ...(input.reauthentication === undefined ? {} : { reauthentication: input.reauthentication }),
  };
  await auth.storage.challenges.put({
    id: stateHash,
    kind: "oauth_state",
    userId: input.userId ?? null,
    data: { ...data },
    attempts: 0,
    createdAt: now,
    expiresAt: now + oauthStateTtlMs,
  });
  const url = new URL(server.authorization_endpoint as string);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.clientId);
  url.searchParams.set("redirect_uri", provider.redirectUri);
  if (provider.scopes.length > 0) url.searchParams.set("scope", provider.scopes.join(" "));
  url.searchParams.set("state", state);
  const { calculatePKCECodeChallenge } = await oauth4webapi();
  url.searchParams.set("code_challenge", await calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (nonce) url.searchParams.set("nonce", nonce);
  if (input.reauthentication !== undefined) {
    // A fresh authentication, whatever session the provider holds: max_age=0 asks it to
    // authenticate again and makes auth_time required; prompt=login for providers that read only it.
    url.searchParams.set("max_age", "0");
    url.searchParams.set("prompt", "login");
  }
  return { authUrl: url.href, browserBinding: binding.value };
}
