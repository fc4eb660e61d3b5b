import type { Auth } from "../auth.js";
import { opaqueToken, randomId } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { deliverEmail } from "../email/deliver.js";
import { linkWithToken } from "../email/email-tokens.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import type { InvitationRecord, OrganizationRecord, UserRecord } from "../storage/types.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import { signedInUser } from "../users/signed-in-user.js";
import {
  lowestRole,
  membershipOf,
  organizationsOf,
  readOrganizationRoles,
  requireAdministrator,
  requireNotAbove,
} from "./organization-access.js";
import { type OrganizationView, organizationView } from "./organization-view.js";

/** An invitation as the organization's administrators see it: never its secret. Times are epoch milliseconds. */
export interface InvitationView {
  id: string;
  /** The invited address, case-folded. */
  email: string;
  roles: string[];
  /** The member who sent it. */
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

const toView = ({ id, email, roles, invitedBy, createdAt, expiresAt }: InvitationRecord): InvitationView => ({
  id,
  email,
  roles: [...roles],
  invitedBy,
  createdAt,
  expiresAt,
});

/** The page invitation links open, or 40400 when invitations by email are not configured. */
function invitationUrlOf(auth: Auth): string {
  const url = auth.config.email?.invitationUrl;
  if (url === undefined || url === null) {
    throw new AuthError(ErrorCode.NotFound, "Invitations need email with email.invitationUrl configured");
  }
  return url;
}

const noSuchInvitation = () => new AuthError(ErrorCode.NotFound, "No such pending invitation");

/** Sends the invitation's link, `token` in its fragment, through `email.send` and the recipient's budget (EM-1). */
function sendInvitation(
  auth: Auth,
  inviter: UserRecord,
  organization: OrganizationRecord,
  invitation: InvitationRecord,
  token: string,
  acceptLanguage: string | undefined,
): Promise<void> {
  const url = invitationUrlOf(auth);
  return deliverEmail(auth, {
    kind: "organization_invitation",
    to: invitation.email,
    userId: inviter.id,
    username: inviter.username,
    organization: organization.name,
    expiresInMinutes: Math.round((invitation.expiresAt - auth.now()) / 60_000),
    link: async () => linkWithToken(url, token),
    acceptLanguage,
  });
}

/** The input of {@link inviteMember}. */
export interface InviteMemberInput {
  userId: string;
  orgId: string;
  email: string;
  /** Default (absent or null): the lowest of `organizations.roles`. */
  roles?: string[] | null;
  /** The request's `Accept-Language`, which chooses the message's template. */
  acceptLanguage?: string;
}

/**
 * Invites an address to an organization (`POST /auth/orgs/:orgId/invitations`), by one of its
 * administrators, to roles not above their own (OR-4): stores the invitation (its secret only as
 * a SHA-256; an earlier pending one to the same address is revoked) and sends its link through
 * `email.send`, within the recipient's budget (EM-1). The link works once, until
 * `organizations.invitationTtl`, for a signed-in user holding the address verified (OR-5, OR-6).
 *
 * @throws {AuthError} 40400 not a member or invitations not configured, 40300 not an administrator or above the caller, 40002 not an address, 42200 unknown roles, 50300 the message could not be sent.
 */
export async function inviteMember(auth: Auth, input: InviteMemberInput): Promise<InvitationView> {
  invitationUrlOf(auth);
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const email = emailKeyOf(normalizeEmail(requiredString(input.email, "email")));
  const roles = input.roles === undefined || input.roles === null ? [lowestRole(auth)] : readOrganizationRoles(auth, input.roles);
  requireNotAbove(auth, membership, roles);
  const { value, hash } = opaqueToken(auth);
  const now = auth.now();
  const invitation: InvitationRecord = {
    id: randomId(auth),
    orgId: organization.id,
    email,
    roles,
    tokenHash: hash,
    invitedBy: user.id,
    createdAt: now,
    expiresAt: now + auth.config.organizations.invitationTtlSeconds * 1000,
    acceptedAt: null,
    acceptedBy: null,
    revokedAt: null,
  };
  await store.createInvitation(invitation);
  auth.emit({ type: "organization.invitation_sent", orgId: organization.id, invitationId: invitation.id, by: user.id, at: now });
  await sendInvitation(auth, user, organization, invitation, value, input.acceptLanguage);
  return toView(invitation);
}

/** An organization's pending invitations, newest first (`GET /auth/orgs/:orgId/invitations`), for its administrators. */
export async function listInvitations(auth: Auth, input: { userId: string; orgId: string }): Promise<InvitationView[]> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  return (await store.listInvitations(organization.id, auth.now())).map(toView);
}

