import type { Session } from "../session.js";
import { organizationPath } from "./organization-calls.js";

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

/**
 * Makes the {@link OrganizationDomainsClient} of a session.
 *
 * @example
 * ```ts
 * const domains = createOrganizationDomainsClient(session);
 * ```
 */
export function createOrganizationDomainsClient(session: Session): OrganizationDomainsClient {
  return {
    add: (orgId, domain) =>
      session.call<OrganizationDomain>({ method: "POST", path: `${organizationPath(orgId)}/domains`, body: { domain } }),
    list: (orgId) => session.call<OrganizationDomain[]>({ method: "GET", path: `${organizationPath(orgId)}/domains` }),
    verify: (orgId, domain) =>
      session.call<OrganizationDomain>({
        method: "POST",
        path: `${organizationPath(orgId)}/domains/${encodeURIComponent(domain)}/verify`,
      }),
    async remove(orgId, domain) {
      await session.call({ method: "DELETE", path: `${organizationPath(orgId)}/domains/${encodeURIComponent(domain)}` });
    },
  };
}
