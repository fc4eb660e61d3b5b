import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { offeredProofs, proveEveryFactor } from "../flows/reauthenticate.js";
import { decideReauthentication } from "../step-up/policy.js";
import { replaceSession } from "../step-up/reauthenticate-session.js";
import type { AuthMethod } from "../storage/types.js";
import type { TokenSet } from "../tokens/issue-tokens.js";
import type { SessionClient } from "../users/session-use.js";
import { signedInUser } from "../users/signed-in-user.js";
import { beginOAuthSignIn, providerNamed } from "./authorize.js";
import type { VerifiedCallback } from "./callback.js";
import { providerSignIn } from "./provider-authentication.js";

/** The input of {@link beginOAuthReauthentication}: the signed-in session, the provider, and a TOTP code where one is needed. */
export interface OAuthReauthenticationInput {
  userId: string;
  /** The session of the request's access token: the one the flow ends, a new one beginning in its place. */
  sessionId: string;
  /** The provider's name, as in `oauth.providers`: one linked to the user. */
  provider: string;
  /** Where the app sends the browser afterwards: a path of this app only (OA-8). Default `/`. */
  redirect?: string;
  /**
   * A current code of the user's authenticator, when TOTP is on: needed unless the provider is
   * `trustedForSecondFactor` (then its asserted second factor stands for it, STUP-3).
   */
  totpCode?: string;
  /** The client address: each may begin `throttle.unauthenticatedWrites` provider flows (RL-7). */
  ip?: string;
}

/**
 * Begins re-authenticating a signed-in session through a provider linked to the user
 * (`POST /auth/oauth/:provider/reauthenticate`; STUP-5, ASVS 7.6.1): for a user who signs in
 * through a provider (and may have no password) and is asked to step up (40104) or to prove a
 * recent sign-in. The provider is asked to authenticate the person again (`max_age=0`,
 * `prompt=login`), and the state remembers the session; the callback (`oauthCallback`) then ends
 * it and begins a new one in its place. Every factor of the account must be proven (STUP-3): with TOTP on, a `totpCode` now (checked
 * here, its attempt taken from the session's failure budget), unless the provider is trusted for
 * the second factor and asserts one at the callback.
 *
 * @throws {AuthError} 40001 a TOTP code needed, 40101 the user is gone or disabled, 40103 wrong
 *   code, 40400 unknown provider or a plain OAuth 2.0 one (no ID token to say when the person
 *   authenticated), 40900 no account of this provider is linked to the user, or a TOTP code while
 *   TOTP is off, 42900 throttled, 50300 provider unreachable.
 * @example
 * ```ts
 * const { authUrl, browserBinding } = await beginOAuthReauthentication(auth, { userId, sessionId, provider: "corp" });
 * ```
 */
export async function beginOAuthReauthentication(
  auth: Auth,
  input: OAuthReauthenticationInput,
): Promise<{ authUrl: string; browserBinding: string }> {
  const provider = providerNamed(auth, input.provider);
  if (provider.kind !== "oidc") {
    throw new AuthError(
      ErrorCode.NotFound,
      "This provider cannot re-authenticate a session: it is not an OpenID Connect provider",
    );
  }
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const offered = offeredProofs({ totpCode: input.totpCode });
  const identities = await auth.storage.identities.listByUser(user.id);
  if (!identities.some((identity) => identity.provider === provider.name)) {
    throw new AuthError(ErrorCode.Conflict, "No account of this provider is linked to yours");
  }
  let proven: AuthMethod[] = [];
  if (offered.totpCode !== undefined || !provider.trustedForSecondFactor) {
    // The provider's sign-in to come stands for the first factor; a TOTP code, if any, is checked now.
    proven = await proveEveryFactor(auth, user, sessionId, offered, await auth.storage.totp.get(user.id), ["fed"]);
  }
  return beginOAuthSignIn(auth, {
    provider: provider.name,
    redirect: input.redirect,
    userId: user.id,
    ip: input.ip,
    reauthentication: { sessionId, proven },
  });
}

/**
 * Finishes a re-authentication through a provider, once its callback was verified, the provider's
 * `auth_time` fresh included (STUP-5): the provider account must be the one linked to the user
 * who began it; the methods are the provider sign-in's (`fed`, and its asserted factors where it
 * is trusted, see `providerSignIn`) with what the beginning proved (`otp`), and must cover every
 * factor of the account (STUP-3). The session ends and a new one begins in its place, as at a
 * password re-authentication (`replaceSession`; ASVS 7.2.4): `auth_time` now, `amr` those methods,
 * the `User-Agent` and address of the callback's request; the answer is its token set.
 *
 * @throws {AuthError} 40100 another provider account, or no second factor where the account has
 *   one, 40101 the session or user is no longer live.
 */
export async function finishOAuthReauthentication(
  auth: Auth,
  verified: Pick<VerifiedCallback, "provider" | "profile" | "authentication" | "userId"> & {
    reauthentication: NonNullable<VerifiedCallback["reauthentication"]>;
  },
  client: SessionClient = {},
): Promise<TokenSet> {
  const { provider, profile, authentication, reauthentication } = verified;
  const identity = await auth.storage.identities.find(provider.name, profile.subject);
  if (identity === null || identity.userId !== verified.userId) {
    throw new AuthError(ErrorCode.AuthenticationFailed, "This is not the provider account linked to yours");
  }
  const user = await signedInUser(auth, identity.userId);
  const signIn = providerSignIn(provider, authentication, auth.now());
  const methods = [...new Set([...signIn.methods, ...reauthentication.proven])];
  const secondFactor = (await auth.storage.totp.get(user.id))?.enabled === true;
  if (decideReauthentication({ secondFactor, recent: null, offered: methods }).outcome !== "prove") {
    throw new AuthError(
      ErrorCode.AuthenticationFailed,
      "The provider did not assert a second factor, and the account has one: begin again with a TOTP code",
    );
  }
  return replaceSession(auth, user, reauthentication.sessionId, methods, client);
}
