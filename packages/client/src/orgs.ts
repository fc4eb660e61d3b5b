import { AuthClientError } from "./errors.js";
import { type OrganizationDomainsClient, createOrganizationDomainsClient } from "./orgs/domains.js";
import { type OrganizationInvitationsClient, createOrganizationInvitationsClient } from "./orgs/invitations.js";
import { type OrganizationMembersClient, createOrganizationMembersClient } from "./orgs/members.js";
import { organizationCalls, organizationPath } from "./orgs/organization-calls.js";
import {
  type ActiveOrganization,
  type CreateOrganizationInput,
  type JoinableOrganization,
  type MyOrganization,
  type Organization,
  type UpdateOrganizationInput,
  activeOrganizationOf,
} from "./orgs/organizations.js";
import type { Reauthenticate } from "./reauthentication.js";
import type { Session } from "./session.js";
import { type StepUp, requirementOf, stepUpRequiredCode } from "./step-up.js";
import type { ReauthenticationProof } from "./types.js";

export type { OrganizationDomain, OrganizationDomainsClient } from "./orgs/domains.js";
export type { InviteMemberInput, OrganizationInvitation, OrganizationInvitationsClient } from "./orgs/invitations.js";
export type { OrganizationMember, OrganizationMemberPage, OrganizationMembersClient } from "./orgs/members.js";
export {
  type ActiveOrganization,
  type CreateOrganizationInput,
  type JoinableOrganization,
  type MyOrganization,
  type Organization,
  type OrganizationRules,
  type OrganizationSignInMethod,
  type UpdateOrganizationInput,
  activeOrganizationOf,
} from "./orgs/organizations.js";

/** The signed-in user's organizations (`/auth/orgs…`), and the session's active organization. */
export interface OrganizationsClient {
  /**
   * The user's organizations (`GET /auth/orgs`), this session's active one marked `active`.
   *
   * @throws {AuthClientError} `not_signed_in`, 40400 organizations are off on the server.
   * @example
   * ```ts
   * for (const org of await client.orgs.list()) render(org.name, org.active ? "active" : "");
   * ```
   */
  list(): Promise<MyOrganization[]>;
  /**
   * The organizations the user may join without an invitation (`GET /auth/orgs/joinable`): their
   * verified address is at a domain the organization verified.
   *
   * @throws {AuthClientError} `not_signed_in`, 40400 organizations are off.
   * @example
   * ```ts
   * const joinable = await client.orgs.joinable();
   * ```
   */
  joinable(): Promise<JoinableOrganization[]>;
  /**
   * Creates an organization (`POST /auth/orgs`) whose owner is the user. It does not become active:
   * call {@link OrganizationsClient.switch}.
   *
   * @throws {AuthClientError} 40001 no name, 40300 creation is for administrators only, 40900 the slug is taken, 42200 a bad name or slug.
   * @example
   * ```ts
   * const org = await client.orgs.create({ name: "Acme" });
   * ```
   */
  create(input: CreateOrganizationInput): Promise<Organization>;
  /**
   * One of the user's organizations (`GET /auth/orgs/:orgId`).
   *
   * @throws {AuthClientError} 40400 no such organization, or one the user is not a member of (OR-2).
   * @example
   * ```ts
   * const org = await client.orgs.get(orgId);
   * ```
   */
  get(orgId: string): Promise<Organization>;
  /**
   * Changes the organization's name, slug or rules (`PATCH /auth/orgs/:orgId`): administrators. A
   * change of rules ends the organization's activation in every session: the tokens are refreshed
   * at once when it was this session's.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such organization, 40900 the slug is taken, 42200 a bad value.
   * @example
   * ```ts
   * await client.orgs.update(orgId, { rules: { requireSecondFactor: true } });
   * ```
   */
  update(orgId: string, input: UpdateOrganizationInput): Promise<Organization>;
  /**
   * Deletes the organization (`DELETE /auth/orgs/:orgId`): an owner, with a recent sign-in or the
   * password (and a TOTP code when TOTP is on): here, or through the client's `reauthenticate` on its
   * 40001. When it was this session's active organization, the tokens are refreshed at once, and carry none.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40103 wrong code, 40300 not an owner, 40400 no such organization.
   * @example
   * ```ts
   * await client.orgs.remove(orgId);
   * ```
   */
  remove(orgId: string, proof?: ReauthenticationProof): Promise<void>;
  /**
   * Joins an organization listed by {@link OrganizationsClient.joinable} (`POST /auth/orgs/:orgId/join`), with its lowest role.
   *
   * @throws {AuthClientError} 40400 no such organization, or the user's verified address is not at one of its verified domains, 40900 a member already.
   * @example
   * ```ts
   * await client.orgs.join(joinable[0].id);
   * ```
   */
  join(orgId: string): Promise<Organization>;
  /**
   * Makes an organization this session's active one, or none with `null` (`POST /auth/orgs/active`).
   * The server answers a new access token carrying it (`org`, `org_roles`), which is stored in
   * place of the old one; the refresh token does not change, and its refreshes carry the
   * organization from then on. Nothing is emitted: the user is the same (a refresh emits nothing
   * either); other clients sharing the store read the new token at their next request.
   *
   * An organization that requires a second factor the session has not proven answers 40104: the
   * client emits `stepUpRequired` (as `client.fetch` does), and once a listener has re-authenticated
   * with a second factor, switches once more. Without a listener, when it cancels, or when the user
   * has no second factor to prove (`error.data.enrolmentRequired`: enrol one first), the 40104 is
   * thrown.
   *
   * @throws {AuthClientError} `not_signed_in`, 40104 a second factor required, 40300 the session was signed in a way the organization does not allow (`error.data.signInMethods`), 40400 not a member.
   * @example
   * ```ts
   * const active = await client.orgs.switch(org.id); // { id, roles }
   * await client.orgs.switch(null); // no organization
   * ```
   */
  switch(orgId: string | null): Promise<ActiveOrganization | null>;
  /**
   * The active organization the stored access token carries (its `org` and `org_roles` claims, read
   * without verifying: the server did), or null when none is, or when signed out. No request: the
   * server checks the claims against the membership at every request, and a token whose
   * membership changed is refreshed at its next one.
   *
   * @example
   * ```ts
   * const active = await client.orgs.active();
   * if (active?.roles.includes("admin")) showSettings();
   * ```
   */
  active(): Promise<ActiveOrganization | null>;
  /** The members of an organization: list them, change their roles, remove them, leave. */
  members: OrganizationMembersClient;
  /** Invitations by email: send, list, resend, revoke, accept. */
  invitations: OrganizationInvitationsClient;
  /** The domains an organization claims and proves. */
  domains: OrganizationDomainsClient;
}

