import { accessTokenClaims } from "./claims.js";
import { AuthClientError } from "./errors.js";
import { type Reauthenticate, type ReauthenticatedOperation, withReauthentication } from "./reauthentication.js";
import { type Session, notSignedIn } from "./session.js";
import { type StepUp, requirementOf, stepUpRequiredCode } from "./step-up.js";
import type { ReauthenticationProof } from "./types.js";

/** A way of signing in an organization's rules may allow. */
export type OrganizationSignInMethod = "password" | "directory" | "passkey" | "provider";

/** An organization's rules for the sessions in which it is active. */
export interface OrganizationRules {
  /** Only a session that proved a second factor may make the organization active. */
  requireSecondFactor: boolean;
  /** The ways of signing in a session may have used to make it active; null allows every way. */
  signInMethods: OrganizationSignInMethod[] | null;
}

/** An organization as its members see it (`GET /auth/orgs/:orgId`). Times are epoch milliseconds. */
export interface Organization {
  id: string;
  slug: string;
  name: string;
  rules: OrganizationRules;
  createdAt: number;
  /** The signed-in user's roles in it. */
  roles: string[];
}

/** One of the signed-in user's organizations (`GET /auth/orgs`): whether it is this session's active one. */
export interface MyOrganization extends Organization {
  active: boolean;
}

/** An organization the user may join without an invitation: their verified address is at one of its verified domains. */
export interface JoinableOrganization {
  id: string;
  slug: string;
  name: string;
}

/** The active organization of an access token (`org`, `org_roles`): its id and the user's roles there. */
export interface ActiveOrganization {
  readonly id: string;
  readonly roles: readonly string[];
}

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

