import type { OrganizationStore } from "@portcullis/core";
import type { OrganizationRow } from "../schema.js";
import { type StoreContext, findOne, unlessDuplicate } from "./context.js";
import { organizationDomainStore } from "./organization-domains.js";
import { organizationInvitationStore } from "./organization-invitations.js";
import { organizationMemberStore } from "./organization-members.js";
import { Refused, organizationQueries, pageOf, unlessRefused } from "./organization-queries.js";
import { toMembershipRow, toOrganization, toOrganizationRow } from "./organization-rows.js";

/**
 * The organization tables (schema version 6) as an {@link OrganizationStore}. The last-owner rule
 * holds under concurrent changes because each change of a membership that could remove an owner
 * first locks the organization's row (`SELECT … FOR UPDATE` in a transaction), so changes of one
 * organization's owners run one after the other, each counting the owners the one before left.
 * An invitation is spent by one conditional UPDATE on its hash, pending and for the address, whose
 * row lock lets one of concurrent acceptances through (OR-6); a domain is verified for one
 * organization at most by the unique key on `verified_domain` (OR-11).
 *
 * Every transaction that writes an organization's invitations or members locks the organization's
 * row first, then takes the rest in one order (invitations, members, sessions); setting the active
 * organization takes the membership's row before the session's. So no two of them wait for each
 * other in a cycle, which MySQL's gap locks would otherwise make of concurrent invitations.
 *
 * The members' and the active organization's methods are in `organization-members.ts`, the
 * invitations' in `organization-invitations.ts`, the domains' in `organization-domains.ts`.
 */
export function organizationStore(context: StoreContext): OrganizationStore {
  return {
    ...organizationRecordStore(context),
    ...organizationMemberStore(context),
    ...organizationInvitationStore(context),
    ...organizationDomainStore(context),
  };
}

/** The organization store's methods of the organizations themselves: created with their owner, read, changed, deleted, listed. */
function organizationRecordStore(
  context: StoreContext,
): Pick<
  OrganizationStore,
  | "createOrganization"
  | "findOrganization"
  | "findOrganizationBySlug"
  | "updateOrganization"
  | "deleteOrganization"
  | "listOrganizations"
> {
  const { db, tables: t } = context;
  const { lockOrganization } = organizationQueries(context);
  const findOrganization = (id: string) => findOne(context, t.organizations, "id", id, toOrganization);

  return {
    async createOrganization(organization, owner) {
      return unlessDuplicate(() =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto(t.organizations).values(toOrganizationRow(organization)).execute();
          await trx.insertInto(t.organizationMembers).values(toMembershipRow(owner)).execute();
        }),
      );
    },
    findOrganization: (id) => findOrganization(id),
    findOrganizationBySlug: (slug) => findOne(context, t.organizations, "slug", slug, toOrganization),
    async updateOrganization(id, changes) {
      const set: Record<string, unknown> = { updated_at: changes.updatedAt };
      if (changes.name !== undefined) set.name = changes.name;
      if (changes.slug !== undefined) set.slug = changes.slug;
      if (changes.rules !== undefined) set.rules = JSON.stringify(changes.rules);
      const written = await unlessDuplicate(() => db.updateTable(t.organizations).set(set).where("id", "=", id).execute());
      if (!written) return "slug_taken";
      return findOrganization(id);
    },
    async deleteOrganization(id) {
      return unlessRefused(db, async (trx) => {
        if (!(await lockOrganization(trx, id))) throw new Refused();
        await trx.deleteFrom(t.organizationInvitations).where("org_id", "=", id).execute();
        await trx.deleteFrom(t.organizationMembers).where("org_id", "=", id).execute();
        await trx.deleteFrom(t.organizationDomains).where("org_id", "=", id).execute();
        await trx.updateTable(t.sessions).set({ active_org_id: null }).where("active_org_id", "=", id).execute();
        await trx.deleteFrom(t.organizations).where("id", "=", id).execute();
      });
    },
    async listOrganizations({ cursor, limit }) {
      const rows = await db
        .selectFrom(t.organizations)
        .selectAll()
        .$if(cursor !== undefined, (query) => query.where("id", ">", cursor as string))
        .orderBy("id")
        .limit(limit + 1)
        .execute();
      return pageOf(
        rows.map((row) => toOrganization(row as OrganizationRow)),
        limit,
        (organization) => organization.id,
      );
    },
  };
}