/** What `POST /auth/orgs/active` answers. */
interface SwitchAnswer {
  accessToken: string;
  tokenType: "Bearer";
  expiresIn: number;
  org: ActiveOrganization | null;
}

const isSwitchAnswer = (data: unknown): data is SwitchAnswer => {
  const { accessToken, expiresIn } = (data ?? {}) as Partial<SwitchAnswer>;
  return typeof accessToken === "string" && typeof expiresIn === "number";
};

/**
 * Makes the {@link OrganizationsClient} of a session. `stepUp` carries a switch's 40104 to the
 * client's `stepUpRequired` listeners; `reauthenticate` answers the 40001 of the routes that want
 * a recent sign-in.
 *
 * @example
 * ```ts
 * const orgs = createOrganizationsClient(session, stepUp, reauthenticate);
 * ```
 */
export function createOrganizationsClient(
  session: Session,
  stepUp: StepUp,
  reauthenticate: Reauthenticate | undefined,
): OrganizationsClient {
  const calls = organizationCalls(session, reauthenticate);
  const { proven, active, refreshIfActive } = calls;
  const sendSwitch = async (orgId: string | null) => {
    const data = await session.call<unknown>({ method: "POST", path: "/auth/orgs/active", body: { orgId } });
    if (!isSwitchAnswer(data)) {
      throw new AuthClientError("The server's answer lacks what the Portcullis contract promises", {
        kind: "invalid_response",
        code: 0,
      });
    }
    await session.keepAccessToken(data.accessToken, data.expiresIn);
    return activeOrganizationOf(data.accessToken) ?? data.org ?? null;
  };

  return {
    list: () => session.call<MyOrganization[]>({ method: "GET", path: "/auth/orgs" }),
    joinable: () => session.call<JoinableOrganization[]>({ method: "GET", path: "/auth/orgs/joinable" }),
    create: ({ name, slug }) => session.call<Organization>({ method: "POST", path: "/auth/orgs", body: { name, slug } }),
    get: (orgId) => session.call<Organization>({ method: "GET", path: organizationPath(orgId) }),
    async update(orgId, { name, slug, rules }) {
      const organization = await session.call<Organization>({
        method: "PATCH",
        path: organizationPath(orgId),
        body: { name, slug, rules },
      });
      if (rules !== undefined) await refreshIfActive(orgId);
      return organization;
    },
    async remove(orgId, proof = {}) {
      await proven("orgs.remove", proof, organizationPath(orgId));
      await refreshIfActive(orgId);
    },
    join: (orgId) => session.call<Organization>({ method: "POST", path: `${organizationPath(orgId)}/join` }),
    async switch(orgId) {
      try {
        return await sendSwitch(orgId);
      } catch (error) {
        const stepUpWanted =
          error instanceof AuthClientError &&
          error.code === stepUpRequiredCode &&
          (error.data as { enrolmentRequired?: unknown } | undefined)?.enrolmentRequired !== true;
        if (!stepUpWanted || !(await stepUp.satisfy(requirementOf(error.data)))) throw error;
        return sendSwitch(orgId);
      }
    },
    active,
    members: createOrganizationMembersClient(calls),
    invitations: createOrganizationInvitationsClient(session),
    domains: createOrganizationDomainsClient(session),
  };
}
