import type { OrganizationStore } from "@portcullis/core";
import { sql } from "kysely";
import type { OrganizationDomainRow, OrganizationRow } from "../schema.js";
import { type StoreContext, unlessDuplicate } from "./context.js";
import { insertedBesideOrganization, rowsChanged } from "./organization-queries.js";
import { toDomain, toOrganization } from "./organization-rows.js";

/**
 * The organization store's methods of domains. A domain is verified for one organization at most
 * by the unique key on `verified_domain` (OR-11).
 *
 * @example
 * ```ts
 * const { markDomainVerified } = organizationDomainStore(context);
 * ```
 */
export function organizationDomainStore(
  context: StoreContext,
): Pick<OrganizationStore, "addDomain" | "listDomains" | "markDomainVerified" | "removeDomain" | "findOrganizationByDomain"> {
  const { db, tables: t } = context;

  return {
    async addDomain(domain) {
      return insertedBesideOrganization(
        db,
        sql`insert into ${sql.table(t.organizationDomains)}
            (org_id, domain, verification_value, created_at, verified_at, verified_domain)
          select ${domain.orgId}, ${domain.domain}, ${domain.verificationValue}, ${domain.createdAt}, ${domain.verifiedAt},
            ${domain.verifiedAt === null ? null : domain.domain}
          from ${sql.table(t.organizations)} where id = ${domain.orgId}`,
      );
    },
    async listDomains(orgId) {
      const rows = await db.selectFrom(t.organizationDomains).selectAll().where("org_id", "=", orgId).orderBy("domain").execute();
      return rows.map((row) => toDomain(row as OrganizationDomainRow));
    },
    async markDomainVerified(orgId, domain, now) {
      const verified = await unlessDuplicate(() =>
        db
          .updateTable(t.organizationDomains)
          .set({ verified_at: sql`coalesce(verified_at, ${now})`, verified_domain: domain })
          .where("org_id", "=", orgId)
          .where("domain", "=", domain)
          .execute(),
      );
      if (!verified) return "taken";
      const row = await db
        .selectFrom(t.organizationDomains)
        .select("verified_at")
        .where("org_id", "=", orgId)
        .where("domain", "=", domain)
        .executeTakeFirst();
      return row === undefined ? "not_found" : "verified";
    },
    async removeDomain(orgId, domain) {
      const result = await db
        .deleteFrom(t.organizationDomains)
        .where("org_id", "=", orgId)
        .where("domain", "=", domain)
        .executeTakeFirst();
      return rowsChanged(result) === 1;
    },
    async findOrganizationByDomain(domain) {
      const row = await db
        .selectFrom(`${t.organizationDomains} as d`)
        .innerJoin(`${t.organizations} as o`, "o.id", "d.org_id")
        .selectAll("o")
        .where("d.verified_domain", "=", domain)
        .executeTakeFirst();
      return row ? toOrganization(row as OrganizationRow) : null;
    },
  };
}