/** The input of {@link resendInvitation} and {@link revokeInvitation}. */
export interface InvitationInput {
  userId: string;
  orgId: string;
  invitationId: string;
  acceptLanguage?: string;
}

/**
 * Sends a pending invitation again with a new link and a new expiry (`POST
 * /auth/orgs/:orgId/invitations/:id/resend`): the link sent before stops working (OR-5).
 *
 * @throws {AuthError} 40400 not a member or no such pending invitation, 40300 not an administrator or above the caller, 50300 not sent.
 */
export async function resendInvitation(auth: Auth, input: InvitationInput): Promise<InvitationView> {
  invitationUrlOf(auth);
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const invitation = await store.findInvitation(organization.id, requiredString(input.invitationId, "invitationId"));
  if (invitation === null) throw noSuchInvitation();
  requireNotAbove(auth, membership, invitation.roles);
  const { value, hash } = opaqueToken(auth);
  const now = auth.now();
  const expiresAt = now + auth.config.organizations.invitationTtlSeconds * 1000;
  if (!(await store.replaceInvitationToken(organization.id, invitation.id, hash, expiresAt, now))) throw noSuchInvitation();
  const resent = { ...invitation, tokenHash: hash, expiresAt };
  auth.emit({ type: "organization.invitation_sent", orgId: organization.id, invitationId: invitation.id, by: user.id, at: now });
  await sendInvitation(auth, user, organization, resent, value, input.acceptLanguage);
  return toView(resent);
}

/**
 * Revokes a pending invitation (`DELETE /auth/orgs/:orgId/invitations/:id`): its link stops working.
 *
 * @throws {AuthError} 40400 not a member or no such pending invitation, 40300 not an administrator or above the caller.
 */
export async function revokeInvitation(auth: Auth, input: InvitationInput): Promise<{ revoked: true }> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const invitation = await store.findInvitation(organization.id, requiredString(input.invitationId, "invitationId"));
  if (invitation === null) throw noSuchInvitation();
  requireNotAbove(auth, membership, invitation.roles);
  if (!(await store.revokeInvitation(organization.id, invitation.id, auth.now()))) throw noSuchInvitation();
  auth.emit({
    type: "organization.invitation_revoked",
    orgId: organization.id,
    invitationId: invitation.id,
    by: user.id,
    at: auth.now(),
  });
  return { revoked: true };
}

/**
 * Accepts an invitation (`POST /auth/orgs/invitations/accept`): the signed-in user must hold the
 * invited address, verified (OR-5); the invitation is spent and the membership added by one atomic
 * write, so of concurrent acceptances one succeeds (OR-6). Answers the organization; a user who was
 * already a member keeps their roles.
 *
 * @throws {AuthError} 40300 the user has no verified address, 40101 the invitation is unknown, spent, revoked, replaced, expired or for another address.
 */
export async function acceptInvitation(auth: Auth, input: { userId: string; token: string }): Promise<OrganizationView> {
  const store = organizationsOf(auth);
  const user = await signedInUser(auth, input.userId);
  const token = requiredString(input.token, "token");
  if (!user.emailVerified || user.email === null) {
    throw new AuthError(
      ErrorCode.Forbidden,
      "Verify your email address first: an invitation is accepted by the address it was sent to",
    );
  }
  const now = auth.now();
  const result = await store.acceptInvitation({ tokenHash: sha256(token), userId: user.id, email: emailKeyOf(user.email), now });
  if (result.outcome === "refused") {
    throw new AuthError(ErrorCode.InvalidToken, "The invitation is invalid, expired, already used, or for another address");
  }
  const { invitation, membership } = result;
  const organization = await store.findOrganization(invitation.orgId);
  if (organization === null) throw new AuthError(ErrorCode.NotFound, "No such organization");
  if (result.outcome === "accepted") {
    const event = { orgId: organization.id, userId: user.id, roles: [...membership.roles], at: now };
    auth.emit({ type: "organization.member_added", ...event, via: "invitation" });
  }
  return organizationView(organization, membership);
}
