import type { Auth } from "../../auth.js";
import { requiredString } from "../../flows/input.js";
import { deleteAnyOrganization, listAllOrganizations, organizationPageLimit } from "../../organizations/admin-organizations.js";
import {
  addDomain,
  joinOrganization,
  listDomains,
  listJoinableOrganizations,
  removeDomain,
  verifyDomain,
} from "../../organizations/domains.js";
import {
  acceptInvitation,
  inviteMember,
  listInvitations,
  resendInvitation,
  revokeInvitation,
} from "../../organizations/invitations.js";
import {
  type UpdateOrganizationInput,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listMyOrganizations,
  updateOrganization,
} from "../../organizations/manage-organization.js";
import { changeMemberRoles, listMembers, memberPageLimit, removeMember } from "../../organizations/members.js";
import { switchOrganization } from "../../organizations/switch-organization.js";
import type { OrganizationRecord } from "../../storage/types.js";
import {
  type JsonSchema,
  answerObject,
  listOf,
  organizationProperties,
  requestObject,
  requiredText,
  schemaRef,
} from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext } from "../route-types.js";
import { adminProof, adminProofOf } from "./admin.js";
import { limitOf, proofFields, queryValue, reauthentication, sessionOf, signedIn } from "./shared.js";

/** Organizations are on: every route below exists only then (otherwise 40400, as an unknown route). */
const organizationsOn = (auth: Auth): boolean => auth.config.organizations.enabled;

/** The routes that send an invitation's mail: only with `email.invitationUrl` too. */
const invitationsOn = (auth: Auth): boolean => organizationsOn(auth) && (auth.config.email?.invitationUrl ?? null) !== null;

/** The domain verification route: only with `organizations.verifyDomain` too. */
const domainVerificationOn = (auth: Auth): boolean => organizationsOn(auth) && auth.config.organizations.verifyDomain !== null;

const orgIdParameter: ParameterDoc = {
  name: "orgId",
  in: "path",
  description: "The organization's id. One of which the caller is not a member answers 40400, exactly as an unknown id (OR-2)",
};
const memberIdParameter: ParameterDoc = { name: "userId", in: "path", description: "The member's user id" };
const invitationIdParameter: ParameterDoc = { name: "invitationId", in: "path", description: "The invitation's `id`" };
const domainParameter: ParameterDoc = { name: "domain", in: "path", description: "The domain, as the list shows it" };

const pageParameters = (max: number): ParameterDoc[] => [
  { name: "cursor", in: "query", description: "The `nextCursor` of the page before" },
  {
    name: "limit",
    in: "query",
    description: "Entries per page, default 50",
    schema: { type: "integer", minimum: 1, maximum: max },
  },
];

const nextCursor: JsonSchema = { type: ["string", "null"], description: "The `cursor` of the next page; null on the last page" };

const organizationRoles: JsonSchema = {
  type: "array",
  items: { type: "string", minLength: 1 },
  description: "Role names of `organizations.roles`, none above the caller's own highest (OR-4)",
};

/** An organization as the instance's administrators see it: no one's roles in it. */
const adminOrganization: JsonSchema = answerObject({
  id: { type: "string" },
  slug: { type: "string" },
  name: { type: "string" },
  rules: schemaRef("OrganizationRules"),
  createdAt: { type: "integer", minimum: 0 },
  updatedAt: { type: "integer", minimum: 0 },
});

const adminOrganizationOf = ({ id, slug, name, rules, createdAt, updatedAt }: OrganizationRecord) => ({
  id,
  slug,
  name,
  rules: { ...rules, signInMethods: rules.signInMethods === null ? null : [...rules.signInMethods] },
  createdAt,
  updatedAt,
});

/** The organization of the path and the signed-in caller: what every `/auth/orgs/:orgId…` flow takes. */
const callerIn = (context: RouteContext) => ({ userId: signedIn(context), orgId: context.params.orgId as string });

/** The re-authentication codes (STUP-3): missing, wrong password, wrong code, no local password, throttled. */
const reauthenticationCodes = [40001, 40100, 40103, 40900, 42900] as const;

