import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { optionalString, requiredString } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type { OrganizationRecord } from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { organizationsOf } from "./organization-access.js";
import { forgetOrganizationState } from "./session-organization.js";

/** The most organizations {@link listAllOrganizations} answers at once. */
export const organizationPageLimit = 100;

/**
 * Every organization of the instance by id, `limit` (at most 100) at a time after `cursor`
 * (`GET /auth/admin/orgs`): for holders of `adminRole`, whose routes reach across organizations.
 */
export async function listAllOrganizations(
  auth: Auth,
  input: { cursor?: string; limit?: number } = {},
): Promise<{ organizations: OrganizationRecord[]; nextCursor: string | null }> {
  const store = organizationsOf(auth);
  const cursor = optionalString(input.cursor, "cursor");
  const limit = input.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > organizationPageLimit) {
    throw new AuthError(ErrorCode.ValidationFailed, `limit must be a whole number from 1 to ${organizationPageLimit}`);
  }
  const page = await store.listOrganizations({ ...(cursor === undefined ? {} : { cursor }), limit });
  return { organizations: page.items, nextCursor: page.nextCursor };
}

/**
 * Deletes any organization (`DELETE /auth/admin/orgs/:orgId`), by an administrator of the instance
 * (the route asks `adminRole`), who re-authenticates (STUP-3): as `deleteOrganization` does for its owners.
 *
 * @throws {AuthError} 40400 no such organization, 40001/40100/40103 re-authentication.
 */
export async function deleteAnyOrganization(
  auth: Auth,
  input: ReauthenticationProof & { adminUserId: string; orgId: string },
): Promise<{ deleted: true }> {
  const store = organizationsOf(auth);
  const orgId = requiredString(input.orgId, "orgId");
  await requireRecentAuthentication(auth, await signedInUser(auth, input.adminUserId), input);
  if (!(await store.deleteOrganization(orgId))) throw new AuthError(ErrorCode.NotFound, "No such organization");
  forgetOrganizationState(auth, null);
  auth.emit({ type: "organization.deleted", orgId, by: input.adminUserId, at: auth.now() });
  return { deleted: true };
}
