import { changeMemberRoles, listMembers, memberPageLimit, removeMember } from "../../organizations/members.js";
import { answerObject, listOf, requestObject, schemaRef } from "../openapi-schemas.js";
import type { ParameterDoc, Route } from "../route-types.js";
import {
  callerIn,
  nextCursor,
  orgIdParameter,
  organizationRoles,
  organizationsOn,
  pageParameters,
  reauthenticationCodes,
} from "./organization-route-parts.js";
import { limitOf, proofFields, queryValue, reauthentication } from "./shared.js";

const memberIdParameter: ParameterDoc = { name: "userId", in: "path", description: "The member's user id" };

/**
 * An organization's members (`/auth/orgs/:orgId/members`): list them, change their roles, remove
 * them. Only with `organizations.enabled`.
 */
export const organizationMemberRoutes: readonly Route[] = [
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
];
