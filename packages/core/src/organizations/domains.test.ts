import { describe, expect, it } from "vitest";
import { addUserWithEmail } from "../email/email.test-support.js";
import { addUser, authError, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import {
  addDomain,
  joinOrganization,
  listDomains,
  listJoinableOrganizations,
  readDomain,
  removeDomain,
  verifyDomain,
} from "./domains.js";
import { createOrganization } from "./manage-organization.js";
import type { DomainVerificationRecord } from "./organization-config.js";
import { organizationWithMember, ownedOrganization } from "./organizations.test-support.js";

/** An auth whose `verifyDomain` finds exactly the records in `published`. */
function domainAuth(published: Set<string>, asked: DomainVerificationRecord[] = []) {
  const harness = makeAuth({
    onInternalError: () => {},
    organizations: {
      enabled: true,
      verifyDomain: async (record) => {
        asked.push(record);
        if (record.domain === "broken.example") throw new Error("dns down");
        return published.has(`${record.recordName} ${record.recordValue}`);
      },
    },
  });
  return { ...harness, asked };
}

describe("OR-11: an organization's verified domains let users with a verified address there join it", () => {
  it("a claimed domain answers its TXT record; verified by the host's check, users verified at it may join, once, as the lowest role", async () => {
    const published = new Set<string>();
    const harness = domainAuth(published);
    const { ownerId, org } = await ownedOrganization(harness, "Acme", "owner");
    const claimed = await addDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "Acme.Example." });
    expect(claimed).toMatchObject({
      domain: "acme.example",
      recordName: "_portcullis-verification.acme.example",
      verifiedAt: null,
    });
    expect(claimed.recordValue).toMatch(/^portcullis-verification=[A-Za-z0-9_-]{22}$/);

    const colleagueId = await addUserWithEmail(harness.auth, "colleague", "Colleague@ACME.example");
    expect(await listJoinableOrganizations(harness.auth, { userId: colleagueId })).toEqual([]);
    expect(await outcome(joinOrganization(harness.auth, { userId: colleagueId, orgId: org.id }))).toBe(40400);

    const notFound = await authError(verifyDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" }));
    expect(notFound.code).toBe(42200);
    published.add(`${claimed.recordName} ${claimed.recordValue}`);
    const verified = await verifyDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" });
    expect(verified.verifiedAt).toBe(harness.clock.now);
    expect(harness.events.filter((event) => event.type === "organization.domain_verified")).toHaveLength(1);

    expect(await listJoinableOrganizations(harness.auth, { userId: colleagueId })).toEqual([
      { id: org.id, slug: org.slug, name: "Acme" },
    ]);
    const joined = await joinOrganization(harness.auth, { userId: colleagueId, orgId: org.id });
    expect(joined.roles).toEqual(["member"]);
    expect(await listJoinableOrganizations(harness.auth, { userId: colleagueId })).toEqual([]);
    expect(await outcome(joinOrganization(harness.auth, { userId: colleagueId, orgId: org.id }))).toBe(40900);
  });

  it("an unverified address, another domain, or another organization's id join nothing (40400, as an unknown organization)", async () => {
    const published = new Set<string>();
    const harness = domainAuth(published);
    const { ownerId, org } = await ownedOrganization(harness, "Acme", "owner");
    const other = await createOrganization(harness.auth, { userId: ownerId, name: "Other" });
    const claimed = await addDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" });
    published.add(`${claimed.recordName} ${claimed.recordValue}`);
    await verifyDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" });
    const unverified = await addUserWithEmail(harness.auth, "unverified", "someone@acme.example", false);
    const elsewhere = await addUserWithEmail(harness.auth, "elsewhere", "someone@acme.example.evil.test");
    const colleague = await addUserWithEmail(harness.auth, "colleague", "colleague@acme.example");
    for (const [userId, orgId] of [
      [unverified, org.id],
      [elsewhere, org.id],
      [colleague, other.id],
    ] as const) {
      expect(await outcome(joinOrganization(harness.auth, { userId, orgId }))).toBe(40400);
    }
    expect(await listJoinableOrganizations(harness.auth, { userId: unverified })).toEqual([]);
  });

  it("a domain verified by one organization is refused to another (40900); a check that throws is 50300 and verifies nothing", async () => {
    const published = new Set<string>();
    const harness = domainAuth(published);
    const ownerId = await addUser(harness.auth, "owner");
    const first = await createOrganization(harness.auth, { userId: ownerId, name: "First" });
    const second = await createOrganization(harness.auth, { userId: ownerId, name: "Second" });
    for (const org of [first, second]) {
      const claimed = await addDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "shared.example" });
      published.add(`${claimed.recordName} ${claimed.recordValue}`);
    }
    await verifyDomain(harness.auth, { userId: ownerId, orgId: first.id, domain: "shared.example" });
    expect(await outcome(verifyDomain(harness.auth, { userId: ownerId, orgId: second.id, domain: "shared.example" }))).toBe(
      40900,
    );
    await addDomain(harness.auth, { userId: ownerId, orgId: first.id, domain: "broken.example" });
    expect(await outcome(verifyDomain(harness.auth, { userId: ownerId, orgId: first.id, domain: "broken.example" }))).toBe(50300);
    expect(
      (await listDomains(harness.auth, { userId: ownerId, orgId: first.id })).map((domain) => domain.verifiedAt !== null),
    ).toEqual([false, true]);
    await removeDomain(harness.auth, { userId: ownerId, orgId: first.id, domain: "shared.example" });
    expect(
      (await verifyDomain(harness.auth, { userId: ownerId, orgId: second.id, domain: "shared.example" })).verifiedAt,
    ).not.toBeNull();
  });

  it("only the organization's administrators claim, list, verify and remove domains", async () => {
    const harness = domainAuth(new Set());
    const { memberId, org } = await organizationWithMember(harness);
    const input = { userId: memberId, orgId: org.id, domain: "acme.example" };
    for (const attempt of [
      addDomain(harness.auth, input),
      listDomains(harness.auth, input),
      verifyDomain(harness.auth, input),
      removeDomain(harness.auth, input),
    ]) {
      expect(await outcome(attempt)).toBe(40300);
    }
  });

  it("without organizations.verifyDomain no domain is verified (40400)", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { ownerId, org } = await ownedOrganization(harness, "Acme", "owner");
    await addDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" });
    expect(await outcome(verifyDomain(harness.auth, { userId: ownerId, orgId: org.id, domain: "acme.example" }))).toBe(40400);
  });

  it.each([
    "localhost",
    "",
    "-bad.example",
    "bad-.example",
    "a..example",
    `${"a".repeat(64)}.example`,
    "exa mple.com",
    "例え.テスト".repeat(30),
  ])("refuses %j as a domain (42200)", (domain) => {
    expect(() => readDomain(domain)).toThrow();
  });

  it("reads an international domain in its IDNA form", () => {
    expect(readDomain("Bücher.Example")).toBe("xn--bcher-kva.example");
  });
});
