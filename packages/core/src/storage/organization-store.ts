/**
 * Organizations (`organizations` in `createAuth`): groups of users, each member with roles of
 * the organization's own, invitations by email, and the email domains an organization has
 * proven it owns. The rules an organization sets for its members travel in its record.
 */

/** What an organization asks of a session before it may be active in it (OR-9, OR-10). */
export interface OrganizationRules {
  /** A session must have proven a second factor (`amr` holds `mfa`) before the organization is active in it. */
  requireSecondFactor: boolean;
  /**
   * The ways of signing in a session may have used for the organization to be active in it, of
   * `password`, `directory`, `passkey`, `provider` and `email` (a code or link sent by email);
   * null allows every way.
   */
  signInMethods: OrganizationSignInMethod[] | null;
}

/** A way of signing in an organization may allow: what a session's `amr` tells of its sign-in. */
export type OrganizationSignInMethod = "password" | "directory" | "passkey" | "provider" | "email";

/** An organization. `slug` is unique in the instance, compared as stored (lower case). */
export interface OrganizationRecord {
  id: string;
  /** Lower-case letters, digits and single hyphens, 2 to 48 characters: the organization's name in URLs. */
  slug: string;
  /** The name people see, checked like a label (NFKC, no control characters, 1 to 100 characters). */
  name: string;
  rules: OrganizationRules;
  createdAt: number;
  updatedAt: number;
}

/** A user's membership of an organization. */
export interface MembershipRecord {
  orgId: string;
  userId: string;
  /** The member's roles in the organization, of the configured `organizations.roles` (never empty). */
  roles: string[];
  createdAt: number;
  /** When the member last made it their active organization (what a new sign-in starts in), or null. */
  lastActiveAt: number | null;
}

/** A membership with its organization: what a user's list of organizations holds. */
export interface UserOrganization {
  organization: OrganizationRecord;
  membership: MembershipRecord;
}

/** An invitation to join an organization, sent to one address. */
export interface InvitationRecord {
  id: string;
  orgId: string;
  /** The invited address, case-folded (`emailKeyOf`): only a user holding it verified may accept (OR-5). */
  email: string;
  /** The roles the membership gets. */
  roles: string[];
  /** The SHA-256 of the secret the email's link carries; a resend replaces it. */
  tokenHash: string;
  /** The member who sent it. */
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedBy: string | null;
  revokedAt: number | null;
}

/** An email domain an organization claims; once verified, users holding a verified address there may join it. */
export interface DomainRecord {
  orgId: string;
  /** Lower case, IDNA (punycode) form. */
  domain: string;
  /** The value the DNS TXT record must hold: not secret. */
  verificationValue: string;
  createdAt: number;
  /** When the host's check found the record, or null. A domain is verified for at most one organization (OR-11). */
  verifiedAt: number | null;
}

/** A page of rows and the cursor of the next, or null when it was the last. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** What {@link OrganizationStore.acceptInvitation} is asked to do. */
export interface InvitationAcceptance {
  tokenHash: string;
  /** The accepting user. */
  userId: string;
  /** The accepting user's verified address, case-folded: the invitation must be for it. */
  email: string;
  now: number;
}

/** What {@link OrganizationStore.acceptInvitation} did. */
export type AcceptanceResult =
  /** The invitation is spent and the membership added, by one atomic write. */
  | { outcome: "accepted"; invitation: InvitationRecord; membership: MembershipRecord }
  /** The invitation is spent; the user was already a member, whose roles are unchanged. */
  | { outcome: "already_member"; invitation: InvitationRecord; membership: MembershipRecord }
  /** Nothing written: no pending, unexpired invitation with this hash for this address. */
  | { outcome: "refused" };

/** What a change of a membership that could leave an organization without an owner did. */
export type MembershipChange = "done" | "not_found" | "last_owner";

/**
 * Organizations, memberships, invitations and domains. Every method that says "atomically" holds
 * under concurrent callers across processes. The last-owner rule ({@link changeMemberRoles},
 * {@link removeMember}) must hold when two owners demote or remove each other at once: a SQL store
 * locks the organization's row for the change.
 */
