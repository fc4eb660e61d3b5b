import { withReauthentication } from "../reauthentication.js";
import { notSignedIn } from "../session.js";
import type { ReauthenticationProof } from "../types.js";
import { type OrganizationCalls, organizationPath, organizationProofs } from "./organization-calls.js";

/** A member of an organization. `joinedAt` is epoch milliseconds. */
export interface OrganizationMember {
  userId: string;
  username: string;
  /** The member's address when verified, else null. */
  email: string | null;
  roles: string[];
  joinedAt: number;
}

/** A page of members: `nextCursor` asks for the next one, null after the last. */
export interface OrganizationMemberPage {
  members: OrganizationMember[];
  nextCursor: string | null;
}

/** An organization's members (`/auth/orgs/:orgId/members`). */
export interface OrganizationMembersClient {
  /**
   * A page of the organization's members (`GET /auth/orgs/:orgId/members`): any member sees them.
   *
   * @throws {AuthClientError} 40400 no such organization, or one the user is not a member of (OR-2), 42200 a `limit` outside 1…100.
   * @example
   * ```ts
   * const { members, nextCursor } = await client.orgs.members.list(orgId, { limit: 50 });
   * ```
   */
  list(orgId: string, options?: { cursor?: string; limit?: number }): Promise<OrganizationMemberPage>;
  /**
   * Gives a member these roles (`PATCH /auth/orgs/:orgId/members/:userId`): an administrator, never
   * above their own highest role (OR-4); the last owner keeps the role (OR-3). The server wants a
   * recent sign-in, or the password (and a TOTP code when TOTP is on): here, or through the client's
   * `reauthenticate` on its 40001.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40103 wrong code, 40300 not an administrator or above the caller, 40400 no such member, 40900 the last owner, 42200 unknown roles.
   * @example
   * ```ts
   * await client.orgs.members.changeRoles(orgId, userId, ["admin"]);
   * ```
   */
  changeRoles(orgId: string, userId: string, roles: string[], proof?: ReauthenticationProof): Promise<OrganizationMember>;
  /**
   * Removes a member (`DELETE /auth/orgs/:orgId/members/:userId`): an administrator, with the
   * re-authentication of {@link OrganizationMembersClient.changeRoles}. Their tokens carrying the
   * organization are refused from their next request. Removing yourself is
   * {@link OrganizationMembersClient.leave}.
   *
   * @throws {AuthClientError} as {@link OrganizationMembersClient.changeRoles}, without the 42200.
   * @example
   * ```ts
   * await client.orgs.members.remove(orgId, userId);
   * ```
   */
  remove(orgId: string, userId: string, proof?: ReauthenticationProof): Promise<void>;
  /**
   * Leaves the organization (`DELETE /auth/orgs/:orgId/members/<own id>`, no re-authentication).
   * When it was this session's active organization, the tokens are refreshed at once, and carry none.
   *
   * @throws {AuthClientError} `not_signed_in`, 40400 not a member, 40900 the last owner cannot leave.
   * @example
   * ```ts
   * await client.orgs.members.leave(orgId);
   * ```
   */
  leave(orgId: string): Promise<void>;
}

/**
 * Makes the {@link OrganizationMembersClient} of a session.
 *
 * @example
 * ```ts
 * const members = createOrganizationMembersClient(organizationCalls(session, reauthenticate));
 * ```
 */
export function createOrganizationMembersClient({
  session,
  reauthenticate,
  proven,
  refreshIfActive,
}: OrganizationCalls): OrganizationMembersClient {
  return {
    list(orgId, { cursor, limit } = {}) {
      const query = new URLSearchParams();
      if (cursor !== undefined) query.set("cursor", cursor);
      if (limit !== undefined) query.set("limit", String(limit));
      const search = query.toString() === "" ? "" : `?${query}`;
      return session.call<OrganizationMemberPage>({ method: "GET", path: `${organizationPath(orgId)}/members${search}` });
    },
    changeRoles(orgId, userId, roles, proof = {}) {
      return withReauthentication(
        reauthenticate,
        { operation: "orgs.members.changeRoles", accepts: organizationProofs },
        proof,
        (given) =>
          session.call<OrganizationMember>({
            method: "PATCH",
            path: `${organizationPath(orgId)}/members/${encodeURIComponent(userId)}`,
            body: { roles, ...given },
          }),
      );
    },
    async remove(orgId, userId, proof = {}) {
      await proven("orgs.members.remove", proof, `${organizationPath(orgId)}/members/${encodeURIComponent(userId)}`);
      const tokens = await session.tokens();
      if (tokens?.user.id === userId) await refreshIfActive(orgId);
    },
    async leave(orgId) {
      const tokens = await session.tokens();
      if (tokens === null) throw notSignedIn();
      await session.call({ method: "DELETE", path: `${organizationPath(orgId)}/members/${encodeURIComponent(tokens.user.id)}` });
      await refreshIfActive(orgId);
    },
  };
}
