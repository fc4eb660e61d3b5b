import { requiredString } from "../../flows/input.js";
import { joinOrganization, listJoinableOrganizations } from "../../organizations/domains.js";
import {
  type UpdateOrganizationInput,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listMyOrganizations,
  updateOrganization,
} from "../../organizations/manage-organization.js";
import { switchOrganization } from "../../organizations/switch-organization.js";
import { answerObject, organizationProperties, requestObject, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { acceptInvitationRoute } from "./organization-invitations.js";
import { callerIn, orgIdParameter, organizationsOn, reauthenticationCodes } from "./organization-route-parts.js";
import { proofFields, reauthentication, sessionOf, signedIn } from "./shared.js";

/**
 * The organizations' own routes (`docs/flows/organizations.md`): create, list, join, switch the
 * session's active one, read, change and delete. Only with `organizations.enabled`. The fixed
 * paths (the invitation's acceptance among them) come before `/auth/orgs/:orgId`, which would
 * match them; the members', invitations' and domains' routes follow in their own files.
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
  acceptInvitationRoute,
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
];
