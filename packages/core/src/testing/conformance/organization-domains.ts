import type { OrganizationRecord } from "../../storage/organization-store.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { organizationsOf, sampleDomain, withOrganization } from "./organization-samples.js";
import { BASE_TIME, uniqueId } from "./samples.js";

/** The `organizations` suite's domains: claims, verification by one organization only under races, removal. */
export function organizationDomainsKit({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("domains", () => {
    it("addDomain claims a domain once per organization, unverified; an unknown organization is refused; listDomains by domain", async () => {
      const { storage, organizations, organization } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const base = uniqueId("d").toLowerCase();
      const second = sampleDomain(organization.id, { domain: `b.${base}.example` });
      const first = sampleDomain(organization.id, { domain: `a.${base}.example` });
      expect(await organizations.addDomain(second)).toBe(true);
      expect(await organizations.addDomain(first)).toBe(true);
      expect(await organizations.addDomain({ ...first, verificationValue: "again" })).toBe(false);
      expect(await organizations.listDomains(organization.id)).toEqual([first, second]);
      // Another organization may claim it too: only verification is exclusive.
      expect(await organizations.addDomain({ ...first, orgId: other.id })).toBe(true);
      expect(await organizations.listDomains(other.id)).toEqual([{ ...first, orgId: other.id }]);
      expect(await organizations.addDomain(sampleDomain(uniqueId("org")))).toBe(false);
      expect(await organizations.listDomains(uniqueId("org"))).toEqual([]);
    });

    it("markDomainVerified verifies a claimed domain once (its time kept), then findOrganizationByDomain finds the organization", async () => {
      const { organizations, organization } = await withOrganization(makeStorage);
      const domain = sampleDomain(organization.id);
      await organizations.addDomain(domain);
      expect(await organizations.findOrganizationByDomain(domain.domain)).toBeNull();
      expect(await organizations.markDomainVerified(organization.id, domain.domain, BASE_TIME + 1)).toBe("verified");
      expect(await organizations.markDomainVerified(organization.id, domain.domain, BASE_TIME + 2)).toBe("verified");
      expect(await organizations.listDomains(organization.id)).toEqual([{ ...domain, verifiedAt: BASE_TIME + 1 }]);
      expect(await organizations.findOrganizationByDomain(domain.domain)).toEqual(organization);
      expect(await organizations.findOrganizationByDomain(domain.domain.toUpperCase())).toBeNull();
      expect(await organizations.markDomainVerified(organization.id, sampleDomain(organization.id).domain, BASE_TIME)).toBe(
        "not_found",
      );
      expect(await organizations.markDomainVerified(uniqueId("org"), domain.domain, BASE_TIME)).toBe("not_found");
    });

    it("OR-11: a domain another organization verified is taken; removed, it may be verified by another", async () => {
      const { storage, organizations, organization } = await withOrganization(makeStorage);
      const other = (await withOrganization(async () => storage)).organization;
      const domain = sampleDomain(organization.id);
      await organizations.addDomain(domain);
      await organizations.addDomain({ ...domain, orgId: other.id });
      expect(await organizations.markDomainVerified(organization.id, domain.domain, BASE_TIME + 1)).toBe("verified");
      expect(await organizations.markDomainVerified(other.id, domain.domain, BASE_TIME + 2)).toBe("taken");
      expect(await organizations.listDomains(other.id)).toEqual([{ ...domain, orgId: other.id }]);
      expect(await organizations.findOrganizationByDomain(domain.domain)).toEqual(organization);

      expect(await organizations.removeDomain(organization.id, domain.domain)).toBe(true);
      expect(await organizations.removeDomain(organization.id, domain.domain)).toBe(false);
      expect(await organizations.listDomains(organization.id)).toEqual([]);
      expect(await organizations.findOrganizationByDomain(domain.domain)).toBeNull();
      expect(await organizations.markDomainVerified(other.id, domain.domain, BASE_TIME + 3)).toBe("verified");
      expect(await organizations.findOrganizationByDomain(domain.domain)).toEqual(other);
      expect(await organizations.removeDomain(uniqueId("org"), domain.domain)).toBe(false);
    });

    it("OR-11: of 10 organizations verifying one domain at once, exactly one has it verified", async () => {
      const storage = await makeStorage();
      const organizations = organizationsOf(storage);
      const claimants = await concurrently(10, async () => (await withOrganization(async () => storage)).organization);
      const domain = sampleDomain(uniqueId("org")).domain;
      for (const claimant of claimants) await organizations.addDomain(sampleDomain(claimant.id, { domain }));
      const results = await concurrently(10, (index) =>
        organizations.markDomainVerified((claimants[index] as OrganizationRecord).id, domain, BASE_TIME + index),
      );
      expect(countWhere(results, (result) => result === "verified")).toBe(1);
      expect(countWhere(results, (result) => result === "taken")).toBe(9);
      const winner = claimants[results.indexOf("verified")] as OrganizationRecord;
      expect(await organizations.findOrganizationByDomain(domain)).toEqual(winner);
      for (const claimant of claimants) {
        const verified = (await organizations.listDomains(claimant.id))[0]?.verifiedAt ?? null;
        expect(verified === null).toBe(claimant !== winner);
      }
    });
  });
}
