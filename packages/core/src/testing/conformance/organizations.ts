import type {
  DomainRecord,
  InvitationRecord,
  MembershipRecord,
  OrganizationRecord,
  OrganizationStore,
} from "../../storage/organization-store.js";
import { findTokenState } from "../../storage/token-state.js";
import type { Storage } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere, tryToMutate } from "./harness.js";
import { BASE_TIME, createUser, sampleSession, uniqueHash, uniqueId } from "./samples.js";

const DAY = 86_400_000;
const OWNER = "owner";

/** An organization with a fresh id and slug, at the kit's `BASE_TIME`. */
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

/** A membership of `userId` in `orgId` with `roles`, at the kit's `BASE_TIME`. */
export function sampleMembership(orgId: string, userId: string, roles: string[] = ["member"]): MembershipRecord {
  return { orgId, userId, roles, createdAt: BASE_TIME, lastActiveAt: null };
}

/** A pending invitation to `orgId` for a fresh address, valid for a week from the kit's `BASE_TIME`. */
export function sampleInvitation(orgId: string, invitedBy: string, overrides: Partial<InvitationRecord> = {}): InvitationRecord {
  return {
    id: uniqueId("invitation"),
    orgId,
    email: `${uniqueId("invitee")}@example.com`,
    roles: ["member"],
    tokenHash: uniqueHash(),
    invitedBy,
    createdAt: BASE_TIME,
    expiresAt: BASE_TIME + 7 * DAY,
    acceptedAt: null,
    acceptedBy: null,
    revokedAt: null,
    ...overrides,
  };
}

/** An unverified claim of a fresh domain by `orgId`. */
export function sampleDomain(orgId: string, overrides: Partial<DomainRecord> = {}): DomainRecord {
  return {
    orgId,
    domain: `${uniqueId("d").toLowerCase()}.example`,
    verificationValue: `portcullis-verification=${uniqueHash()}`,
    createdAt: BASE_TIME,
    verifiedAt: null,
    ...overrides,
  };
}

function organizationsOf(storage: Storage): OrganizationStore {
  if (storage.organizations === undefined) {
    throw new Error("this storage has no organizations store: implement it, or opt out with skip: { organizations: reason }");
  }
  return storage.organizations;
}

/** The storage, its organization store, and an organization made with a new owner (`ownerId`). */
async function withOrganization(
  makeStorage: SuiteContext["makeStorage"],
  overrides: Partial<OrganizationRecord> = {},
): Promise<{ storage: Storage; organizations: OrganizationStore; organization: OrganizationRecord; ownerId: string }> {
  const storage = await makeStorage();
  const organizations = organizationsOf(storage);
  const ownerId = await createUser(storage);
  const organization = sampleOrganization(overrides);
  if (!(await organizations.createOrganization(organization, sampleMembership(organization.id, ownerId, [OWNER])))) {
    throw new Error(`conformance setup: could not create organization ${organization.id}`);
  }
  return { storage, organizations, organization, ownerId };
}

/** Adds a new user to `orgId` with `roles`; its id. */
async function newMember(storage: Storage, orgId: string, roles: string[] = ["member"]): Promise<string> {
  const userId = await createUser(storage);
  if (!(await organizationsOf(storage).addMember(sampleMembership(orgId, userId, roles)))) {
    throw new Error(`conformance setup: could not add ${userId} to ${orgId}`);
  }
  return userId;
}

/** Stores a live session of `userId`; its id. */
async function newSession(storage: Storage, userId: string): Promise<string> {
  const session = sampleSession(userId);
  await storage.sessions.createSession(session);
  return session.id;
}

/** How many of an organization's members hold the owner role. */
async function ownerCount(organizations: OrganizationStore, orgId: string): Promise<number> {
  const { items } = await organizations.listMembers(orgId, { limit: 1000 });
  return countWhere(items, (membership) => membership.roles.includes(OWNER));
}

/** Registers the `organizations` suite: organizations, memberships, invitations and domains, each atomic write under races. */
export function organizationsSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("organizations", () => {
    /** Where a session stands: its active organization as read, and the roles a token check reads with it. */
    const activeIn = async (storage: Storage, sessionId: string, userId: string) => {
      const state = await findTokenState(storage, sessionId, userId);
      return {
        activeOrgId: (await storage.sessions.findSession(sessionId))?.activeOrgId ?? null,
        tokenOrgId: state?.session.activeOrgId ?? null,
        orgRoles: state?.orgRoles ?? null,
      };
    };
    const noActive = { activeOrgId: null, tokenOrgId: null, orgRoles: null };

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
        expect(await organizations.replaceInvitationToken(other.id, unknown, uniqueHash(), BASE_TIME + DAY, BASE_TIME)).toBe(
          false,
        );
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
        expect(await organizations.setActiveOrganization(outsiderSession, outsiderId, organization.id, BASE_TIME + 1)).toBe(
          false,
        );
        expect(await activeIn(storage, outsiderSession, outsiderId)).toEqual(noActive);
        expect(await organizations.setActiveOrganization(outsiderSession, ownerId, organization.id, BASE_TIME + 1)).toBe(false);
        expect(await organizations.setActiveOrganization(outsiderSession, ownerId, null, BASE_TIME + 1)).toBe(false);
        expect(await activeIn(storage, outsiderSession, outsiderId)).toEqual(noActive);
        expect(await organizations.setActiveOrganization(ownerSession, ownerId, uniqueId("org"), BASE_TIME + 1)).toBe(false);
        expect(await organizations.setActiveOrganization(uniqueId("session"), ownerId, organization.id, BASE_TIME + 1)).toBe(
          false,
        );
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
          await organizations.replaceInvitationToken(
            organization.id,
            invitation.id,
            uniqueHash(),
            BASE_TIME + DAY,
            BASE_TIME + 3,
          ),
        ).toBe(false);
      });

      it("replaceInvitationToken and revokeInvitation refuse an invitation not pending, or of another organization", async () => {
        const { storage, organizations, organization, ownerId } = await withOrganization(makeStorage);
        const other = (await withOrganization(async () => storage)).organization;
        const invitation = sampleInvitation(organization.id, ownerId, { expiresAt: BASE_TIME + 10 });
        await organizations.createInvitation(invitation);
        expect(
          await organizations.replaceInvitationToken(other.id, invitation.id, uniqueHash(), BASE_TIME + DAY, BASE_TIME),
        ).toBe(false);
        expect(await organizations.revokeInvitation(other.id, invitation.id, BASE_TIME)).toBe(false);
        expect(
          await organizations.replaceInvitationToken(
            organization.id,
            invitation.id,
            uniqueHash(),
            BASE_TIME + DAY,
            BASE_TIME + 10,
          ),
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
          await organizations.replaceInvitationToken(
            organization.id,
            invitation.id,
            uniqueHash(),
            BASE_TIME + DAY,
            BASE_TIME + 9,
          ),
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