/**
 * The organizations' routes (`docs/flows/organizations.md`): organizations, members, invitations,
 * domains, the session's active organization, and the instance administrators' view. Only with
 * `organizations.enabled`. The fixed paths come before `/auth/orgs/:orgId`, which would match them.
 */
export const organizationRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/orgs",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "createOrganization",
      tag: "Organizations",
      summary: "Create an organization, of which the signed-in user is the owner",
      description:
        'With `organizations.creation: "administrators"` only holders of `adminRole` may (40300). The slug is made from the name when absent; a taken one is 40900.',
      body: requestObject(
        {
          name: { type: "string", minLength: 1, maxLength: 100, description: "1 to 100 characters of visible text" },
          slug: { type: "string", description: "2 to 48 lower-case letters, digits and single hyphens" },
        },
        ["name"],
      ),
      data: schemaRef("Organization"),
      codes: [40001, 40900, 42200],
    },
    async handle(context) {
      const { body } = context;
      const slug = body.slug as string | undefined;
      const input = { userId: signedIn(context), name: body.name as string, ...(slug === undefined ? {} : { slug }) };
      return { data: await createOrganization(context.auth, input) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "listMyOrganizations",
      tag: "Organizations",
      summary: "The organizations of the signed-in user, each with the user's roles",
      description: "`active` marks the active organization of this request's session.",
      data: {
        type: "array",
        items: answerObject({
          ...organizationProperties,
          active: { type: "boolean", description: "The active organization of this request's session" },
        }),
      },
      codes: [],
    },
    async handle(context) {
      return { data: await listMyOrganizations(context.auth, { userId: signedIn(context), sessionId: sessionOf(context) }) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/joinable",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "listJoinableOrganizations",
      tag: "Organizations",
      summary: "The organizations the signed-in user may join without an invitation",
      description:
        "The organization that verified the domain of the user's verified address (OR-11), unless the user is a member already.",
      data: {
        type: "array",
        items: answerObject({ id: { type: "string" }, slug: { type: "string" }, name: { type: "string" } }),
      },
      codes: [],
    },
    async handle(context) {
      return { data: await listJoinableOrganizations(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/active",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "switchOrganization",
      tag: "Organizations",
      summary: "Make an organization the active one of this session, or none",
      description:
        'Answers a new access token carrying `org` and `org_roles`; the refresh token is unchanged and its refreshes carry the organization too. Tokens of the session that carry another organization are refused (40101) from then on. An organization of which the caller is not a member is 40400 (OR-2). A session signed in a way the organization does not allow is 40300 with `data.signInMethods` (OR-10); one without a second factor where the organization requires one is 40104 with `data.required.amr: ["mfa"]` and `data.enrolmentRequired` (OR-9).',
      body: requestObject({ orgId: { type: ["string", "null"], description: "The organization's id, or null for none" } }, [
        "orgId",
      ]),
      data: answerObject({
        accessToken: { type: "string", description: "A JWT (`typ: at+jwt`) carrying the organization" },
        tokenType: { const: "Bearer" },
        expiresIn: { type: "integer", minimum: 1, description: "Seconds until the access token expires" },
        org: {
          oneOf: [
            answerObject({ id: { type: "string" }, roles: { type: "array", items: { type: "string" } } }),
            { type: "null" },
          ],
        },
      }),
      codes: [40001, 40104, 40400],
    },
    async handle(context) {
      const { orgId } = context.body;
      const input = {
        userId: signedIn(context),
        sessionId: sessionOf(context),
        orgId: orgId === null ? null : requiredString(orgId, "orgId"),
      };
      return { data: await switchOrganization(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/invitations/accept",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "acceptInvitation",
      tag: "Organizations",
      summary: "Accept an invitation, becoming a member of its organization",
      description:
        "Only by a signed-in user holding the invited address, verified (OR-5): a user without a verified address is 40300; another address, or an unknown, spent, revoked, replaced or expired invitation, is 40101 alike. The invitation is spent and the membership added by one atomic write (OR-6). A user who was a member already keeps their roles.",
      body: requestObject({ token: { ...requiredText, description: "The `token` of the invitation link's fragment" } }, [
        "token",
      ]),
      data: schemaRef("Organization"),
      codes: [40001, 40400],
    },
    async handle(context) {
      return { data: await acceptInvitation(context.auth, { userId: signedIn(context), token: context.body.token as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/:orgId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "getOrganization",
      tag: "Organizations",
      summary: "One organization of the signed-in user's",
      parameters: [orgIdParameter],
      data: schemaRef("Organization"),
      codes: [40400],
    },
    async handle(context) {
      return { data: await getOrganization(context.auth, callerIn(context)) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/orgs/:orgId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "updateOrganization",
      tag: "Organizations",
      summary: "Rename an organization, change its slug or its rules",
      description:
        "By its administrators (40300 otherwise). Fields left out stay; rules left out of `rules` stay. A change of rules ends the organization's activation in every session, so each must meet the new rules to make it active again (OR-9, OR-10).",
      parameters: [orgIdParameter],
      body: requestObject({
        name: { type: "string", minLength: 1, maxLength: 100 },
        slug: { type: "string" },
        rules: {
          type: "object",
          properties: {
            requireSecondFactor: { type: "boolean" },
            signInMethods: { type: ["array", "null"], items: { enum: ["password", "directory", "passkey", "provider"] } },
          },
        },
      }),
      data: schemaRef("Organization"),
      codes: [40001, 40400, 40900, 42200],
    },
    async handle(context) {
      const { body } = context;
      const input: UpdateOrganizationInput = { ...callerIn(context) };
      if (body.name !== undefined) input.name = body.name as string;
      if (body.slug !== undefined) input.slug = body.slug as string;
      if (body.rules !== undefined) input.rules = body.rules as UpdateOrganizationInput["rules"];
      return { data: await updateOrganization(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/orgs/:orgId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "deleteOrganization",
      tag: "Organizations",
      summary: "Delete an organization with its members, invitations and domains",
      description:
        "By an owner (40300 otherwise) who re-authenticates (STUP-3): the `password`, and a `totpCode` with TOTP on, in an optional JSON body, or a sign-in or re-authentication within `reauthentication.recentSignIn` that proved them. Every token carrying the organization is refused at its next request.",
      parameters: [orgIdParameter],
      body: requestObject(proofFields),
      data: answerObject({ deleted: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      return { data: await deleteOrganization(context.auth, { ...reauthentication(context), ...callerIn(context) }) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/join",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "joinOrganization",
      tag: "Organizations",
      summary: "Join an organization without an invitation, by a verified domain",
      description:
        "For a user whose verified address is at a domain the organization verified (OR-11), who gets the lowest role; any other organization answers 40400, as an unknown one (OR-2). A member already is 40900.",
      parameters: [orgIdParameter],
      data: schemaRef("Organization"),
      codes: [40400, 40900],
    },
    async handle(context) {
      return { data: await joinOrganization(context.auth, callerIn(context)) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/:orgId/members",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "listMembers",
      tag: "Organizations",
      summary: "An organization's members, a page at a time by user id",
      description:
        "Any member may list them. Send `nextCursor` back as `cursor` for the next page. A member's `email` is shown only when verified.",
      parameters: [orgIdParameter, ...pageParameters(memberPageLimit)],
      data: answerObject({ members: listOf("OrganizationMember"), nextCursor }),
      codes: [40002, 40400, 42200],
    },
    async handle(context) {
      const query = new URLSearchParams(context.query);
      const cursor = queryValue(query, "cursor");
      const limit = limitOf(queryValue(query, "limit"), memberPageLimit);
      const input = {
        ...callerIn(context),
        ...(cursor === undefined ? {} : { cursor }),
        ...(limit === undefined ? {} : { limit }),
      };
      return { data: await listMembers(context.auth, input) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/orgs/:orgId/members/:userId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "changeMemberRoles",
      tag: "Organizations",
      summary: "Set a member's roles",
      description:
        "By an administrator (40300 otherwise) who re-authenticates (STUP-3), never to a role above their own nor for a member above it (OR-4); the last owner keeps the role (40900, OR-3). The member's tokens carrying the old roles are refused at their next request; a refresh carries the new ones (OR-8).",
      parameters: [orgIdParameter, memberIdParameter],
      body: requestObject({ roles: organizationRoles, ...proofFields }, ["roles"]),
      data: schemaRef("OrganizationMember"),
      codes: [...reauthenticationCodes, 40400, 42200],
    },
    async handle(context) {
      const input = {
        ...reauthentication(context),
        ...callerIn(context),
        memberId: context.params.userId as string,
        roles: context.body.roles as string[],
      };
      return { data: await changeMemberRoles(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/orgs/:orgId/members/:userId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "removeMember",
      tag: "Organizations",
      summary: "Remove a member, or leave the organization",
      description:
        "An administrator removes a member not above their own role, after re-authenticating (OR-4, STUP-3); any member leaves by naming their own id, with no re-authentication. The last owner stays (40900, OR-3). The member's tokens carrying the organization are refused at their next request (OR-8).",
      parameters: [orgIdParameter, memberIdParameter],
      body: requestObject(proofFields),
      data: answerObject({ removed: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      const input = { ...reauthentication(context), ...callerIn(context), memberId: context.params.userId as string };
      return { data: await removeMember(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/invitations",
    access: "bearer",
    enabled: invitationsOn,
    doc: {
      operationId: "inviteMember",
      tag: "Organizations",
      summary: "Invite an address to the organization by email",
      description:
        "By an administrator (40300 otherwise), to roles not above their own (OR-4; default the lowest). The link goes through `email.send` within the recipient's budget (EM-1), as `email.invitationUrl#token=…`, in the template `Accept-Language` chooses; an earlier pending invitation to the address is revoked. Only with `email.invitationUrl`.",
      parameters: [
        orgIdParameter,
        { name: "Accept-Language", in: "header", description: "Chooses the message's template among `email.templates`" },
      ],
      body: requestObject(
        {
          email: { type: "string", maxLength: 254, description: "The address to invite" },
          roles: organizationRoles,
        },
        ["email"],
      ),
      data: schemaRef("OrganizationInvitation"),
      codes: [40001, 40400, 42200, 50300],
    },
    async handle(context) {
      const { body } = context;
      const roles = body.roles as string[] | undefined;
      const acceptLanguage = context.header("accept-language");
      const input = {
        ...callerIn(context),
        email: body.email as string,
        ...(roles === undefined ? {} : { roles }),
        ...(acceptLanguage === undefined ? {} : { acceptLanguage }),
      };
      return { data: await inviteMember(context.auth, input) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/:orgId/invitations",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "listInvitations",
      tag: "Organizations",
      summary: "The organization's pending invitations, newest first",
      description: "For its administrators (40300 otherwise). Never an invitation's secret.",
      parameters: [orgIdParameter],
      data: listOf("OrganizationInvitation"),
      codes: [40400],
    },
    async handle(context) {
      return { data: await listInvitations(context.auth, callerIn(context)) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/invitations/:invitationId/resend",
    access: "bearer",
    enabled: invitationsOn,
    doc: {
      operationId: "resendInvitation",
      tag: "Organizations",
      summary: "Send a pending invitation again, with a new link and a new expiry",
      description:
        "By an administrator not below the invitation's roles (OR-4). The link sent before stops working (OR-5). Only with `email.invitationUrl`.",
      parameters: [
        orgIdParameter,
        invitationIdParameter,
        { name: "Accept-Language", in: "header", description: "Chooses the message's template among `email.templates`" },
      ],
      data: schemaRef("OrganizationInvitation"),
      codes: [40400, 50300],
    },
    async handle(context) {
      const acceptLanguage = context.header("accept-language");
      const input = {
        ...callerIn(context),
        invitationId: context.params.invitationId as string,
        ...(acceptLanguage === undefined ? {} : { acceptLanguage }),
      };
      return { data: await resendInvitation(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/orgs/:orgId/invitations/:invitationId",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "revokeInvitation",
      tag: "Organizations",
      summary: "Revoke a pending invitation: its link stops working",
      description: "By an administrator not below the invitation's roles (OR-4).",
      parameters: [orgIdParameter, invitationIdParameter],
      data: answerObject({ revoked: { const: true } }),
      codes: [40400],
    },
    async handle(context) {
      const input = { ...callerIn(context), invitationId: context.params.invitationId as string };
      return { data: await revokeInvitation(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/domains",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "addDomain",
      tag: "Organizations",
      summary: "Claim a domain for the organization, unverified, and get the TXT record that proves it",
      description:
        "By its administrators (40300 otherwise). Publish `recordValue` as a TXT record at `recordName`, then verify. A domain the organization claimed already is 40900.",
      parameters: [orgIdParameter],
      body: requestObject({ domain: { ...requiredText, description: "A domain name such as example.com" } }, ["domain"]),
      data: schemaRef("OrganizationDomain"),
      codes: [40001, 40400, 40900, 42200],
    },
    async handle(context) {
      return { data: await addDomain(context.auth, { ...callerIn(context), domain: context.body.domain as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/:orgId/domains",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "listDomains",
      tag: "Organizations",
      summary: "The organization's domains, with their TXT records",
      description: "For its administrators (40300 otherwise).",
      parameters: [orgIdParameter],
      data: listOf("OrganizationDomain"),
      codes: [40400],
    },
    async handle(context) {
      return { data: await listDomains(context.auth, callerIn(context)) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/domains/:domain/verify",
    access: "bearer",
    enabled: domainVerificationOn,
    doc: {
      operationId: "verifyDomain",
      tag: "Organizations",
      summary: "Verify a claimed domain by its TXT record",
      description:
        "By its administrators (40300 otherwise), through `organizations.verifyDomain`, which looks the record up: the library opens no connection of its own (OR-11). A record not found is 42200; a domain another organization verified, 40900; a check that failed, 50300. Only with `organizations.verifyDomain`.",
      parameters: [orgIdParameter, domainParameter],
      data: schemaRef("OrganizationDomain"),
      codes: [40001, 40400, 40900, 42200, 50300],
    },
    async handle(context) {
      return { data: await verifyDomain(context.auth, { ...callerIn(context), domain: context.params.domain as string }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/orgs/:orgId/domains/:domain",
    access: "bearer",
    enabled: organizationsOn,
    doc: {
      operationId: "removeDomain",
      tag: "Organizations",
      summary: "Remove a domain of the organization: no one joins by it any more",
      description: "By its administrators (40300 otherwise).",
      parameters: [orgIdParameter, domainParameter],
      data: answerObject({ removed: { const: true } }),
      codes: [40001, 40400, 42200],
    },
    async handle(context) {
      return { data: await removeDomain(context.auth, { ...callerIn(context), domain: context.params.domain as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/admin/orgs",
    access: "admin",
    enabled: organizationsOn,
    doc: {
      operationId: "listAllOrganizations",
      tag: "Organizations",
      summary: "Every organization of the instance, a page at a time by id",
      description:
        "For the instance's admin role, which is not a member of them. Send `nextCursor` back as `cursor` for the next page.",
      parameters: pageParameters(organizationPageLimit),
      data: answerObject({ organizations: { type: "array", items: adminOrganization }, nextCursor }),
      codes: [40002, 42200],
    },
    async handle(context) {
      const query = new URLSearchParams(context.query);
      const cursor = queryValue(query, "cursor");
      const limit = limitOf(queryValue(query, "limit"), organizationPageLimit);
      const page = await listAllOrganizations(context.auth, {
        ...(cursor === undefined ? {} : { cursor }),
        ...(limit === undefined ? {} : { limit }),
      });
      return { data: { organizations: page.organizations.map(adminOrganizationOf), nextCursor: page.nextCursor } };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/orgs/:orgId",
    access: "admin",
    enabled: organizationsOn,
    doc: {
      operationId: "deleteAnyOrganization",
      tag: "Organizations",
      summary: "Delete any organization",
      description:
        "For the instance's admin role, after the administrator's re-authentication: a recent sign-in, or their own `password` or `totpCode` in an optional JSON body. Every token carrying the organization is refused at its next request.",
      parameters: [{ name: "orgId", in: "path", description: "The organization's id" }],
      body: requestObject(adminProof),
      data: answerObject({ deleted: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      const input = { ...adminProofOf(context), orgId: context.params.orgId as string };
      return { data: await deleteAnyOrganization(context.auth, input) };
    },
  },
];
