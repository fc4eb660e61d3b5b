import type { AuthConfig, CreateAuthOptions, OAuthProviderConfig, PublicUser } from "@portcullis/core";

/**
 * The single `role` a client built for the original service reads from `user.role`: the user's
 * first role, or `"user"` for an account without roles (a first provider sign-in creates one
 * with none unless `provisioning.defaultRoles` says otherwise). Keep the roles you list first
 * the ones that client should see.
 */
export function singleRole(user: PublicUser): { role: string } {
  return { role: user.roles[0] ?? "user" };
}

/**
 * What Portcullis needs to serve a client built for the original service unchanged
 * (`docs/compatibility.md`): every answer with HTTP 200 and the outcome in `code` (the client
 * reads nothing else), a single `user.role` in every token set, each provider's callback
 * accepted without `iss`, which that client's callback page drops (OA-12), and its settings
 * pages: the recovery codes in the `2fa/setup` answer, a pending set usable once `2fa/enable`
 * succeeds (RC-4); TOTP enrolment without a password, however old the sign-in (TOTP-7, unsafe:
 * a stolen session can bind the thief's authenticator); the password change at
 * `PUT /api/v1/users/me/password` with `{oldPassword, newPassword}` (SE-6), with the old password
 * alone for a TOTP user too (TOTP-8, unsafe: a stolen session and a phished password change it
 * without the authenticator); and a 10-second `refreshReuseInterval` for its tabs, which share
 * their tokens in `localStorage` and refresh at once (RT-5: a token replayed within those seconds
 * gets the session's current tokens instead of ending it). Each provider must
 * have a `redirectUri` of its own: `createAuth` refuses the configuration otherwise.
 *
 * @example
 * ```ts
 * const auth = createAuth({
 *   ...config,
 *   ...originalClientSettings({
 *     corp: { issuer: "https://id.example.com", clientId, clientSecret, redirectUri: "https://app.example.com/oauth/corp" },
 *   }),
 * });
 * ```
 */
export function originalClientSettings(
  providers: Record<string, OAuthProviderConfig>,
  oauth: Omit<NonNullable<AuthConfig["oauth"]>, "providers"> = {},
): Pick<AuthConfig, "http" | "oauth" | "totp" | "reauthentication" | "refreshReuseInterval"> &
  Pick<CreateAuthOptions, "publicUser"> {
  const lenient: Record<string, OAuthProviderConfig> = {};
  for (const [name, provider] of Object.entries(providers)) lenient[name] = { ...provider, unsafeAllowMissingIss: true };
  return {
    http: { statusMode: "always-200", passwordChangeAlias: true },
    publicUser: singleRole,
    oauth: { ...oauth, providers: lenient },
    totp: { recoveryCodesAtSetup: true },
    reauthentication: { unsafeAllowTotpEnrolmentWithoutProof: true, unsafeAllowPasswordChangeWithoutSecondFactor: true },
    refreshReuseInterval: "10s",
  };
}
