import type { EmailKind, NoticeReason } from "../email/email-config.js";
import type { AuthMethod } from "../storage/types.js";
import type { ThrottleScope } from "../throttle/throttle-config.js";

/** Why a sign-in attempt failed. `invalid_credentials` covers unknown users too (EN-1). */
export type LoginFailureReason = "invalid_credentials" | "disabled" | "no_role" | "passkey_required";

/** Which secret a second-factor step checked. */
export type SecondFactorKind = "totp" | "recovery_code";

/** Why a session ended. */
export type RevocationReason =
  | "logout"
  | "refresh_token_reused"
  | "token_version_changed"
  | "user_disabled"
  | "directory_access_lost"
  | "ended_by_user"
  /** A refresh of a user who must have a second factor and has none (STUP-4). */
  | "second_factor_required"
  /** A newer sign-in passed `sessions.maxPerUser` and this was among the account's oldest sessions (STUP-8). */
  | "session_limit"
  /** A re-authentication replaced it with a new session (STUP-2, ASVS 7.2.4): see `session.reauthenticated`. */
  | "reauthenticated"
  /** An impersonated session was ended by its administrator, or its administrator lost the right to impersonate (IMP-4). */
  | "impersonation_ended";

/** The change that ended a user's other sessions, keeping the one it was made from (SE-2). */
export type SessionsEndedReason =
  | "password_changed"
  | "totp_enabled"
  | "totp_disabled"
  | "recovery_codes_regenerated"
  | "passkey_registered"
  | "passkey_revoked"
  | "identity_linked"
  | "identity_unlinked"
  | "ended_by_user"
  | "password_reset"
  | "email_changed";

/**
 * Who made an account: the sign-up route, an administrator, the directory or a provider at a first
 * sign-in, the service's own code (`createUser`), or an import (`importUsers`).
 */
export type UserCreator = "sign_up" | "admin" | "directory" | "provider" | "service" | "import";

/**
 * A check that compares what a request, token or provider carries with the configuration
 * (`check.failed`): the passkey ceremony's origin and relying party, the provider's issuer, the
 * access token's issuer and audience.
 */
export type CheckName = "passkey_origin" | "passkey_rp_id" | "oauth_issuer" | "token_issuer" | "token_audience";

/** What a change to an account changed (`user.updated`). */
export type UserChange = "roles" | "disabled" | "totp_removed" | "fields";

interface EventBase {
  /** Epoch milliseconds, from the auth instance's clock. */
  at: number;
  /** The client address as resolved through the trusted-proxy setting, when known. */
  ip?: string | undefined;
}

/**
 * Everything Portcullis reports. No event ever holds a password, code, token or secret
 * (HTTP-6); usernames appear only where the account is in question.
 */
