import type { DomainRecord, InvitationRecord, MembershipRecord, OrganizationRecord } from "@portcullis/core";
import type { OrganizationDomainRow, OrganizationInvitationRow, OrganizationMemberRow, OrganizationRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { num, numOrNull } from "./context.js";

/** An organization's row as its record. */
export function toOrganization(row: OrganizationRow): OrganizationRecord {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    rules: JSON.parse(row.rules) as OrganizationRecord["rules"],
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

/** An organization as its row. */
export function toOrganizationRow(organization: OrganizationRecord): OrganizationRow {
  return {
    id: organization.id,
    slug: organization.slug,
    name: organization.name,
    rules: JSON.stringify(organization.rules),
    created_at: organization.createdAt,
    updated_at: organization.updatedAt,
  };
}

/** A membership's row as its record. */
export function toMembership(row: OrganizationMemberRow): MembershipRecord {
  return {
    orgId: row.org_id,
    userId: userIdFromRow(row.user_id),
    roles: JSON.parse(row.roles) as string[],
    createdAt: num(row.created_at),
    lastActiveAt: numOrNull(row.last_active_at),
  };
}

/** A membership as its row. */
export function toMembershipRow(membership: MembershipRecord): OrganizationMemberRow {
  return {
    org_id: membership.orgId,
    user_id: membership.userId,
    roles: JSON.stringify(membership.roles),
    created_at: membership.createdAt,
    last_active_at: membership.lastActiveAt,
  };
}

/** An invitation's row as its record. */
export function toInvitation(row: OrganizationInvitationRow): InvitationRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    email: row.email,
    roles: JSON.parse(row.roles) as string[],
    tokenHash: row.token_hash,
    invitedBy: userIdFromRow(row.invited_by),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    acceptedAt: numOrNull(row.accepted_at),
    acceptedBy: row.accepted_by === null ? null : userIdFromRow(row.accepted_by),
    revokedAt: numOrNull(row.revoked_at),
  };
}

/** A domain's row as its record. */
export function toDomain(row: OrganizationDomainRow): DomainRecord {
  return {
    orgId: row.org_id,
    domain: row.domain,
    verificationValue: row.verification_value,
    createdAt: num(row.created_at),
    verifiedAt: numOrNull(row.verified_at),
  };
}

/** The columns of the organizations table, in the order a joined read names them. */
export const organizationColumns = ["id", "slug", "name", "rules", "created_at", "updated_at"] as const;
/** The columns of the memberships table, in the order a joined read names them. */
export const memberColumns = ["org_id", "user_id", "roles", "created_at", "last_active_at"] as const;
