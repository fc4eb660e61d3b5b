import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { optionalString, requiredString } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type { MembershipChange, MembershipRecord } from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { membershipOf, readOrganizationRoles, requireAdministrator, requireNotAbove } from "./organization-access.js";
import { forgetOrganizationState } from "./session-organization.js";

/** A member as the organization's members see them. Times are epoch milliseconds. */
export interface MemberView {
  userId: string;
  username: string;
  /** The member's address when verified, else null. */
  email: string | null;
  roles: string[];
  joinedAt: number;
}

/** The most members {@link listMembers} answers at once. */
export const memberPageLimit = 100;

const noSuchMember = () => new AuthError(ErrorCode.NotFound, "No such member");
const lastOwner = () => new AuthError(ErrorCode.Conflict, "The organization's last owner cannot leave or be demoted");

async function memberViews(auth: Auth, memberships: MembershipRecord[]): Promise<MemberView[]> {
  const users = await Promise.all(memberships.map((membership) => auth.storage.users.findById(membership.userId)));
  const views: MemberView[] = [];
  memberships.forEach((membership, index) => {
    const user = users[index];
    if (!user) return;
    views.push({
      userId: user.id,
      username: user.username,
      email: user.emailVerified ? user.email : null,
      roles: [...membership.roles],
      joinedAt: membership.createdAt,
    });
  });
  return views;
}

/**
 * An organization's members (`GET /auth/orgs/:orgId/members`), by user id, `limit` (at most 100) at
 * a time after `cursor`; any member may list them. 40400 for an organization of which the caller is
 * not a member (OR-2).
 */
export async function listMembers(
  auth: Auth,
  input: { userId: string; orgId: string; cursor?: string; limit?: number },
): Promise<{ members: MemberView[]; nextCursor: string | null }> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization } = await membershipOf(auth, input.orgId, user.id);
  const cursor = optionalString(input.cursor, "cursor");
  const limit = input.limit === undefined ? 50 : input.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > memberPageLimit) {
    throw new AuthError(ErrorCode.ValidationFailed, `limit must be a whole number from 1 to ${memberPageLimit}`);
  }
  const page = await store.listMembers(organization.id, { ...(cursor === undefined ? {} : { cursor }), limit });
  return { members: await memberViews(auth, page.items), nextCursor: page.nextCursor };
}

/** The input of {@link changeMemberRoles}. */
export interface ChangeMemberRolesInput extends ReauthenticationProof {
  userId: string;
  orgId: string;
  /** The member whose roles change. */
  memberId: string;
  roles: string[];
}

/**
 * Sets a member's roles (`PATCH /auth/orgs/:orgId/members/:userId`), by an administrator of the
 * organization who re-authenticates (OR-4, STUP-3): never to a role above the caller's own, nor for
 * a member whose roles rank above it; never leaving the organization without an owner (OR-3). The
 * member's tokens carrying the old roles are refused at their next request; a refresh carries the
 * new ones (OR-8).
 *
 * @throws {AuthError} 40400 not a member or no such member, 40300 not an administrator or above the caller, 42200 unknown roles, 40900 the last owner, 40001/40100/40103 re-authentication.
 */
export async function changeMemberRoles(auth: Auth, input: ChangeMemberRolesInput): Promise<MemberView> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const memberId = requiredString(input.memberId, "memberId");
  const roles = readOrganizationRoles(auth, input.roles);
  const target = await store.findMembership(organization.id, memberId);
  if (target === null) throw noSuchMember();
  requireNotAbove(auth, membership, [...target.roles, ...roles]);
  await requireRecentAuthentication(auth, user, input);
  const changed = await store.changeMemberRoles(organization.id, memberId, roles, auth.config.organizations.ownerRole);
  throwUnlessDone(changed);
  forgetOrganizationState(auth, memberId);
  auth.emit({
    type: "organization.member_roles_changed",
    orgId: organization.id,
    userId: memberId,
    roles,
    by: user.id,
    at: auth.now(),
  });
  const [view] = await memberViews(auth, [{ ...target, roles }]);
  if (view === undefined) throw noSuchMember();
  return view;
}

function throwUnlessDone(change: MembershipChange): void {
  if (change === "not_found") throw noSuchMember();
  if (change === "last_owner") throw lastOwner();
}

/** The input of {@link removeMember}. */
export interface RemoveMemberInput extends ReauthenticationProof {
  userId: string;
  orgId: string;
  /** The member to remove: the caller's own id leaves the organization. */
  memberId: string;
}

/**
 * Removes a member (`DELETE /auth/orgs/:orgId/members/:userId`): an administrator removes a member
 * not above their own role, after re-authenticating (OR-4, STUP-3); any member leaves by naming
 * themselves, with no re-authentication. The last owner stays (OR-3). The member's tokens
 * carrying the organization are refused at their next request (OR-8).
 *
 * @throws {AuthError} 40400 not a member or no such member, 40300 not an administrator or above the caller, 40900 the last owner, 40001/40100/40103 re-authentication.
 */
export async function removeMember(auth: Auth, input: RemoveMemberInput): Promise<{ removed: true }> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  const memberId = requiredString(input.memberId, "memberId");
  if (memberId !== user.id) {
    requireAdministrator(auth, membership);
    const target = await store.findMembership(organization.id, memberId);
    if (target === null) throw noSuchMember();
    requireNotAbove(auth, membership, target.roles);
    await requireRecentAuthentication(auth, user, input);
  }
  throwUnlessDone(await store.removeMember(organization.id, memberId, auth.config.organizations.ownerRole));
  forgetOrganizationState(auth, memberId);
  auth.emit({ type: "organization.member_removed", orgId: organization.id, userId: memberId, by: user.id, at: auth.now() });
  return { removed: true };
}
