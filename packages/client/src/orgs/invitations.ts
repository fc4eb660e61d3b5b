import type { Session } from "../session.js";
import { organizationPath } from "./organization-calls.js";
import type { Organization } from "./organizations.js";

/** A pending invitation, as the organization's administrators see it: never its secret. Times are epoch milliseconds. */
export interface OrganizationInvitation {
  id: string;
  /** The invited address, case-folded. */
  email: string;
  roles: string[];
  /** The user id of the member who sent it. */
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

/** What {@link OrganizationInvitationsClient.create} sends. */
export interface InviteMemberInput {
  email: string;
  /** Roles not above the inviter's own; the organization's lowest role when left out. */
  roles?: string[];
}

/** An organization's invitations by email (`/auth/orgs/:orgId/invitations`, and their acceptance). */
export interface OrganizationInvitationsClient {
  /**
   * Invites an address (`POST /auth/orgs/:orgId/invitations`): an administrator, to roles not above
   * their own. The server mails the link (`email.invitationUrl#token=…`); a newer invitation to the
   * same address revokes the older one.
   *
   * @throws {AuthClientError} 40300 not an administrator or roles above the caller's, 40400 no such organization or invitations not configured, 42200 not an address or unknown roles, 42900 the address's mail budget is spent.
   * @example
   * ```ts
   * const invitation = await client.orgs.invitations.create(orgId, { email: "bob@example.com", roles: ["member"] });
   * ```
   */
  create(orgId: string, input: InviteMemberInput): Promise<OrganizationInvitation>;
  /**
   * The pending invitations, newest first (`GET /auth/orgs/:orgId/invitations`): administrators only.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such organization.
   * @example
   * ```ts
   * const pending = await client.orgs.invitations.list(orgId);
   * ```
   */
  list(orgId: string): Promise<OrganizationInvitation[]>;
  /**
   * Sends a pending invitation again with a new link (`POST …/invitations/:id/resend`); the old link stops working.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such pending invitation, 42900 the mail budget is spent.
   * @example
   * ```ts
   * await client.orgs.invitations.resend(orgId, invitation.id);
   * ```
   */
  resend(orgId: string, invitationId: string): Promise<OrganizationInvitation>;
  /**
   * Revokes a pending invitation (`DELETE …/invitations/:id`): its link stops working.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such pending invitation.
   * @example
   * ```ts
   * await client.orgs.invitations.revoke(orgId, invitation.id);
   * ```
   */
  revoke(orgId: string, invitationId: string): Promise<void>;
  /**
   * Accepts an invitation with the token of its link (`POST /auth/orgs/invitations/accept`; read it
   * with `tokenFromLink(location.hash)`): the signed-in user must hold the invited address,
   * verified (OR-5). Answers the organization joined. It does not become active: call
   * {@link OrganizationsClient.switch}.
   *
   * @throws {AuthClientError} 40101 a spent, revoked, replaced or expired invitation, or one to another address (one answer for all), 40300 the user has no verified address.
   * @example
   * ```ts
   * const organization = await client.orgs.invitations.accept(tokenFromLink(location.hash) ?? "");
   * ```
   */
  accept(token: string): Promise<Organization>;
}

/**
 * Makes the {@link OrganizationInvitationsClient} of a session.
 *
 * @example
 * ```ts
 * const invitations = createOrganizationInvitationsClient(session);
 * ```
 */
export function createOrganizationInvitationsClient(session: Session): OrganizationInvitationsClient {
  return {
    create: (orgId, { email, roles }) =>
      session.call<OrganizationInvitation>({
        method: "POST",
        path: `${organizationPath(orgId)}/invitations`,
        body: { email, roles },
      }),
    list: (orgId) => session.call<OrganizationInvitation[]>({ method: "GET", path: `${organizationPath(orgId)}/invitations` }),
    resend: (orgId, id) =>
      session.call<OrganizationInvitation>({
        method: "POST",
        path: `${organizationPath(orgId)}/invitations/${encodeURIComponent(id)}/resend`,
      }),
    async revoke(orgId, id) {
      await session.call({ method: "DELETE", path: `${organizationPath(orgId)}/invitations/${encodeURIComponent(id)}` });
    },
    accept: (token) => session.call<Organization>({ method: "POST", path: "/auth/orgs/invitations/accept", body: { token } }),
  };
}