export interface OrganizationStore {
  /** Inserts an organization and its first owner's membership atomically; false, with nothing written, when the slug is taken. */
  createOrganization(organization: OrganizationRecord, owner: MembershipRecord): Promise<boolean>;
  /** The organization with this id, or null. */
  findOrganization(id: string): Promise<OrganizationRecord | null>;
  /** The organization with this slug (compared as stored), or null. */
  findOrganizationBySlug(slug: string): Promise<OrganizationRecord | null>;
  /**
   * Changes an organization's name, slug or rules and its `updatedAt`; the updated record, null
   * for an unknown organization, or `"slug_taken"` with nothing written.
   */
  updateOrganization(
    id: string,
    changes: Partial<Pick<OrganizationRecord, "name" | "slug" | "rules">> & { updatedAt: number },
  ): Promise<OrganizationRecord | null | "slug_taken">;
  /**
   * Deletes an organization with its memberships, invitations and domains, and clears it as the
   * active organization of every session, atomically; false for an unknown one.
   */
  deleteOrganization(id: string): Promise<boolean>;
  /** Every organization by id order, `limit` at a time after `cursor` (an id): the administrators' view. */
  listOrganizations(options: { cursor?: string; limit: number }): Promise<Page<OrganizationRecord>>;

  /** The user's membership of the organization, or null when the user is not a member. */
  findMembership(orgId: string, userId: string): Promise<MembershipRecord | null>;
  /** An organization's members by user id order, `limit` at a time after `cursor` (a user id). */
  listMembers(orgId: string, options: { cursor?: string; limit: number }): Promise<Page<MembershipRecord>>;
  /** Every organization a user belongs to, with the membership, by organization id. */
  listUserOrganizations(userId: string): Promise<UserOrganization[]>;
  /** Adds a membership; false, with nothing written, when the user is already a member or the organization is unknown. */
  addMember(membership: MembershipRecord): Promise<boolean>;
  /**
   * Sets a member's roles atomically, unless it would leave the organization without a member
   * holding `ownerRole` (`"last_owner"`).
   */
  changeMemberRoles(orgId: string, userId: string, roles: string[], ownerRole: string): Promise<MembershipChange>;
  /**
   * Removes a membership atomically, unless the member is the last holding `ownerRole`
   * (`"last_owner"`); the organization stops being active in the user's sessions by the same write.
   */
  removeMember(orgId: string, userId: string, ownerRole: string): Promise<MembershipChange>;

  /**
   * Makes `orgId` the session's active organization (null: none), and records the membership's
   * `lastActiveAt`, atomically: only while the session is the user's, unrevoked, and the user a
   * member of `orgId`; false with nothing written otherwise.
   */
  setActiveOrganization(sessionId: string, userId: string, orgId: string | null, now: number): Promise<boolean>;
  /** Clears `orgId` as the active organization of every session that has it; how many lost it. */
  clearActiveOrganization(orgId: string): Promise<number>;

  /** Stores an invitation, and revokes (at its `createdAt`) the pending ones of the same organization and address, atomically. */
  createInvitation(invitation: InvitationRecord): Promise<void>;
  /** The organization's invitation with this id, in any state, or null (null too for another organization's). */
  findInvitation(orgId: string, id: string): Promise<InvitationRecord | null>;
  /** An organization's pending invitations (not accepted, not revoked, not expired at `now`), newest first. */
  listInvitations(orgId: string, now: number): Promise<InvitationRecord[]>;
  /** Gives a pending invitation a new secret and expiry (a resend voids the link sent before); false when none is pending. */
  replaceInvitationToken(orgId: string, id: string, tokenHash: string, expiresAt: number, now: number): Promise<boolean>;
  /** Revokes a pending invitation; false when none is pending. */
  revokeInvitation(orgId: string, id: string, now: number): Promise<boolean>;
  /**
   * Spends a pending, unexpired invitation for `email` with this hash and adds the membership, in
   * one atomic write: of N concurrent calls exactly one spends it (OR-6).
   */
  acceptInvitation(acceptance: InvitationAcceptance): Promise<AcceptanceResult>;

  /** Adds a domain to an organization, unverified; false when the organization already claims it. */
  addDomain(domain: DomainRecord): Promise<boolean>;
  /** The domains the organization claims, verified or not, by domain. */
  listDomains(orgId: string): Promise<DomainRecord[]>;
  /** Marks a domain verified, unless another organization has it verified (`"taken"`), atomically. */
  markDomainVerified(orgId: string, domain: string, now: number): Promise<"verified" | "taken" | "not_found">;
  /** Removes the organization's claim of a domain (and its verification); false when it had none. */
  removeDomain(orgId: string, domain: string): Promise<boolean>;
  /** The organization that has `domain` verified, or null. */
  findOrganizationByDomain(domain: string): Promise<OrganizationRecord | null>;
}
