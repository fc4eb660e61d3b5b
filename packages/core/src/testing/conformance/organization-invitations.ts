import type { InvitationRecord } from "../../storage/organization-store.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { DAY, OWNER, sampleInvitation, sampleMembership, withOrganization } from "./organization-samples.js";
import { BASE_TIME, createUser, uniqueHash, uniqueId } from "./samples.js";

/** The `organizations` suite's invitations: creation, listing, replacement, revocation, and their one-time acceptance under races. */
export function organizationInvitationsKit({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("invitations", () => {
    it("createInvitation stores an invitation that findInvitation returns for its organization only", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const invitation = sampleInvitation(organization.id, ownerId, { roles: ["admin", "billing"] });
      await organizations.createInvitation(invitation);
      expect(await organizations.findInvitation(organization.id, invitation.id)).toEqual(invitation);
      expect(await organizations.findInvitation(other.id, invitation.id)).toBeNull();
      expect(await organizations.findInvitation(organization.id, uniqueId("invitation"))).toBeNull();
    });

    it("createInvitation revokes, at its createdAt, the pending invitations of the same organization and address, and no other", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const email = `${uniqueId("invitee")}@example.com`;
      const expired = sampleInvitation(organization.id, ownerId, {
        email,
        createdAt: BASE_TIME - 10,
        expiresAt: BASE_TIME - 1,
      });
      const earlier = sampleInvitation(organization.id, ownerId, { email });
      const elsewhere = sampleInvitation(other.id, ownerId, { email });
      const someoneElse = sampleInvitation(organization.id, ownerId);
      for (const invitation of [expired, earlier, elsewhere, someoneElse]) await organizations.createInvitation(invitation);
      const later = sampleInvitation(organization.id, ownerId, { email, createdAt: BASE_TIME + 10 });
      await organizations.createInvitation(later);
      expect(await organizations.findInvitation(organization.id, earlier.id)).toEqual({
        ...earlier,
        revokedAt: BASE_TIME + 10,
      });
      expect(await organizations.findInvitation(organization.id, expired.id)).toEqual(expired);
      expect(await organizations.findInvitation(other.id, elsewhere.id)).toEqual(elsewhere);
      expect(await organizations.findInvitation(organization.id, someoneElse.id)).toEqual(someoneElse);
      expect(await organizations.findInvitation(organization.id, later.id)).toEqual(later);
      const refused = await organizations.acceptInvitation({
        tokenHash: earlier.tokenHash,
        userId: await createUser(storage),
        email,
        now: BASE_TIME + 11,
      });
      expect(refused).toEqual({ outcome: "refused" });
    });

    it("of 10 concurrent invitations for one address exactly one stays pending, and only its secret is accepted", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const email = `${uniqueId("invitee")}@example.com`;
      const invitations = Array.from({ length: 10 }, (_, index) =>
        sampleInvitation(organization.id, ownerId, { email, createdAt: BASE_TIME + index }),
      );
      // Other addresses invited at the same time stay pending.
      const others = Array.from({ length: 5 }, () => sampleInvitation(organization.id, ownerId));
      await Promise.all([...invitations, ...others].map((invitation) => organizations.createInvitation(invitation)));
      const pendingNow = await organizations.listInvitations(organization.id, BASE_TIME + 100);
      const forAddress = pendingNow.filter((invitation) => invitation.email === email);
      expect(forAddress).toHaveLength(1);
      expect(pendingNow).toHaveLength(6);
      const userId = await createUser(storage);
      const results = await concurrently(10, (index) =>
        organizations.acceptInvitation({
          tokenHash: (invitations[index] as InvitationRecord).tokenHash,
          userId,
          email,
          now: BASE_TIME + 100,
        }),
      );
      expect(countWhere(results, (result) => result.outcome === "accepted")).toBe(1);
      const accepted = invitations[results.findIndex((result) => result.outcome === "accepted")] as InvitationRecord;
      expect(accepted.id).toBe(forAddress[0]?.id);
    });

    it("listInvitations lists an organization's pending invitations only, newest first", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const now = BASE_TIME + 100;
      const [oldest, middle, newest] = [1, 2, 3].map((n) =>
        sampleInvitation(organization.id, ownerId, { createdAt: BASE_TIME + n }),
      ) as [InvitationRecord, InvitationRecord, InvitationRecord];
      const expired = sampleInvitation(organization.id, ownerId, { createdAt: BASE_TIME + 4, expiresAt: now });
      const revoked = sampleInvitation(organization.id, ownerId, { createdAt: BASE_TIME + 5 });
      const accepted = sampleInvitation(organization.id, ownerId, { createdAt: BASE_TIME + 6 });
      for (const invitation of [middle, newest, oldest, expired, revoked, accepted, sampleInvitation(other.id, ownerId)]) {
        await organizations.createInvitation(invitation);
      }
      expect(await organizations.revokeInvitation(organization.id, revoked.id, BASE_TIME + 7)).toBe(true);
      const accepter = await createUser(storage);
      expect(
        (
          await organizations.acceptInvitation({
            tokenHash: accepted.tokenHash,
            userId: accepter,
            email: accepted.email,
            now: BASE_TIME + 8,
          })
        ).outcome,
      ).toBe("accepted");
      expect(await organizations.listInvitations(organization.id, now)).toEqual([newest, middle, oldest]);
      expect((await organizations.listInvitations(organization.id, BASE_TIME + 9)).map((each) => each.id)).toEqual([
        expired.id,
        newest.id,
        middle.id,
        oldest.id,
      ]);
      expect(await organizations.listInvitations(uniqueId("org"), now)).toEqual([]);
    });

    it("replaceInvitationToken gives a pending invitation a new secret and expiry: the old secret is refused, the new one accepted", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const invitation = sampleInvitation(organization.id, ownerId);
      await organizations.createInvitation(invitation);
      const tokenHash = uniqueHash();
      expect(
        await organizations.replaceInvitationToken(organization.id, invitation.id, tokenHash, BASE_TIME + DAY, BASE_TIME + 1),
      ).toBe(true);
      expect(await organizations.findInvitation(organization.id, invitation.id)).toEqual({
        ...invitation,
        tokenHash,
        expiresAt: BASE_TIME + DAY,
      });
      const userId = await createUser(storage);
      const accept = (hash: string) =>
        organizations.acceptInvitation({ tokenHash: hash, userId, email: invitation.email, now: BASE_TIME + 2 });
      expect(await accept(invitation.tokenHash)).toEqual({ outcome: "refused" });
      expect((await accept(tokenHash)).outcome).toBe("accepted");
      // Not pending any more: nothing to replace.
      expect(
        await organizations.replaceInvitationToken(organization.id, invitation.id, uniqueHash(), BASE_TIME + DAY, BASE_TIME + 3),
      ).toBe(false);
    });

    it("replaceInvitationToken and revokeInvitation refuse an invitation not pending, or of another organization", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const invitation = sampleInvitation(organization.id, ownerId, { expiresAt: BASE_TIME + 10 });
      await organizations.createInvitation(invitation);
      expect(await organizations.replaceInvitationToken(other.id, invitation.id, uniqueHash(), BASE_TIME + DAY, BASE_TIME)).toBe(
        false,
      );
      expect(await organizations.revokeInvitation(other.id, invitation.id, BASE_TIME)).toBe(false);
      expect(
        await organizations.replaceInvitationToken(organization.id, invitation.id, uniqueHash(), BASE_TIME + DAY, BASE_TIME + 10),
      ).toBe(false);
      expect(await organizations.revokeInvitation(organization.id, invitation.id, BASE_TIME + 10)).toBe(false);
      expect(await organizations.findInvitation(organization.id, invitation.id)).toEqual(invitation);
      expect(await organizations.revokeInvitation(organization.id, invitation.id, BASE_TIME + 9)).toBe(true);
      expect(await organizations.findInvitation(organization.id, invitation.id)).toEqual({
        ...invitation,
        revokedAt: BASE_TIME + 9,
      });
      expect(await organizations.revokeInvitation(organization.id, invitation.id, BASE_TIME + 9)).toBe(false);
      expect(
        await organizations.replaceInvitationToken(organization.id, invitation.id, uniqueHash(), BASE_TIME + DAY, BASE_TIME + 9),
      ).toBe(false);
      expect(await organizations.revokeInvitation(organization.id, uniqueId("invitation"), BASE_TIME)).toBe(false);
    });

    it("acceptInvitation spends the invitation and adds the membership with its roles; a member already keeps their roles", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const userId = await createUser(storage);
      const invitation = sampleInvitation(organization.id, ownerId, { roles: ["admin", "billing"] });
      await organizations.createInvitation(invitation);
      const now = BASE_TIME + 20;
      const spent = { ...invitation, acceptedAt: now, acceptedBy: userId };
      const membership = { orgId: organization.id, userId, roles: ["admin", "billing"], createdAt: now, lastActiveAt: null };
      expect(
        await organizations.acceptInvitation({ tokenHash: invitation.tokenHash, userId, email: invitation.email, now }),
      ).toEqual({
        outcome: "accepted",
        invitation: spent,
        membership,
      });
      expect(await organizations.findInvitation(organization.id, invitation.id)).toEqual(spent);
      expect(await organizations.findMembership(organization.id, userId)).toEqual(membership);
      expect(await organizations.listInvitations(organization.id, now)).toEqual([]);
      expect(
        await organizations.acceptInvitation({
          tokenHash: invitation.tokenHash,
          userId,
          email: invitation.email,
          now: now + 1,
        }),
      ).toEqual({ outcome: "refused" });

      // The owner, invited again: the invitation is spent, the owner's roles unchanged.
      const again = sampleInvitation(organization.id, ownerId, { roles: ["member"] });
      await organizations.createInvitation(again);
      expect(
        await organizations.acceptInvitation({ tokenHash: again.tokenHash, userId: ownerId, email: again.email, now: now + 2 }),
      ).toEqual({
        outcome: "already_member",
        invitation: { ...again, acceptedAt: now + 2, acceptedBy: ownerId },
        membership: sampleMembership(organization.id, ownerId, [OWNER]),
      });
      expect(await organizations.findMembership(organization.id, ownerId)).toEqual(
        sampleMembership(organization.id, ownerId, [OWNER]),
      );
      expect((await organizations.findInvitation(organization.id, again.id))?.acceptedBy).toBe(ownerId);
    });

    it("OR-5: an invitation for another address, a revoked, expired or replaced (resent) one is refused, and nothing is written", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const userId = await createUser(storage);
      const now = BASE_TIME + 50;
      const forOther = sampleInvitation(organization.id, ownerId);
      const revoked = sampleInvitation(organization.id, ownerId);
      const expired = sampleInvitation(organization.id, ownerId, { expiresAt: now });
      const resent = sampleInvitation(organization.id, ownerId);
      for (const invitation of [forOther, revoked, expired, resent]) await organizations.createInvitation(invitation);
      await organizations.revokeInvitation(organization.id, revoked.id, now - 1);
      await organizations.replaceInvitationToken(organization.id, resent.id, uniqueHash(), now + DAY, now - 1);
      const attempts = [
        { tokenHash: forOther.tokenHash, email: `${uniqueId("someone")}@example.com` },
        { tokenHash: forOther.tokenHash, email: forOther.email.toUpperCase() },
        { tokenHash: revoked.tokenHash, email: revoked.email },
        { tokenHash: expired.tokenHash, email: expired.email },
        { tokenHash: resent.tokenHash, email: resent.email },
        { tokenHash: uniqueHash(), email: forOther.email },
      ];
      for (const attempt of attempts) {
        expect(await organizations.acceptInvitation({ ...attempt, userId, now })).toEqual({ outcome: "refused" });
      }
      expect(await organizations.findMembership(organization.id, userId)).toBeNull();
      expect(await organizations.findInvitation(organization.id, forOther.id)).toEqual(forOther);
      expect((await organizations.findInvitation(organization.id, revoked.id))?.acceptedAt).toBeNull();
      expect(await organizations.findInvitation(organization.id, expired.id)).toEqual(expired);
      expect((await organizations.findInvitation(organization.id, resent.id))?.acceptedAt).toBeNull();
    });

    it("OR-6: an invitation is accepted once under 20 concurrent acceptances", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const invitation = sampleInvitation(organization.id, ownerId, { roles: ["admin"] });
      await organizations.createInvitation(invitation);
      const users = await concurrently(20, () => createUser(storage));
      const results = await concurrently(20, (index) =>
        organizations.acceptInvitation({
          tokenHash: invitation.tokenHash,
          userId: users[index] as string,
          email: invitation.email,
          now: BASE_TIME + 30,
        }),
      );
      expect(countWhere(results, (result) => result.outcome === "accepted")).toBe(1);
      expect(countWhere(results, (result) => result.outcome === "refused")).toBe(19);
      const winner = users[results.findIndex((result) => result.outcome === "accepted")] as string;
      expect((await organizations.findInvitation(organization.id, invitation.id))?.acceptedBy).toBe(winner);
      const { items } = await organizations.listMembers(organization.id, { limit: 100 });
      expect(items.map((membership) => membership.userId).sort()).toEqual([ownerId, winner].sort());

      // One user's 20 concurrent acceptances of a fresh invitation: one membership.
      const second = sampleInvitation(organization.id, ownerId);
      await organizations.createInvitation(second);
      const userId = await createUser(storage);
      const own = await concurrently(20, () =>
        organizations.acceptInvitation({ tokenHash: second.tokenHash, userId, email: second.email, now: BASE_TIME + 31 }),
      );
      expect(countWhere(own, (result) => result.outcome === "accepted")).toBe(1);
      expect(countWhere(own, (result) => result.outcome === "refused")).toBe(19);
      expect((await organizations.listMembers(organization.id, { limit: 100 })).items).toHaveLength(3);
    });
  });
}
