import { describe, expect, it } from "vitest";
import { goodPassword, makeAuth, outcome } from "../flows/fixtures.test-support.js";
import { changeMemberRoles } from "../organizations/members.js";
import { organizationWithMember } from "../organizations/organizations.test-support.js";
import { listApiKeys, listUserApiKeys } from "./manage-api-keys.js";
import { createOrganizationApiKey, listOrganizationApiKeys, revokeOrganizationApiKey } from "./organization-api-keys.js";
import { verifyApiKey } from "./verify-api-key.js";

const setUp = async (tokenStateCacheSeconds = 0) => {
  const harness = makeAuth({ apiKeys: { enabled: true }, organizations: { enabled: true }, tokenStateCacheSeconds });
  const { ownerId, memberId, org } = await organizationWithMember(harness);
  return { harness, ownerId, memberId, org };
};

describe("AK-6: an organization's keys, made and managed by its administrators", () => {
  it("an administrator makes a key carrying the organization; members and strangers cannot; only its administrators list and revoke", async () => {
    const { harness, ownerId, memberId, org } = await setUp();
    const make = (userId: string, orgId = org.id) =>
      createOrganizationApiKey(harness.auth, { userId, orgId, name: "Billing export", password: goodPassword });
    expect(await outcome(make(memberId))).toBe(40300);
    expect(await outcome(make(ownerId, "nope"))).toBe(40400);
    expect(await outcome(createOrganizationApiKey(harness.auth, { userId: ownerId, orgId: org.id, name: "x" }))).toBe(40001);
    const created = await make(ownerId);
    expect(created).toMatchObject({ orgId: org.id, name: "Billing export" });
    expect(await verifyApiKey(harness.auth, { key: created.key })).toMatchObject({ orgId: org.id, userId: ownerId });
    expect(harness.events.find((event) => event.type === "api_key.created")).toMatchObject({ orgId: org.id, userId: ownerId });

    expect((await listOrganizationApiKeys(harness.auth, { userId: ownerId, orgId: org.id })).map((key) => key.id)).toEqual([
      created.id,
    ]);
    expect(await outcome(listOrganizationApiKeys(harness.auth, { userId: memberId, orgId: org.id }))).toBe(40300);
    expect(await listApiKeys(harness.auth, { userId: ownerId })).toEqual([]);
    expect((await listUserApiKeys(harness.auth, { userId: ownerId })).map((key) => key.orgId)).toEqual([org.id]);

    expect(await outcome(revokeOrganizationApiKey(harness.auth, { userId: memberId, orgId: org.id, id: created.id }))).toBe(
      40300,
    );
    expect(await outcome(revokeOrganizationApiKey(harness.auth, { userId: ownerId, orgId: org.id, id: "nope" }))).toBe(40400);
    expect(await revokeOrganizationApiKey(harness.auth, { userId: ownerId, orgId: org.id, id: created.id })).toEqual({
      revoked: true,
    });
    expect(await outcome(verifyApiKey(harness.auth, { key: created.key }))).toBe(40101);
  });

  it.each([0, 60])(
    "a key stops once its maker is no longer one of the organization's administrators (tokenStateCacheSeconds %i)",
    async (tokenStateCacheSeconds) => {
      const { harness, ownerId, memberId, org } = await setUp(tokenStateCacheSeconds);
      await changeMemberRoles(harness.auth, {
        userId: ownerId,
        orgId: org.id,
        memberId,
        roles: ["admin"],
        password: goodPassword,
      });
      const created = await createOrganizationApiKey(harness.auth, {
        userId: memberId,
        orgId: org.id,
        name: "Deploys",
        password: goodPassword,
      });
      expect(await outcome(verifyApiKey(harness.auth, { key: created.key }))).toBe("fulfilled");
      await changeMemberRoles(harness.auth, {
        userId: ownerId,
        orgId: org.id,
        memberId,
        roles: ["member"],
        password: goodPassword,
      });
      harness.clock.advance(tokenStateCacheSeconds * 1000);
      expect(await outcome(verifyApiKey(harness.auth, { key: created.key }))).toBe(40101);
    },
  );
});
