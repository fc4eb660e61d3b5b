import type { OrganizationRecord } from "../../storage/organization-store.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import {
  DAY,
  OWNER,
  activeIn,
  newMember,
  newSession,
  noActive,
  organizationsOf,
  sampleDomain,
  sampleInvitation,
  sampleMembership,
  sampleOrganization,
  withOrganization,
} from "./organization-samples.js";
import { BASE_TIME, createUser, uniqueHash, uniqueId } from "./samples.js";

/** The `organizations` suite's organizations: creation with the owner, reads by id, slug and domain, changes, deletion, the instance's listing. */
export function organizationRecordsKit({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("organizations", () => {
    it("an organization is created with its owner, and read back by id and slug", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const ownerId = await createUser(storage);
      const organization = sampleOrganization();
      expect(await organizations.createOrganization(organization, sampleMembership(organization.id, ownerId, ["owner"]))).toBe(
        true,
      );
      expect(await organizations.findOrganization(organization.id)).toEqual(organization);
      expect(await organizations.findOrganizationBySlug(organization.slug)).toEqual(organization);
      expect(await organizations.findMembership(organization.id, ownerId)).toEqual(
        sampleMembership(organization.id, ownerId, ["owner"]),
      );
      expect(await organizations.findOrganization(uniqueId("org"))).toBeNull();
      expect(await organizations.findOrganizationBySlug(`${organization.slug}-x`)).toBeNull();
    });

    it("rules are stored and read back whole", async () => {
      const rules = { requireSecondFactor: true, signInMethods: ["passkey" as const, "provider" as const] };
      const { organizations, organization } = await withOrganization(makeStorage, { rules, name: "Zoë & Søn 'Ltd' \u{1F600}" });
      expect(await organizations.findOrganization(organization.id)).toEqual(organization);
    });

    it("a taken slug refuses a second organization and writes nothing", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const ownerId = await createUser(storage);
      const otherId = await createUser(storage);
      const first = sampleOrganization();
      await organizations.createOrganization(first, sampleMembership(first.id, ownerId, ["owner"]));
      const second = sampleOrganization({ slug: first.slug });
      expect(await organizations.createOrganization(second, sampleMembership(second.id, otherId, ["owner"]))).toBe(false);
      expect(await organizations.findOrganization(second.id)).toBeNull();
      expect(await organizations.findMembership(second.id, otherId)).toBeNull();
      expect(await organizations.listUserOrganizations(otherId)).toEqual([]);
    });

    it("a slug is taken once under 20 concurrent creations: exactly one organization is made, with its owner alone", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const owners = await concurrently(20, () => createUser(storage));
      const slug = sampleOrganization().slug;
      const candidates = owners.map(() => sampleOrganization({ slug }));
      const results = await concurrently(20, (index) =>
        organizations.createOrganization(
          candidates[index] as OrganizationRecord,
          sampleMembership((candidates[index] as OrganizationRecord).id, owners[index] as string, [OWNER]),
        ),
      );
      expect(countWhere(results, (created) => created)).toBe(1);
      const winner = results.indexOf(true);
      expect(await organizations.findOrganizationBySlug(slug)).toEqual(candidates[winner]);
      for (const [index, candidate] of candidates.entries()) {
        if (index === winner) continue;
        expect(await organizations.findOrganization(candidate.id)).toBeNull();
        expect(await organizations.listUserOrganizations(owners[index] as string)).toEqual([]);
      }
    });

    it("updateOrganization changes name, slug and rules and answers the record; a taken slug changes nothing; an unknown one is null", async () => {
      const { storage, organizations, organization } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const changes = {
        name: "Renamed",
        slug: sampleOrganization().slug,
        rules: { requireSecondFactor: true, signInMethods: ["password" as const] },
        updatedAt: BASE_TIME + 5,
      };
      const updated = { ...organization, ...changes };
      expect(await organizations.updateOrganization(organization.id, changes)).toEqual(updated);
      expect(await organizations.findOrganization(organization.id)).toEqual(updated);
      expect(await organizations.findOrganizationBySlug(changes.slug)).toEqual(updated);
      expect(await organizations.findOrganizationBySlug(organization.slug)).toBeNull();

      expect(
        await organizations.updateOrganization(organization.id, { name: "Only the name", updatedAt: BASE_TIME + 6 }),
      ).toEqual({
        ...updated,
        name: "Only the name",
        updatedAt: BASE_TIME + 6,
      });
      expect(
        await organizations.updateOrganization(organization.id, { slug: other.slug, name: "Taken", updatedAt: BASE_TIME + 7 }),
      ).toBe("slug_taken");
      expect(await organizations.findOrganization(organization.id)).toEqual({
        ...updated,
        name: "Only the name",
        updatedAt: BASE_TIME + 6,
      });
      expect(await organizations.findOrganization(other.id)).toEqual(other);
      expect(await organizations.updateOrganization(uniqueId("org"), { name: "x", updatedAt: BASE_TIME })).toBeNull();
    });

    it("deleteOrganization removes it with its members, invitations and domains, clears it from sessions, and frees its slug", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const memberId = await newMember(storage, organization.id, ["admin"]);
      const other = (await withOrganization(async () => storage)).organization;
      await organizations.addMember(sampleMembership(other.id, memberId));
      const invitation = sampleInvitation(organization.id, ownerId);
      await organizations.createInvitation(invitation);
      const domain = sampleDomain(organization.id);
      await organizations.addDomain(domain);
      expect(await organizations.markDomainVerified(organization.id, domain.domain, BASE_TIME + 1)).toBe("verified");
      const ownerSession = await newSession(storage, ownerId);
      const memberSession = await newSession(storage, memberId);
      const elsewhere = await newSession(storage, memberId);
      expect(await organizations.setActiveOrganization(ownerSession, ownerId, organization.id, BASE_TIME + 2)).toBe(true);
      expect(await organizations.setActiveOrganization(memberSession, memberId, organization.id, BASE_TIME + 2)).toBe(true);
      expect(await organizations.setActiveOrganization(elsewhere, memberId, other.id, BASE_TIME + 2)).toBe(true);

      expect(await organizations.deleteOrganization(organization.id)).toBe(true);
      expect(await organizations.findOrganization(organization.id)).toBeNull();
      expect(await organizations.findOrganizationBySlug(organization.slug)).toBeNull();
      expect(await organizations.findMembership(organization.id, ownerId)).toBeNull();
      expect(await organizations.listMembers(organization.id, { limit: 10 })).toEqual({ items: [], nextCursor: null });
      expect(await organizations.findInvitation(organization.id, invitation.id)).toBeNull();
      expect(await organizations.listInvitations(organization.id, BASE_TIME)).toEqual([]);
      expect(
        (
          await organizations.acceptInvitation({
            tokenHash: invitation.tokenHash,
            userId: memberId,
            email: invitation.email,
            now: BASE_TIME,
          })
        ).outcome,
      ).toBe("refused");
      expect(await organizations.listDomains(organization.id)).toEqual([]);
      expect(await organizations.findOrganizationByDomain(domain.domain)).toBeNull();
      expect(await activeIn(storage, ownerSession, ownerId)).toEqual(noActive);
      expect(await activeIn(storage, memberSession, memberId)).toEqual(noActive);
      expect(await activeIn(storage, elsewhere, memberId)).toEqual({
        activeOrgId: other.id,
        tokenOrgId: other.id,
        orgRoles: ["member"],
      });
      expect((await organizations.listUserOrganizations(memberId)).map((each) => each.organization.id)).toEqual([other.id]);
      expect(await organizations.deleteOrganization(organization.id)).toBe(false);
      expect(await organizations.deleteOrganization(uniqueId("org"))).toBe(false);

      // Its slug and its domain are free again.
      const again = sampleOrganization({ slug: organization.slug });
      expect(await organizations.createOrganization(again, sampleMembership(again.id, ownerId, [OWNER]))).toBe(true);
      expect(await organizations.addDomain({ ...domain, orgId: again.id })).toBe(true);
      expect(await organizations.markDomainVerified(again.id, domain.domain, BASE_TIME + 3)).toBe("verified");
    });

    it("deleteOrganization leaves every other organization's invitations; updateOrganization keeps its own slug; unknown invitation ids change nothing", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const kept = sampleInvitation(other.id, ownerId);
      await organizations.createInvitation(kept);
      await organizations.createInvitation(sampleInvitation(organization.id, ownerId));
      const renamed = await organizations.updateOrganization(other.id, {
        slug: other.slug,
        name: "Same slug",
        updatedAt: BASE_TIME + 1,
      });
      expect(renamed).toEqual({ ...other, name: "Same slug", updatedAt: BASE_TIME + 1 });
      expect(await organizations.deleteOrganization(organization.id)).toBe(true);
      expect(await organizations.findInvitation(other.id, kept.id)).toEqual(kept);
      expect(await organizations.listInvitations(other.id, BASE_TIME)).toEqual([kept]);
      const unknown = uniqueId("invitation");
      expect(await organizations.revokeInvitation(other.id, unknown, BASE_TIME)).toBe(false);
      expect(await organizations.replaceInvitationToken(other.id, unknown, uniqueHash(), BASE_TIME + DAY, BASE_TIME)).toBe(false);
      expect(await organizations.findInvitation(other.id, unknown)).toBeNull();
    });

    it("listOrganizations pages by id: `limit` at a time after the cursor, with the next page's cursor", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const ownerId = await createUser(storage);
      const prefix = uniqueId("org");
      const made = [1, 2, 3, 4, 5].map((n) => sampleOrganization({ id: `${prefix}-${n}` }));
      for (const organization of [...made].reverse()) {
        await organizations.createOrganization(organization, sampleMembership(organization.id, ownerId, [OWNER]));
      }
      const first = await organizations.listOrganizations({ cursor: prefix, limit: 2 });
      expect(first).toEqual({ items: made.slice(0, 2), nextCursor: made[1]?.id });
      const second = await organizations.listOrganizations({ cursor: first.nextCursor as string, limit: 2 });
      expect(second).toEqual({ items: made.slice(2, 4), nextCursor: made[3]?.id });
      const third = await organizations.listOrganizations({ cursor: second.nextCursor as string, limit: 2 });
      expect(third.items[0]).toEqual(made[4]);
      const all = await organizations.listOrganizations({ limit: 100_000 });
      expect(all.nextCursor).toBeNull();
      expect(all.items.filter((organization) => organization.id.startsWith(prefix))).toEqual(made);
    });
  });
}
