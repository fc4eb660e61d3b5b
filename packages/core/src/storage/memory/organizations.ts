import { compareCodePoints } from "../code-point-order.js";
import type {
  DomainRecord,
  InvitationRecord,
  MembershipRecord,
  OrganizationRecord,
  OrganizationStore,
  Page,
} from "../organization-store.js";
import { copy } from "./records.js";

/** What the organization store changes of the sessions: their active organization. */
export interface ActiveOrganizations {
  set(sessionId: string, userId: string, orgId: string | null): boolean;
  clear(orgId: string, userId?: string): number;
}

const isPending = (invitation: InvitationRecord, now: number) =>
  invitation.acceptedAt === null && invitation.revokedAt === null && invitation.expiresAt > now;

function page<T>(sorted: T[], keyOf: (item: T) => string, cursor: string | undefined, limit: number): Page<T> {
  const after = cursor === undefined ? sorted : sorted.filter((item) => compareCodePoints(keyOf(item), cursor) > 0);
  const items = after.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: after.length > limit && last !== undefined ? keyOf(last) : null };
}

/**
 * The memory {@link OrganizationStore}. Its memberships are created first and read by the session
 * store (the roles a token-state check reads); the sessions' active organization is changed
 * through `sessions`.
 */
export function memoryOrganizations() {
  const organizations = new Map<string, OrganizationRecord>();
  /** Memberships by organization id, then user id. */
  const memberships = new Map<string, Map<string, MembershipRecord>>();
  const invitations = new Map<string, InvitationRecord>();
  /** Domains by organization id, then domain. */
  const domains = new Map<string, Map<string, DomainRecord>>();
  let sessions: ActiveOrganizations | null = null;
  const activeOrganizations = (): ActiveOrganizations => {
    if (sessions === null) throw new Error("memoryOrganizations: the session store is not attached");
    return sessions;
  };
  const membersOf = (orgId: string) => memberships.get(orgId) ?? new Map<string, MembershipRecord>();
  const ownersOf = (orgId: string, ownerRole: string) =>
    [...membersOf(orgId).values()].filter((member) => member.roles.includes(ownerRole)).length;
  const slugTaken = (slug: string, exceptId?: string) =>
    [...organizations.values()].some((organization) => organization.slug === slug && organization.id !== exceptId);

  const store: OrganizationStore = {
    async createOrganization(organization, owner) {
      if (organizations.has(organization.id) || slugTaken(organization.slug)) return false;
      organizations.set(organization.id, copy(organization));
      memberships.set(organization.id, new Map([[owner.userId, copy(owner)]]));
      return true;
    },
    async findOrganization(id) {
      const organization = organizations.get(id);
      return organization === undefined ? null : copy(organization);
    },
    async findOrganizationBySlug(slug) {
      const organization = [...organizations.values()].find((candidate) => candidate.slug === slug);
      return organization === undefined ? null : copy(organization);
    },
    async updateOrganization(id, changes) {
      const organization = organizations.get(id);
      if (organization === undefined) return null;
      if (changes.slug !== undefined && slugTaken(changes.slug, id)) return "slug_taken";
      const updated = { ...organization, ...copy(changes) };
      organizations.set(id, updated);
      return copy(updated);
    },
    async deleteOrganization(id) {
      if (!organizations.delete(id)) return false;
      memberships.delete(id);
      domains.delete(id);
      for (const [invitationId, invitation] of invitations) if (invitation.orgId === id) invitations.delete(invitationId);
      activeOrganizations().clear(id);
      return true;
    },
    async listOrganizations({ cursor, limit }) {
      const sorted = [...organizations.values()].sort((a, b) => compareCodePoints(a.id, b.id));
      return copy(page(sorted, (organization) => organization.id, cursor, limit));
    },
    async findMembership(orgId, userId) {
      const membership = memberships.get(orgId)?.get(userId);
      return membership === undefined ? null : copy(membership);
    },
    async listMembers(orgId, { cursor, limit }) {
      const sorted = [...membersOf(orgId).values()].sort((a, b) => compareCodePoints(a.userId, b.userId));
      return copy(page(sorted, (membership) => membership.userId, cursor, limit));
    },
    async listUserOrganizations(userId) {
      const found = [];
      for (const [orgId, members] of memberships) {
        const membership = members.get(userId);
        const organization = organizations.get(orgId);
        if (membership !== undefined && organization !== undefined) found.push(copy({ organization, membership }));
      }
      return found.sort((a, b) => compareCodePoints(a.organization.id, b.organization.id));
    },
    async addMember(membership) {
      const members = memberships.get(membership.orgId);
      if (members === undefined || members.has(membership.userId)) return false;
      members.set(membership.userId, copy(membership));
      return true;
    },
    async changeMemberRoles(orgId, userId, roles, ownerRole) {
      const membership = memberships.get(orgId)?.get(userId);
      if (membership === undefined) return "not_found";
      const losesOwner = membership.roles.includes(ownerRole) && !roles.includes(ownerRole);
      if (losesOwner && ownersOf(orgId, ownerRole) <= 1) return "last_owner";
      membersOf(orgId).set(userId, { ...membership, roles: [...roles] });
      return "done";
    },
    async removeMember(orgId, userId, ownerRole) {
      const membership = memberships.get(orgId)?.get(userId);
      if (membership === undefined) return "not_found";
      if (membership.roles.includes(ownerRole) && ownersOf(orgId, ownerRole) <= 1) return "last_owner";
      membersOf(orgId).delete(userId);
      activeOrganizations().clear(orgId, userId);
      return "done";
    },
    async setActiveOrganization(sessionId, userId, orgId, now) {
      const membership = orgId === null ? undefined : memberships.get(orgId)?.get(userId);
      if (orgId !== null && membership === undefined) return false;
      if (!activeOrganizations().set(sessionId, userId, orgId)) return false;
      if (orgId !== null && membership !== undefined) membersOf(orgId).set(userId, { ...membership, lastActiveAt: now });
      return true;
    },
    async clearActiveOrganization(orgId) {
      return activeOrganizations().clear(orgId);
    },
    async createInvitation(invitation) {
      for (const [id, pending] of invitations) {
        if (
          pending.orgId === invitation.orgId &&
          pending.email === invitation.email &&
          isPending(pending, invitation.createdAt)
        ) {
          invitations.set(id, { ...pending, revokedAt: invitation.createdAt });
        }
      }
      invitations.set(invitation.id, copy(invitation));
    },
    async findInvitation(orgId, id) {
      const invitation = invitations.get(id);
      return invitation === undefined || invitation.orgId !== orgId ? null : copy(invitation);
    },
    async listInvitations(orgId, now) {
      return [...invitations.values()]
        .filter((invitation) => invitation.orgId === orgId && isPending(invitation, now))
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id))
        .map(copy);
    },
    async replaceInvitationToken(orgId, id, tokenHash, expiresAt, now) {
      const invitation = invitations.get(id);
      if (invitation === undefined || invitation.orgId !== orgId || !isPending(invitation, now)) return false;
      invitations.set(id, { ...invitation, tokenHash, expiresAt });
      return true;
    },
    async revokeInvitation(orgId, id, now) {
      const invitation = invitations.get(id);
      if (invitation === undefined || invitation.orgId !== orgId || !isPending(invitation, now)) return false;
      invitations.set(id, { ...invitation, revokedAt: now });
      return true;
    },
    async acceptInvitation({ tokenHash, userId, email, now }) {
      const invitation = [...invitations.values()].find((candidate) => candidate.tokenHash === tokenHash);
      if (invitation === undefined || !isPending(invitation, now) || invitation.email !== email) return { outcome: "refused" };
      const members = memberships.get(invitation.orgId);
      if (members === undefined) return { outcome: "refused" };
      const spent = { ...invitation, acceptedAt: now, acceptedBy: userId };
      invitations.set(invitation.id, spent);
      const existing = members.get(userId);
      if (existing !== undefined) return copy({ outcome: "already_member", invitation: spent, membership: existing });
      const membership: MembershipRecord = {
        orgId: invitation.orgId,
        userId,
        roles: [...invitation.roles],
        createdAt: now,
        lastActiveAt: null,
      };
      members.set(userId, membership);
      return copy({ outcome: "accepted", invitation: spent, membership });
    },
    async addDomain(domain) {
      if (!organizations.has(domain.orgId)) return false;
      const claimed = domains.get(domain.orgId) ?? new Map<string, DomainRecord>();
      if (claimed.has(domain.domain)) return false;
      claimed.set(domain.domain, copy(domain));
      domains.set(domain.orgId, claimed);
      return true;
    },
    async listDomains(orgId) {
      return [...(domains.get(orgId)?.values() ?? [])].sort((a, b) => compareCodePoints(a.domain, b.domain)).map(copy);
    },
    async markDomainVerified(orgId, domain, now) {
      const record = domains.get(orgId)?.get(domain);
      if (record === undefined) return "not_found";
      for (const [otherId, claimed] of domains) {
        if (otherId !== orgId && claimed.get(domain)?.verifiedAt != null) return "taken";
      }
      if (record.verifiedAt === null) domains.get(orgId)?.set(domain, { ...record, verifiedAt: now });
      return "verified";
    },
    async removeDomain(orgId, domain) {
      return domains.get(orgId)?.delete(domain) ?? false;
    },
    async findOrganizationByDomain(domain) {
      for (const [orgId, claimed] of domains) {
        if (claimed.get(domain)?.verifiedAt != null) return store.findOrganization(orgId);
      }
      return null;
    },
  };
  return {
    store,
    /** The user's roles in an organization, or null: what a token-state check reads. */
    orgRoles: (orgId: string, userId: string): readonly string[] | null => memberships.get(orgId)?.get(userId)?.roles ?? null,
    /** Attaches the sessions whose active organization the store sets and clears. */
    attach(activeSessions: ActiveOrganizations): void {
      sessions = activeSessions;
    },
  };
}