/** A pending invitation, as the organization's administrators see it: never its secret. Times are epoch milliseconds. */
export interface OrganizationInvitation {
  id: string;
  /** The invited address, case-folded. */
  email: string;
  roles: string[];
  /** The user id of the member who sent it. */
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

/** A domain an organization claims, with the TXT record that proves it. Times are epoch milliseconds. */
export interface OrganizationDomain {
  domain: string;
  /** Where the TXT record goes: `_portcullis-verification.<domain>`. */
  recordName: string;
  /** What the TXT record must hold. */
  recordValue: string;
  createdAt: number;
  /** When it was verified; null while it is not. */
  verifiedAt: number | null;
}

/** What {@link OrganizationsClient.create} sends. */
export interface CreateOrganizationInput {
  name: string;
  /** Lower-case letters, digits and hyphens; made from the name when left out. */
  slug?: string;
}

/** What {@link OrganizationsClient.update} sends: what is left out stays. */
export interface UpdateOrganizationInput {
  name?: string;
  slug?: string;
  /** The rules to change; those left out stay. */
  rules?: Partial<OrganizationRules>;
}

/** What {@link OrganizationInvitationsClient.create} sends. */
export interface InviteMemberInput {
  email: string;
  /** Roles not above the inviter's own; the organization's lowest role when left out. */
  roles?: string[];
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

/** An organization's invitations by email (`/auth/orgs/:orgId/invitations`, and their acceptance). */
export interface OrganizationInvitationsClient {
  /**
   * Invites an address (`POST /auth/orgs/:orgId/invitations`): an administrator, to roles not above
   * their own. The server mails the link (`email.invitationUrl#token=…`); a newer invitation to the
   * same address revokes the older one.
   *
   * @throws {AuthClientError} 40300 not an administrator or roles above the caller's, 40400 no such organization or invitations not configured, 42200 not an address or unknown roles, 42900 the address's mail budget is spent.
   * @example
   * ```ts
   * const invitation = await client.orgs.invitations.create(orgId, { email: "bob@example.com", roles: ["member"] });
   * ```
   */
  create(orgId: string, input: InviteMemberInput): Promise<OrganizationInvitation>;
  /**
   * The pending invitations, newest first (`GET /auth/orgs/:orgId/invitations`): administrators only.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such organization.
   * @example
   * ```ts
   * const pending = await client.orgs.invitations.list(orgId);
   * ```
   */
  list(orgId: string): Promise<OrganizationInvitation[]>;
  /**
   * Sends a pending invitation again with a new link (`POST …/invitations/:id/resend`); the old link stops working.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such pending invitation, 42900 the mail budget is spent.
   * @example
   * ```ts
   * await client.orgs.invitations.resend(orgId, invitation.id);
   * ```
   */
  resend(orgId: string, invitationId: string): Promise<OrganizationInvitation>;
  /**
   * Revokes a pending invitation (`DELETE …/invitations/:id`): its link stops working.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such pending invitation.
   * @example
   * ```ts
   * await client.orgs.invitations.revoke(orgId, invitation.id);
   * ```
   */
  revoke(orgId: string, invitationId: string): Promise<void>;
  /**
   * Accepts an invitation with the token of its link (`POST /auth/orgs/invitations/accept`; read it
   * with `tokenFromLink(location.hash)`): the signed-in user must hold the invited address,
   * verified (OR-5). Answers the organization joined. It does not become active: call
   * {@link OrganizationsClient.switch}.
   *
   * @throws {AuthClientError} 40101 a spent, revoked, replaced or expired invitation, or one to another address (one answer for all), 40300 the user has no verified address.
   * @example
   * ```ts
   * const organization = await client.orgs.invitations.accept(tokenFromLink(location.hash) ?? "");
   * ```
   */
  accept(token: string): Promise<Organization>;
}

/** The domains an organization claims (`/auth/orgs/:orgId/domains`): administrators only. */
export interface OrganizationDomainsClient {
  /**
   * Claims a domain (`POST /auth/orgs/:orgId/domains`): answers the TXT record to publish.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such organization, 40900 claimed already, 42200 not a domain name.
   * @example
   * ```ts
   * const { recordName, recordValue } = await client.orgs.domains.add(orgId, "example.com");
   * ```
   */
  add(orgId: string, domain: string): Promise<OrganizationDomain>;
  /**
   * The domains the organization claims (`GET /auth/orgs/:orgId/domains`), verified or not.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such organization.
   * @example
   * ```ts
   * const domains = await client.orgs.domains.list(orgId);
   * ```
   */
  list(orgId: string): Promise<OrganizationDomain[]>;
  /**
   * Asks the server to look the TXT record up (`POST …/domains/:domain/verify`) and answers the
   * domain, `verifiedAt` set when the record was found.
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such domain or verification not configured, 40900 the domain is verified for another organization (OR-11).
   * @example
   * ```ts
   * const { verifiedAt } = await client.orgs.domains.verify(orgId, "example.com");
   * ```
   */
  verify(orgId: string, domain: string): Promise<OrganizationDomain>;
  /**
   * Gives up a domain (`DELETE …/domains/:domain`).
   *
   * @throws {AuthClientError} 40300 not an administrator, 40400 no such domain.
   * @example
   * ```ts
   * await client.orgs.domains.remove(orgId, "example.com");
   * ```
   */
  remove(orgId: string, domain: string): Promise<void>;
}

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

/** The active organization that `accessToken`'s claims carry, or null (no `org`, or claims of the wrong shape). */
export function activeOrganizationOf(accessToken: string): ActiveOrganization | null {
  const claims = accessTokenClaims(accessToken);
  const id = claims?.org;
  const roles = claims?.org_roles;
  if (typeof id !== "string" || !Array.isArray(roles) || !roles.every((role) => typeof role === "string")) return null;
  return { id, roles: [...roles] };
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
  const base = (orgId: string) => `/auth/orgs/${encodeURIComponent(orgId)}`;
  const accepts = ["password", "totpCode"] as const;
  /** A DELETE that may carry a proof: a body only when one is given. */
  const proven = (operation: ReauthenticatedOperation, proof: ReauthenticationProof, path: string) =>
    withReauthentication(reauthenticate, { operation, accepts }, proof, (given) =>
      session.call({ method: "DELETE", path, body: given.password || given.totpCode ? given : undefined }),
    );
  const active = async () => {
    const tokens = await session.tokens();
    return tokens ? activeOrganizationOf(tokens.accessToken) : null;
  };
  /** After a change that ends the session's activation of `orgId` (leaving, deletion, new rules): a refresh brings the current state. */
  const refreshIfActive = async (orgId: string) => {
    if ((await active())?.id === orgId) await session.refresh();
  };
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

  const members: OrganizationMembersClient = {
    list(orgId, { cursor, limit } = {}) {
      const query = new URLSearchParams();
      if (cursor !== undefined) query.set("cursor", cursor);
      if (limit !== undefined) query.set("limit", String(limit));
      const search = query.toString() === "" ? "" : `?${query}`;
      return session.call<OrganizationMemberPage>({ method: "GET", path: `${base(orgId)}/members${search}` });
    },
    changeRoles(orgId, userId, roles, proof = {}) {
      return withReauthentication(reauthenticate, { operation: "orgs.members.changeRoles", accepts }, proof, (given) =>
        session.call<OrganizationMember>({
          method: "PATCH",
          path: `${base(orgId)}/members/${encodeURIComponent(userId)}`,
          body: { roles, ...given },
        }),
      );
    },
    async remove(orgId, userId, proof = {}) {
      await proven("orgs.members.remove", proof, `${base(orgId)}/members/${encodeURIComponent(userId)}`);
      const tokens = await session.tokens();
      if (tokens?.user.id === userId) await refreshIfActive(orgId);
    },
    async leave(orgId) {
      const tokens = await session.tokens();
      if (tokens === null) throw notSignedIn();
      await session.call({ method: "DELETE", path: `${base(orgId)}/members/${encodeURIComponent(tokens.user.id)}` });
      await refreshIfActive(orgId);
    },
  };

  const invitations: OrganizationInvitationsClient = {
    create: (orgId, { email, roles }) =>
      session.call<OrganizationInvitation>({ method: "POST", path: `${base(orgId)}/invitations`, body: { email, roles } }),
    list: (orgId) => session.call<OrganizationInvitation[]>({ method: "GET", path: `${base(orgId)}/invitations` }),
    resend: (orgId, id) =>
      session.call<OrganizationInvitation>({
        method: "POST",
        path: `${base(orgId)}/invitations/${encodeURIComponent(id)}/resend`,
      }),
    async revoke(orgId, id) {
      await session.call({ method: "DELETE", path: `${base(orgId)}/invitations/${encodeURIComponent(id)}` });
    },
    accept: (token) => session.call<Organization>({ method: "POST", path: "/auth/orgs/invitations/accept", body: { token } }),
  };

  const domains: OrganizationDomainsClient = {
    add: (orgId, domain) =>
      session.call<OrganizationDomain>({ method: "POST", path: `${base(orgId)}/domains`, body: { domain } }),
    list: (orgId) => session.call<OrganizationDomain[]>({ method: "GET", path: `${base(orgId)}/domains` }),
    verify: (orgId, domain) =>
      session.call<OrganizationDomain>({
        method: "POST",
        path: `${base(orgId)}/domains/${encodeURIComponent(domain)}/verify`,
      }),
    async remove(orgId, domain) {
      await session.call({ method: "DELETE", path: `${base(orgId)}/domains/${encodeURIComponent(domain)}` });
    },
  };

  return {
    list: () => session.call<MyOrganization[]>({ method: "GET", path: "/auth/orgs" }),
    joinable: () => session.call<JoinableOrganization[]>({ method: "GET", path: "/auth/orgs/joinable" }),
    create: ({ name, slug }) => session.call<Organization>({ method: "POST", path: "/auth/orgs", body: { name, slug } }),
    get: (orgId) => session.call<Organization>({ method: "GET", path: base(orgId) }),
    async update(orgId, { name, slug, rules }) {
      const organization = await session.call<Organization>({ method: "PATCH", path: base(orgId), body: { name, slug, rules } });
      if (rules !== undefined) await refreshIfActive(orgId);
      return organization;
    },
    async remove(orgId, proof = {}) {
      await proven("orgs.remove", proof, base(orgId));
      await refreshIfActive(orgId);
    },
    join: (orgId) => session.call<Organization>({ method: "POST", path: `${base(orgId)}/join` }),
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
    members,
    invitations,
    domains,
  };
}
