import { describe, expect, it } from "vitest";
import { addUser, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { createOrganization, listMyOrganizations, readRules, readSlug, updateOrganization } from "./manage-organization.js";
import { organizationWithMember } from "./organizations.test-support.js";

describe("OR-1: who creates organizations, and what they are called", () => {
  it("any signed-in user creates one and owns it; with creation: administrators only holders of adminRole may", async () => {
    const open = makeAuth({ organizations: { enabled: true } });
    const userId = await addUser(open.auth, "anyone");
    const created = await createOrganization(open.auth, { userId, name: "Acme Widgets" });
    expect(created).toMatchObject({ slug: "acme-widgets", name: "Acme Widgets", roles: ["owner"] });
    expect((await listMyOrganizations(open.auth, { userId })).map((org) => org.id)).toEqual([created.id]);

    const closed = makeAuth({ organizations: { enabled: true, creation: "administrators" } });
    const plain = await addUser(closed.auth, "plain");
    const admin = await addUser(closed.auth, "admin", undefined, ["admin"]);
    expect(await outcome(createOrganization(closed.auth, { userId: plain, name: "Mine" }))).toBe(40300);
    expect((await createOrganization(closed.auth, { userId: admin, name: "Theirs" })).roles).toEqual(["owner"]);
  });

  it("a slug is unique in the instance (40900), and a name must show: no invisible or direction characters", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const userId = await addUser(harness.auth, "owner");
    await createOrganization(harness.auth, { userId, name: "Acme" });
    expect(await outcome(createOrganization(harness.auth, { userId, name: "ACME" }))).toBe(40900);
    for (const name of ["Ac\u200Bme", "\u202EemcA", "", " ", "x".repeat(101)]) {
      expect(await outcome(createOrganization(harness.auth, { userId, name, slug: "other" }))).toBe(name === "" ? 40001 : 42200);
    }
    expect(harness.events.filter((event) => event.type === "organization.created")).toHaveLength(1);
  });

  it("slugs: made from the name when absent; 2 to 48 lower-case letters, digits and inner single hyphens", () => {
    expect(readSlug(undefined, "Ünïcode & Co. — Ltd")).toBe("unicode-co-ltd");
    expect(() => readSlug(undefined, "日本")).toThrow(/slug is required/);
    for (const bad of ["A", "a", "-ab", "ab-", "a--b", "a_b", "a".repeat(49)]) expect(() => readSlug(bad)).toThrow();
    expect(readSlug("ab-12")).toBe("ab-12");
  });

  it("rules: the ones left out kept, unknown ones and bad values refused (42200)", () => {
    const current = { requireSecondFactor: false, signInMethods: null };
    expect(readRules({ requireSecondFactor: true }, current)).toEqual({ requireSecondFactor: true, signInMethods: null });
    expect(readRules({ signInMethods: ["passkey", "passkey"] }, current)).toEqual({
      requireSecondFactor: false,
      signInMethods: ["passkey"],
    });
    for (const bad of [{ requireSecondFactor: "yes" }, { signInMethods: [] }, { signInMethods: ["sms"] }, { mfa: true }]) {
      expect(() => readRules(bad, current)).toThrow();
    }
    expect(() => readRules([], current)).toThrow(/rules must be an object/);
  });

  it("a plain member cannot rename the organization or change its rules (40300)", async () => {
    const harness = makeAuth({ organizations: { enabled: true } });
    const { memberId, org } = await organizationWithMember(harness);
    expect(await outcome(updateOrganization(harness.auth, { userId: memberId, orgId: org.id, name: "Mine" }))).toBe(40300);
    expect(
      await outcome(updateOrganization(harness.auth, { userId: memberId, orgId: org.id, rules: { requireSecondFactor: true } })),
    ).toBe(40300);
  });
});
