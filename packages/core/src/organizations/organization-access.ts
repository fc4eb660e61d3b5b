import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import type { MembershipRecord, OrganizationRecord, OrganizationStore } from "../storage/types.js";
import { organizationStoreOf } from "./session-organization.js";

/** The organization store, or 40400 when organizations are off: their routes answer as unknown ones. */
export function organizationsOf(auth: Auth): OrganizationStore {
  const store = organizationStoreOf(auth);
  if (store === null) throw new AuthError(ErrorCode.NotFound, "Organizations are not enabled");
  return store;
}

/** The answer to an organization the caller is not a member of: the same as to one that does not exist (OR-2). */
export const noSuchOrganization = () => new AuthError(ErrorCode.NotFound, "No such organization");

/** An organization and the caller's membership of it. */
export interface MemberContext {
  store: OrganizationStore;
  organization: OrganizationRecord;
  membership: MembershipRecord;
}

/**
 * The organization `orgId` and `userId`'s membership of it; 40400 alike for an unknown id and an
 * organization the user is not a member of (OR-2), so no id of another organization is confirmed.
 */
export async function membershipOf(auth: Auth, orgId: unknown, userId: string): Promise<MemberContext> {
  const store = organizationsOf(auth);
  const id = requiredString(orgId, "orgId");
  const [organization, membership] = await Promise.all([store.findOrganization(id), store.findMembership(id, userId)]);
  if (organization === null || membership === null) throw noSuchOrganization();
  return { store, organization, membership };
}

/** The rank of a member's highest role: 0 for the owner's, larger for lower ones (`organizations.roles` order). */
export function highestRank(auth: Auth, roles: readonly string[]): number {
  const order = auth.config.organizations.roles;
  let best = order.length;
  for (const role of roles) {
    const rank = order.indexOf(role);
    if (rank !== -1 && rank < best) best = rank;
  }
  return best;
}

/** Whether a membership holds one of `organizations.administratorRoles` (OR-4); false for none. */
export function isAdministrator(auth: Auth, membership: MembershipRecord | null): boolean {
  const { administratorRoles } = auth.config.organizations;
  return membership?.roles.some((role) => administratorRoles.includes(role)) === true;
}

/** 40300 unless the member holds one of `organizations.administratorRoles` (OR-4). */
export function requireAdministrator(auth: Auth, membership: MembershipRecord): void {
  if (!isAdministrator(auth, membership)) {
    throw new AuthError(ErrorCode.Forbidden, "Only the organization's administrators may do this");
  }
}

/** 40300 unless the member holds the owner role. */
export function requireOwner(auth: Auth, membership: MembershipRecord): void {
  if (!membership.roles.includes(auth.config.organizations.ownerRole)) {
    throw new AuthError(ErrorCode.Forbidden, "Only the organization's owners may do this");
  }
}

/**
 * 40300 when any of `roles` ranks above the caller's own highest role (OR-4): a member grants,
 * invites to and acts on nothing above themselves.
 */
export function requireNotAbove(auth: Auth, caller: MembershipRecord, roles: readonly string[]): void {
  if (highestRank(auth, roles) < highestRank(auth, caller.roles)) {
    throw new AuthError(ErrorCode.Forbidden, "A role above your own in the organization cannot be granted or changed by you");
  }
}

/**
 * Reads a list of organization roles: a non-empty list of distinct `organizations.roles` names.
 *
 * @throws {AuthError} 40001 missing, 40002 not a list of strings, 42200 empty or naming an unknown role.
 */
export function readOrganizationRoles(auth: Auth, value: unknown, field = "roles"): string[] {
  if (value === undefined || value === null) throw new AuthError(ErrorCode.MissingParameter, `${field} is required`);
  if (!Array.isArray(value) || !value.every((role) => typeof role === "string")) {
    throw new AuthError(ErrorCode.MalformedParameter, `${field} must be a list of role names`);
  }
  const known = auth.config.organizations.roles;
  const roles = [...new Set(value as string[])];
  if (roles.length === 0 || roles.some((role) => !known.includes(role))) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      `${field} must name at least one of the organization roles: ${known.join(", ")}`,
    );
  }
  return roles;
}

/** The lowest role of `organizations.roles`: what a member gets when none is named. */
export const lowestRole = (auth: Auth): string => auth.config.organizations.roles.at(-1) as string;
