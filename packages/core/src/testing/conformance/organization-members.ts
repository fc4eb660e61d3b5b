import type { MembershipRecord, OrganizationRecord } from "../../storage/organization-store.js";
import type { SuiteContext } from "./harness.js";
import {
  OWNER,
  activeIn,
  newMember,
  newSession,
  noActive,
  organizationsOf,
  ownerCount,
  sampleMembership,
  sampleOrganization,
  withOrganization,
} from "./organization-samples.js";
import { BASE_TIME, createUser, uniqueId } from "./samples.js";

/** The `organizations` suite's members: adding, listing, changing roles and removing them, the last owner kept under races. */
export function organizationMembersKit({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("members", () => {
    it("addMember adds a membership once; an unknown organization or an existing member is refused", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const userId = await createUser(storage);
      const membership = { ...sampleMembership(organization.id, userId, ["admin", "billing"]), lastActiveAt: BASE_TIME + 9 };
      expect(await organizations.addMember(membership)).toBe(true);
      expect(await organizations.findMembership(organization.id, userId)).toEqual(membership);
      expect(await organizations.addMember(sampleMembership(organization.id, userId, [OWNER]))).toBe(false);
      expect(await organizations.addMember(sampleMembership(organization.id, ownerId))).toBe(false);
      expect(await organizations.findMembership(organization.id, userId)).toEqual(membership);
      expect(await organizations.findMembership(organization.id, ownerId)).toEqual(
        sampleMembership(organization.id, ownerId, [OWNER]),
      );
      const unknown = uniqueId("org");
      expect(await organizations.addMember(sampleMembership(unknown, userId))).toBe(false);
      expect(await organizations.findMembership(unknown, userId)).toBeNull();
      expect(await organizations.findMembership(organization.id, uniqueId("user"))).toBeNull();
    });

    it("listMembers pages an organization's members by user id, `limit` at a time after the cursor", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const memberIds = [ownerId];
      for (let n = 0; n < 4; n += 1) memberIds.push(await newMember(storage, organization.id));
      await newMember(storage, (await withOrganization(async () => storage)).organization.id);
      const whole = await organizations.listMembers(organization.id, { limit: 100 });
      expect(whole.nextCursor).toBeNull();
      expect(whole.items.map((membership) => membership.userId).sort()).toEqual([...memberIds].sort());
      const paged: MembershipRecord[] = [];
      let cursor: string | undefined;
      for (let pages = 1; pages <= 3; pages += 1) {
        const page = await organizations.listMembers(organization.id, { cursor, limit: 2 });
        paged.push(...page.items);
        expect(page.nextCursor).toBe(pages < 3 ? (page.items.at(-1)?.userId ?? null) : null);
        expect(page.items).toHaveLength(pages < 3 ? 2 : 1);
        cursor = page.nextCursor ?? undefined;
      }
      expect(paged).toEqual(whole.items);
      expect((await organizations.listMembers(organization.id, { limit: 5 })).nextCursor).toBeNull();
      expect((await organizations.listMembers(organization.id, { limit: 4 })).nextCursor).toBe(whole.items[3]?.userId);
      expect(await organizations.listMembers(uniqueId("org"), { limit: 10 })).toEqual({ items: [], nextCursor: null });
    });

    it("listUserOrganizations lists each organization a user belongs to with the membership, by organization id", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const userId = await createUser(storage);
      const ownerId = await createUser(storage);
      const prefix = uniqueId("org");
      const [first, second, third] = ["a", "b", "c"].map((suffix) => sampleOrganization({ id: `${prefix}-${suffix}` })) as [
        OrganizationRecord,
        OrganizationRecord,
        OrganizationRecord,
      ];
      for (const organization of [third, second, first]) {
        await organizations.createOrganization(organization, sampleMembership(organization.id, ownerId, [OWNER]));
      }
      await organizations.addMember(sampleMembership(second.id, userId, ["billing"]));
      await organizations.addMember(sampleMembership(first.id, userId, ["admin", "member"]));
      expect(await organizations.listUserOrganizations(userId)).toEqual([
        { organization: first, membership: sampleMembership(first.id, userId, ["admin", "member"]) },
        { organization: second, membership: sampleMembership(second.id, userId, ["billing"]) },
      ]);
      expect(await organizations.listUserOrganizations(uniqueId("user"))).toEqual([]);
    });

    it("changeMemberRoles sets a member's roles; a non-member is not_found; the last owner keeps the owner role", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const memberId = await newMember(storage, organization.id);
      expect(await organizations.changeMemberRoles(organization.id, memberId, ["admin", "billing"], OWNER)).toBe("done");
      expect((await organizations.findMembership(organization.id, memberId))?.roles).toEqual(["admin", "billing"]);
      expect(await organizations.changeMemberRoles(organization.id, ownerId, ["admin"], OWNER)).toBe("last_owner");
      expect((await organizations.findMembership(organization.id, ownerId))?.roles).toEqual([OWNER]);
      expect(await organizations.changeMemberRoles(organization.id, ownerId, [OWNER, "admin"], OWNER)).toBe("done");
      expect(await organizations.changeMemberRoles(organization.id, memberId, [OWNER], OWNER)).toBe("done");
      expect(await organizations.changeMemberRoles(organization.id, ownerId, ["member"], OWNER)).toBe("done");
      expect(await organizations.changeMemberRoles(organization.id, memberId, ["member"], OWNER)).toBe("last_owner");
      expect(await ownerCount(organizations, organization.id)).toBe(1);
      expect(await organizations.changeMemberRoles(organization.id, await createUser(storage), ["member"], OWNER)).toBe(
        "not_found",
      );
      expect(await organizations.changeMemberRoles(uniqueId("org"), memberId, ["member"], OWNER)).toBe("not_found");
    });

    it("removeMember removes a member and clears the organization from that member's sessions only; the last owner stays", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const memberId = await newMember(storage, organization.id, ["admin"]);
      await organizations.addMember(sampleMembership(other.id, memberId));
      const inOrganization = await newSession(storage, memberId);
      const inOther = await newSession(storage, memberId);
      const ownerSession = await newSession(storage, ownerId);
      await organizations.setActiveOrganization(inOrganization, memberId, organization.id, BASE_TIME + 1);
      await organizations.setActiveOrganization(inOther, memberId, other.id, BASE_TIME + 1);
      await organizations.setActiveOrganization(ownerSession, ownerId, organization.id, BASE_TIME + 1);

      expect(await organizations.removeMember(organization.id, ownerId, OWNER)).toBe("last_owner");
      expect(await organizations.findMembership(organization.id, ownerId)).not.toBeNull();
      expect(await organizations.removeMember(organization.id, memberId, OWNER)).toBe("done");
      expect(await organizations.findMembership(organization.id, memberId)).toBeNull();
      expect(await organizations.findMembership(other.id, memberId)).not.toBeNull();
      expect(await activeIn(storage, inOrganization, memberId)).toEqual(noActive);
      expect(await activeIn(storage, inOther, memberId)).toEqual({
        activeOrgId: other.id,
        tokenOrgId: other.id,
        orgRoles: ["member"],
      });
      expect(await activeIn(storage, ownerSession, ownerId)).toEqual({
        activeOrgId: organization.id,
        tokenOrgId: organization.id,
        orgRoles: [OWNER],
      });
      expect(await organizations.removeMember(organization.id, memberId, OWNER)).toBe("not_found");
      expect(await organizations.removeMember(uniqueId("org"), ownerId, OWNER)).toBe("not_found");
      // A member no longer: the organization cannot be made active again.
      expect(await organizations.setActiveOrganization(inOrganization, memberId, organization.id, BASE_TIME + 2)).toBe(false);
    });

    it("OR-3: the last owner is kept: two owners demoting (and removing) each other at once leave one owner", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const changes = [
        (orgId: string, userId: string) => organizations.changeMemberRoles(orgId, userId, ["member"], OWNER),
        (orgId: string, userId: string) => organizations.removeMember(orgId, userId, OWNER),
      ];
      for (let round = 0; round < 8; round += 1) {
        const { organization, ownerId } = await withOrganization(async () => storage);
        const secondOwner = await newMember(storage, organization.id, [OWNER, "admin"]);
        const first = changes[round % 2] as (typeof changes)[number];
        const second = changes[Math.floor(round / 2) % 2] as (typeof changes)[number];
        const pair = round < 4 ? [ownerId, secondOwner] : [secondOwner, ownerId];
        const results = await Promise.all([
          first(organization.id, pair[0] as string),
          second(organization.id, pair[1] as string),
        ]);
        expect([...results].sort()).toEqual(["done", "last_owner"]);
        expect(await ownerCount(organizations, organization.id)).toBe(1);
      }
    });
  });
}
