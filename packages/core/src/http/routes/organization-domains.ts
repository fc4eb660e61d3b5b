import type { Auth } from "../../auth.js";
import { addDomain, listDomains, removeDomain, verifyDomain } from "../../organizations/domains.js";
import { answerObject, listOf, requestObject, requiredText, schemaRef } from "../openapi-schemas.js";
import type { ParameterDoc, Route } from "../route-types.js";
import { callerIn, orgIdParameter, organizationsOn } from "./organization-route-parts.js";

/** The domain verification route: only with `organizations.verifyDomain` too. */
const domainVerificationOn = (auth: Auth): boolean => organizationsOn(auth) && auth.config.organizations.verifyDomain !== null;

const domainParameter: ParameterDoc = { name: "domain", in: "path", description: "The domain, as the list shows it" };

/**
 * The domains an organization claims (`/auth/orgs/:orgId/domains`): claim, list, verify, give up.
 * Only with `organizations.enabled`.
 */
export const organizationDomainRoutes: readonly Route[] = [
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
];