export type AuthEvent =
  | (EventBase & { type: "login.succeeded"; userId: string; sessionId: string; amr: AuthMethod[] })
  /** `userId` is the account's when one has the username, else null: never the typed username, which may be a password. */
  | (EventBase & { type: "login.failed"; userId: string | null; reason: LoginFailureReason })
  | (EventBase & { type: "second_factor.required"; userId: string })
  /** The first factor was proven, but the user must enrol a second factor first: an enrolment token was issued (40105; STUP-4). */
  | (EventBase & { type: "second_factor.enrolment_required"; userId: string })
  | (EventBase & { type: "second_factor.succeeded"; userId: string; kind: SecondFactorKind })
  | (EventBase & { type: "second_factor.failed"; userId: string; kind: SecondFactorKind })
  | (EventBase & { type: "totp.enabled"; userId: string })
  | (EventBase & { type: "totp.disabled"; userId: string })
  | (EventBase & { type: "recovery_codes.regenerated"; userId: string })
  | (EventBase & { type: "token.refreshed"; userId: string; sessionId: string })
  /**
   * A session re-authenticated (STUP-2, ASVS 7.2.4): it ended (`replacedSessionId`, also reported as
   * `session.revoked` with reason `reauthenticated`) and the new session `sessionId` began in its
   * place, its `auth_time` now and its `amr` what this proof proved.
   */
  | (EventBase & {
      type: "session.reauthenticated";
      userId: string;
      sessionId: string;
      replacedSessionId: string;
      amr: AuthMethod[];
    })
  /**
   * A refresh token presented after it was replaced (RT-2). `withinReuseInterval`: it was the one
   * replaced last, within `refreshReuseInterval`, and was answered with the current one; otherwise
   * the session was revoked.
   */
  | (EventBase & { type: "refresh_token.reused"; userId: string; sessionId: string; withinReuseInterval: boolean })
  | (EventBase & { type: "session.revoked"; userId: string; sessionId: string; reason: RevocationReason })
  /** `by`: with `ended_by_admin`, the administrator's user id. */
  | (EventBase & {
      type: "sessions.revoked_all";
      userId: string;
      count: number;
      reason: "sign_out_everywhere" | "user_disabled" | "ended_by_admin";
      by?: string;
    })
  /**
   * Every session of every user ended (`revokeAllSessions`, STUP-6): `count` of them were live;
   * `by` is the administrator's user id, or null from the service's own code or the CLI.
   */
  | (EventBase & { type: "sessions.all_revoked"; count: number; by: string | null })
  /** `keptSessionId`: the session the change was made from, which goes on; null when the change came from no session and every one ended. */
  | (EventBase & {
      type: "sessions.ended";
      userId: string;
      keptSessionId: string | null;
      count: number;
      reason: SessionsEndedReason;
    })
  | (EventBase & { type: "token_version.raised"; userId: string; tokenVersion: number; reason: string })
  /** `key`: the address bucket for `ip` and `unauthenticatedWrites`; the device token's random id for `device`; for `account`, the keyed pseudonym of the username: stable, but not reversible without the key. */
  | (EventBase & { type: "throttled"; scope: ThrottleScope; key: string; retryAfterSeconds: number })
  /** `adminUserId`: with `by: "admin"`, the administrator who made it. */
  | (EventBase & { type: "user.created"; userId: string; by: UserCreator; adminUserId?: string })
  /** `by`: the administrator's user id, or null when the service's own code made the change (`setUserRoles`, `setUserDisabled`). */
  | (EventBase & { type: "user.updated"; userId: string; changes: UserChange[]; by: string | null })
  /** `sessionsEnded`: how many other sessions a change made by the user ended (SE-2); absent after `setPassword`, which ends them all through the token version. */
  | (EventBase & { type: "password.changed"; userId: string; sessionsEnded?: number })
  /** A password reset through an email link (PR-4): every session ended, `sessionsEnded` of them live. */
  | (EventBase & { type: "password.reset"; userId: string; sessionsEnded: number })
  /** A link to verify `email.change_requested`'s new address went out; the address itself is in no event. */
  | (EventBase & { type: "email.change_requested"; userId: string })
  | (EventBase & { type: "email.verified"; userId: string })
  /**
   * A message handed to `email.send` and delivered by it; `notice` says what a notice was about.
   * `userId` is null for a `sign_up` message, which goes to an address no account holds.
   */
  | (EventBase & { type: "email.sent"; kind: EmailKind; notice?: NoticeReason; userId: string | null })
  /**
   * `email.send` threw (`failed`) or outlasted `email.sendTimeout` (`timed_out`): the message is
   * lost, its token stays valid. `recipient_limit`: the address's `email.recipientLimit` was spent,
   * so the message was not sent and no token made for it (EM-1).
   */
  | (EventBase & {
      type: "email.failed";
      kind: EmailKind;
      notice?: NoticeReason;
      /** Null for a `sign_up` message, as `email.sent`. */
      userId: string | null;
      reason: "failed" | "timed_out" | "recipient_limit";
    })
  /**
   * A sign-in code or link was asked for (`POST /auth/email-sign-in/begin`), reported after the
   * answer: `userId` is the account that holds the address verified, null when none does (a
   * `sign_up` code may then have been sent). Never the address, code or link.
   */
  | (EventBase & { type: "email_sign_in.requested"; userId: string | null })
  | (EventBase & { type: "passkey.registered"; userId: string; credentialId: string })
  | (EventBase & { type: "passkey.renamed"; userId: string; credentialId: string })
  | (EventBase & { type: "passkey.revoked"; userId: string; credentialId: string })
  | (EventBase & { type: "identity.linked"; userId: string; provider: string })
  | (EventBase & { type: "identity.unlinked"; userId: string; provider: string })
  /** `directoryUsers`: how many directory users' token versions the save raised. */
  | (EventBase & { type: "directory_policy.saved"; enabled: boolean; directoryUsers: number })
  /**
   * The revocation channel stopped delivering (or could not start): revocations made on other
   * instances now reach this one within `maxRevocationDelaySeconds` (`tokenStateCacheSeconds`).
   */
  | (EventBase & { type: "revocation_channel.lost"; maxRevocationDelaySeconds: number })
  /** The revocation channel delivers again after a loss; this instance's cached token state was dropped. */
  | (EventBase & { type: "revocation_channel.restored" })
  /**
   * A refusal explained: what the configuration accepts and what came (an origin, issuer or
   * audience, cut at 200 characters; never secret material). With `debug: true` it is also a
   * line on stderr.
   */
  | (EventBase & { type: "check.failed"; check: CheckName; expected: string[]; received: string | null })
  /** Organizations (OR-1…): `by` is the acting user; `userId` the member concerned. */
  | (EventBase & { type: "organization.created"; orgId: string; by: string })
  | (EventBase & { type: "organization.updated"; orgId: string; by: string; changes: OrganizationChange[] })
  | (EventBase & { type: "organization.deleted"; orgId: string; by: string })
  | (EventBase & { type: "organization.member_added"; orgId: string; userId: string; roles: string[]; via: MemberSource })
  | (EventBase & { type: "organization.member_roles_changed"; orgId: string; userId: string; roles: string[]; by: string })
  | (EventBase & { type: "organization.member_removed"; orgId: string; userId: string; by: string })
  | (EventBase & { type: "organization.invitation_sent"; orgId: string; invitationId: string; by: string })
  | (EventBase & { type: "organization.invitation_revoked"; orgId: string; invitationId: string; by: string })
  | (EventBase & { type: "organization.domain_verified"; orgId: string; domain: string; by: string })
  | (EventBase & { type: "organization.switched"; userId: string; sessionId: string; orgId: string | null })
  /** API keys (AK-1…): `keyId` names the key, never its secret. */
  /** `orgId`: the organization a key of an organization belongs to. */
  | (EventBase & { type: "api_key.created"; userId: string; keyId: string; orgId?: string })
  | (EventBase & { type: "api_key.revoked"; userId: string; keyId: string; by: string })
  /** Service accounts (SA-1…): `by` is the administrator; `credentialId` names a secret or key, never its value. */
  | (EventBase & { type: "service_account.created"; serviceAccountId: string; by: string | null })
  | (EventBase & { type: "service_account.updated"; serviceAccountId: string; by: string | null; tokensEnded: boolean })
  | (EventBase & { type: "service_account.deleted"; serviceAccountId: string; by: string | null })
  | (EventBase & {
      type: "service_account.credential_added";
      serviceAccountId: string;
      credentialId: string;
      kind: "secret" | "jwk";
      by: string | null;
    })
  | (EventBase & {
      type: "service_account.credential_removed";
      serviceAccountId: string;
      credentialId: string;
      by: string | null;
    })
  /** A token issued at `POST /auth/token` (`credentialId`: the secret or key it was proven with). */
  | (EventBase & { type: "service_account.token_issued"; serviceAccountId: string; credentialId: string; scopes: string[] })
  /** A refused token request: `reason` is its RFC 6749 error; `serviceAccountId` the client id when it named an existing account. */
  | (EventBase & { type: "service_account.token_refused"; serviceAccountId: string | null; reason: string })
  /** Impersonation (IMP-1…): `by` is the administrator acting, `userId` the user acted as. */
  | (EventBase & { type: "impersonation.started"; userId: string; by: string; sessionId: string; expiresAt: number })
  | (EventBase & { type: "impersonation.ended"; userId: string; by: string; sessionId: string })
  /** An impersonated session asked for what it may not do (a credential or second-factor change, a re-authentication). */
  | (EventBase & { type: "impersonation.refused"; userId: string; by: string; sessionId: string; action: string });

/** What a change of an organization changed (`organization.updated`). */
export type OrganizationChange = "name" | "slug" | "rules";

/** How a member came in: created the organization, accepted an invitation, or joined by a verified domain. */
export type MemberSource = "creation" | "invitation" | "domain";

/** The name of an event. */
export type AuthEventType = AuthEvent["type"];

/** The event with the given name. */
export type AuthEventOf<T extends AuthEventType> = Extract<AuthEvent, { type: T }>;
