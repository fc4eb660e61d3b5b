import { deleteAnyOrganization, listAllOrganizations, organizationPageLimit } from "../../organizations/admin-organizations.js";
import type { OrganizationRecord } from "../../storage/types.js";
import { type JsonSchema, answerObject, requestObject, schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";
import { adminProof, adminProofOf } from "./admin.js";
import { nextCursor, organizationsOn, pageParameters, reauthenticationCodes } from "./organization-route-parts.js";
import { limitOf, queryValue } from "./shared.js";

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

/**
 * The instance administrators' view of the organizations (`/auth/admin/orgs`): list every one,
 * delete any. Only with `organizations.enabled`.
 */
export const adminOrganizationRoutes: readonly Route[] = [
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
