import type { OrganizationRecord } from "../../storage/organization-store.js";
import { activeOrganizationKit } from "./active-organization.js";
import { type SuiteContext, tryToMutate } from "./harness.js";
import { organizationDomainsKit } from "./organization-domains.js";
import { organizationInvitationsKit } from "./organization-invitations.js";
import { organizationMembersKit } from "./organization-members.js";
import { organizationRecordsKit } from "./organization-records.js";
import { OWNER, sampleDomain, sampleInvitation, sampleMembership, withOrganization } from "./organization-samples.js";
import { BASE_TIME, createUser } from "./samples.js";

export { sampleDomain, sampleInvitation, sampleMembership, sampleOrganization } from "./organization-samples.js";

/** Registers the `organizations` suite: organizations, memberships, invitations and domains, each atomic write under races. */
export function organizationsSuite(context: SuiteContext): void {
  const {
    test: { describe, it, expect },
    makeStorage,
  } = context;
  describe("organizations", () => {
    organizationRecordsKit(context);
    organizationMembersKit(context);
    activeOrganizationKit(context);
    organizationInvitationsKit(context);
    organizationDomainsKit(context);

    it("records are copied in and out: changing what was passed in or handed out changes nothing stored", async () => {
      const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage, {
        rules: { requireSecondFactor: false, signInMethods: ["password"] },
      });
      const kept = structuredClone(organization);
      tryToMutate(() => {
        organization.name = "Changed";
        organization.rules.signInMethods?.push("provider");
      });
      const membership = sampleMembership(organization.id, await createUser(storage), ["admin"]);
      await organizations.addMember(membership);
      tryToMutate(() => membership.roles.push(OWNER));
      const invitation = sampleInvitation(organization.id, ownerId, { roles: ["billing"] });
      await organizations.createInvitation(invitation);
      tryToMutate(() => invitation.roles.push(OWNER));
      const domain = sampleDomain(organization.id);
      await organizations.addDomain(domain);
      tryToMutate(() => {
        domain.verifiedAt = BASE_TIME;
      });

      const read = [
        await organizations.findOrganization(kept.id),
        await organizations.findOrganizationBySlug(kept.slug),
        ...(await organizations.listUserOrganizations(ownerId)).map((each) => each.organization),
      ] as OrganizationRecord[];
      for (const record of read) {
        tryToMutate(() => {
          record.name = "Changed";
          record.rules.signInMethods?.push("directory");
        });
      }
      for (const record of (await organizations.listMembers(kept.id, { limit: 10 })).items) {
        tryToMutate(() => record.roles.push("changed"));
      }
      const found = await organizations.findInvitation(kept.id, invitation.id);
      tryToMutate(() => found?.roles.push("changed"));
      for (const record of await organizations.listInvitations(kept.id, BASE_TIME))
        tryToMutate(() => record.roles.push("changed"));
      for (const record of await organizations.listDomains(kept.id)) {
        tryToMutate(() => {
          record.verifiedAt = BASE_TIME;
        });
      }

      expect(await organizations.findOrganization(kept.id)).toEqual(kept);
      expect((await organizations.findMembership(kept.id, membership.userId))?.roles).toEqual(["admin"]);
      expect((await organizations.findMembership(kept.id, ownerId))?.roles).toEqual([OWNER]);
      expect((await organizations.findInvitation(kept.id, invitation.id))?.roles).toEqual(["billing"]);
      expect((await organizations.listDomains(kept.id))[0]?.verifiedAt).toBeNull();
    });
  });
}
