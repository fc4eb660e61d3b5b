import type {
  DomainRecord,
  InvitationRecord,
  MembershipRecord,
  OrganizationRecord,
  OrganizationStore,
} from "../../storage/organization-store.js";
import { findTokenState } from "../../storage/token-state.js";
import type { Storage } from "../../storage/types.js";
import { type SuiteContext, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleSession, uniqueHash, uniqueId } from "./samples.js";

/** A day in milliseconds. */
export const DAY = 86_400_000;
/** The owner role of the organizations the kit makes. */
export const OWNER = "owner";

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

/** The storage's organization store; an error that says how to opt out when it has none. */
export function organizationsOf(storage: Storage): OrganizationStore {
  if (storage.organizations === undefined) {
    throw new Error("this storage has no organizations store: implement it, or opt out with skip: { organizations: reason }");
  }
  return storage.organizations;
}

export /** The storage, its organization store, and an organization made with a new owner (`ownerId`). */
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

export /** Adds a new user to `orgId` with `roles`; its id. */
async function newMember(storage: Storage, orgId: string, roles: string[] = ["member"]): Promise<string> {
  const userId = await createUser(storage);
  if (!(await organizationsOf(storage).addMember(sampleMembership(orgId, userId, roles)))) {
    throw new Error(`conformance setup: could not add ${userId} to ${orgId}`);
  }
  return userId;
}

export /** Stores a live session of `userId`; its id. */
async function newSession(storage: Storage, userId: string): Promise<string> {
  const session = sampleSession(userId);
  await storage.sessions.createSession(session);
  return session.id;
}

export /** How many of an organization's members hold the owner role. */
async function ownerCount(organizations: OrganizationStore, orgId: string): Promise<number> {
  const { items } = await organizations.listMembers(orgId, { limit: 1000 });
  return countWhere(items, (membership) => membership.roles.includes(OWNER));
}

/** Where a session stands: its active organization as read, and the roles a token check reads with it. */
export async function activeIn(storage: Storage, sessionId: string, userId: string) {
  const state = await findTokenState(storage, sessionId, userId);
  return {
    activeOrgId: (await storage.sessions.findSession(sessionId))?.activeOrgId ?? null,
    tokenOrgId: state?.session.activeOrgId ?? null,
    orgRoles: state?.orgRoles ?? null,
  };
}

/** How {@link activeIn} reads a session with no active organization. */
export const noActive = { activeOrgId: null, tokenOrgId: null, orgRoles: null };
