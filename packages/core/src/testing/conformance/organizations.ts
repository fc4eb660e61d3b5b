import type { MembershipRecord, OrganizationRecord, OrganizationStore } from "../../storage/organization-store.js";
import type { Storage } from "../../storage/types.js";
import type { SuiteContext } from "./harness.js";
import { BASE_TIME, createUser, uniqueId } from "./samples.js";

/** An organization with a fresh id and slug, at {@link BASE_TIME}. */
export function sampleOrganization(overrides: Partial<OrganizationRecord> = {}): OrganizationRecord {
  const id = uniqueId("org");
  return {
    id,
    slug: `s-${id
      .slice(-20)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, "")}`,
    name: "Sample organization",
    rules: { requireSecondFactor: false, signInMethods: null },
    createdAt: BASE_TIME,
    updatedAt: BASE_TIME,
    ...overrides,
  };
}

/** A membership of `userId` in `orgId` with `roles`, at {@link BASE_TIME}. */
export function sampleMembership(orgId: string, userId: string, roles: string[] = ["member"]): MembershipRecord {
  return { orgId, userId, roles, createdAt: BASE_TIME, lastActiveAt: null };
}

function organizationsOf(storage: Storage): OrganizationStore {
  if (storage.organizations === undefined) {
    throw new Error("this storage has no organizations store: implement it, or opt out with skip: { organizations: reason }");
  }
  return storage.organizations;
}

/** Registers the `organizations` suite: organizations, memberships, invitations and domains, each atomic write under races. */
export function organizationsSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
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
    });

    it("a taken slug refuses a second organization and writes nothing", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const ownerId = await createUser(storage);
      const first = sampleOrganization();
      await organizations.createOrganization(first, sampleMembership(first.id, ownerId, ["owner"]));
      const second = sampleOrganization({ slug: first.slug });
      expect(await organizations.createOrganization(second, sampleMembership(second.id, ownerId, ["owner"]))).toBe(false);
      expect(await organizations.findOrganization(second.id)).toBeNull();
    });
  });
}
