import type { Auth } from "../../auth.js";
import {
  acceptInvitation,
  inviteMember,
  listInvitations,
  resendInvitation,
  revokeInvitation,
} from "../../organizations/invitations.js";
import { answerObject, listOf, requestObject, requiredText, schemaRef } from "../openapi-schemas.js";
import type { ParameterDoc, Route } from "../route-types.js";
import { callerIn, orgIdParameter, organizationRoles, organizationsOn } from "./organization-route-parts.js";
import { signedIn } from "./shared.js";

/** The routes that send an invitation's mail: only with `email.invitationUrl` too. */
const invitationsOn = (auth: Auth): boolean => organizationsOn(auth) && (auth.config.email?.invitationUrl ?? null) !== null;

const invitationIdParameter: ParameterDoc = { name: "invitationId", in: "path", description: "The invitation's `id`" };

/**
 * Accepting an invitation (`POST /auth/orgs/invitations/accept`). A fixed path: listed among the
 * organizations' routes, before `/auth/orgs/:orgId`.
 */
export const acceptInvitationRoute: Route = {
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
    body: requestObject({ token: { ...requiredText, description: "The `token` of the invitation link's fragment" } }, ["token"]),
    data: schemaRef("Organization"),
    codes: [40001, 40400],
  },
  async handle(context) {
    return { data: await acceptInvitation(context.auth, { userId: signedIn(context), token: context.body.token as string }) };
  },
};

/**
 * An organization's invitations by email (`/auth/orgs/:orgId/invitations`): send, list, resend,
 * revoke. Only with `organizations.enabled`.
 */
export const organizationInvitationRoutes: readonly Route[] = [
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
];
