import { type SuiteContext, concurrently } from "./harness.js";
import {
  OWNER,
  activeIn,
  newMember,
  newSession,
  noActive,
  sampleInvitation,
  sampleMembership,
  withOrganization,
} from "./organization-samples.js";
import { BASE_TIME, createUser, sampleSession, uniqueId } from "./samples.js";

/** The `organizations` suite's active organization: a session's, as set, read by token checks and cleared. */
export function activeOrganizationKit({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("active organization", () => {
    it("setActiveOrganization makes a member's organization active in the session and records lastActiveAt; token checks read the roles", async () => {
      const { storage, organizations, organization } = await withOrganization(makeStorage);
      const memberId = await newMember(storage, organization.id, ["admin"]);
      const sessionId = await newSession(storage, memberId);
      expect(await activeIn(storage, sessionId, memberId)).toEqual(noActive);
      expect(await organizations.setActiveOrganization(sessionId, memberId, organization.id, BASE_TIME + 50)).toBe(true);
      expect(await activeIn(storage, sessionId, memberId)).toEqual({
        activeOrgId: organization.id,
        tokenOrgId: organization.id,
        orgRoles: ["admin"],
      });
      expect((await organizations.findMembership(organization.id, memberId))?.lastActiveAt).toBe(BASE_TIME + 50);
      // Again, already active: still true, and the time moves.
      expect(await organizations.setActiveOrganization(sessionId, memberId, organization.id, BASE_TIME + 60)).toBe(true);
      expect((await organizations.findMembership(organization.id, memberId))?.lastActiveAt).toBe(BASE_TIME + 60);
      // The roles read are the membership's as it is now.
      await organizations.changeMemberRoles(organization.id, memberId, ["billing", "member"], OWNER);
      expect((await activeIn(storage, sessionId, memberId)).orgRoles).toEqual(["billing", "member"]);
      // Listed sessions carry it too.
      const listed = await storage.sessions.listByUser(memberId, BASE_TIME, 10);
      expect(listed.map((session) => session.activeOrgId)).toEqual([organization.id]);
      // null: none active.
      expect(await organizations.setActiveOrganization(sessionId, memberId, null, BASE_TIME + 70)).toBe(true);
      expect(await activeIn(storage, sessionId, memberId)).toEqual(noActive);
      expect(await organizations.setActiveOrganization(sessionId, memberId, null, BASE_TIME + 80)).toBe(true);
      expect((await organizations.findMembership(organization.id, memberId))?.lastActiveAt).toBe(BASE_TIME + 60);
    });

    it("setActiveOrganization refuses, writing nothing, a non-member, another user's session, a revoked or unknown session", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const outsiderId = await createUser(storage);
      const outsiderSession = await newSession(storage, outsiderId);
      const ownerSession = await newSession(storage, ownerId);
      expect(await organizations.setActiveOrganization(outsiderSession, outsiderId, organization.id, BASE_TIME + 1)).toBe(false);
      expect(await activeIn(storage, outsiderSession, outsiderId)).toEqual(noActive);
      expect(await organizations.setActiveOrganization(outsiderSession, ownerId, organization.id, BASE_TIME + 1)).toBe(false);
      expect(await organizations.setActiveOrganization(outsiderSession, ownerId, null, BASE_TIME + 1)).toBe(false);
      expect(await activeIn(storage, outsiderSession, outsiderId)).toEqual(noActive);
      expect(await organizations.setActiveOrganization(ownerSession, ownerId, uniqueId("org"), BASE_TIME + 1)).toBe(false);
      expect(await organizations.setActiveOrganization(uniqueId("session"), ownerId, organization.id, BASE_TIME + 1)).toBe(false);
      await storage.sessions.revokeSession(ownerSession, BASE_TIME + 2);
      expect(await organizations.setActiveOrganization(ownerSession, ownerId, organization.id, BASE_TIME + 3)).toBe(false);
      expect((await storage.sessions.findSession(ownerSession))?.activeOrgId ?? null).toBeNull();
      expect((await organizations.findMembership(organization.id, ownerId))?.lastActiveAt).toBeNull();
    });

    it("OR-7: a member removed, or an organization deleted, while sessions switch to it is active in none of them afterwards", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const removed = await newMember(storage, organization.id);
      const removedSessions = await concurrently(5, () => newSession(storage, removed));
      const results = await Promise.all([
        ...removedSessions.map((sessionId, index) =>
          organizations.setActiveOrganization(sessionId, removed, organization.id, BASE_TIME + index),
        ),
        organizations.removeMember(organization.id, removed, OWNER),
      ]);
      expect(results.at(-1)).toBe("done");
      for (const sessionId of removedSessions) expect(await activeIn(storage, sessionId, removed)).toEqual(noActive);

      const members = await concurrently(5, () => newMember(storage, organization.id));
      const sessions = await concurrently(5, (index) => newSession(storage, members[index] as string));
      const invitations = await concurrently(5, async () => {
        const invitation = sampleInvitation(organization.id, ownerId);
        await organizations.createInvitation(invitation);
        return invitation;
      });
      const invitees = await concurrently(5, () => createUser(storage));
      const [deleted] = await Promise.all([
        organizations.deleteOrganization(organization.id),
        ...sessions.map((sessionId, index) =>
          organizations.setActiveOrganization(sessionId, members[index] as string, organization.id, BASE_TIME + index),
        ),
        ...invitations.map((invitation, index) =>
          organizations.acceptInvitation({
            tokenHash: invitation.tokenHash,
            userId: invitees[index] as string,
            email: invitation.email,
            now: BASE_TIME + index,
          }),
        ),
      ]);
      expect(deleted).toBe(true);
      expect(await organizations.findOrganization(organization.id)).toBeNull();
      for (const [index, sessionId] of sessions.entries()) {
        expect(await activeIn(storage, sessionId, members[index] as string)).toEqual(noActive);
      }
      for (const userId of [...members, ...invitees, ownerId]) {
        expect(await organizations.findMembership(organization.id, userId)).toBeNull();
        expect(await organizations.listUserOrganizations(userId)).toEqual([]);
      }
    });

    it("clearActiveOrganization clears the organization from every session that has it, and counts them", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const memberId = await newMember(storage, organization.id);
      await organizations.addMember(sampleMembership(other.id, memberId));
      const sessions = [
        [await newSession(storage, ownerId), ownerId],
        [await newSession(storage, ownerId), ownerId],
        [await newSession(storage, memberId), memberId],
      ] as const;
      for (const [sessionId, userId] of sessions) {
        await organizations.setActiveOrganization(sessionId, userId, organization.id, BASE_TIME + 1);
      }
      // A session that begins with it active (a re-authentication keeps the organization).
      const begun = sampleSession(memberId, { activeOrgId: organization.id });
      await storage.sessions.createSession(begun);
      expect(await activeIn(storage, begun.id, memberId)).toEqual({
        activeOrgId: organization.id,
        tokenOrgId: organization.id,
        orgRoles: ["member"],
      });
      const elsewhere = await newSession(storage, memberId);
      await organizations.setActiveOrganization(elsewhere, memberId, other.id, BASE_TIME + 1);
      expect(await organizations.clearActiveOrganization(organization.id)).toBe(4);
      for (const [sessionId, userId] of [...sessions, [begun.id, memberId] as const]) {
        expect(await activeIn(storage, sessionId, userId)).toEqual(noActive);
      }
      expect((await activeIn(storage, elsewhere, memberId)).activeOrgId).toBe(other.id);
      expect(await organizations.clearActiveOrganization(organization.id)).toBe(0);
      // The memberships stay.
      expect(await organizations.findMembership(organization.id, memberId)).not.toBeNull();
    });
  });
}
