import type { MembershipChange, MembershipRecord, OrganizationStore, Page } from "@portcullis/core";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { AnyDatabase, OrganizationMemberRow, OrganizationRow } from "../schema.js";
import { type StoreContext, num, rowOf, selectedAs } from "./context.js";
import {
  Refused,
  insertedBesideOrganization,
  organizationQueries,
  pageOf,
  rowsChanged,
  unlessRefused,
} from "./organization-queries.js";
import { memberColumns, organizationColumns, toMembership, toMembershipRow, toOrganization } from "./organization-rows.js";

/**
 * The organization store's methods of memberships and of the sessions' active organization. A
 * change that could take the owner role from the last member holding it locks the organization's
 * row first, then counts the other owners (the last-owner rule, OR-3).
 *
 * @example
 * ```ts
 * const { changeMemberRoles } = organizationMemberStore(context);
 * ```
 */
export function organizationMemberStore(
  context: StoreContext,
): Pick<
  OrganizationStore,
  | "findMembership"
  | "listMembers"
  | "listUserOrganizations"
  | "addMember"
  | "changeMemberRoles"
  | "removeMember"
  | "setActiveOrganization"
  | "clearActiveOrganization"
> {
  const { db, postgres, tables: t, isUserId } = context;
  const { findMembership, lockOrganization } = organizationQueries(context);
  /** Whether a member's JSON `roles` hold `role`. */
  const holds = (role: string): RawBuilder<boolean> =>
    postgres
      ? sql<boolean>`roles::jsonb @> jsonb_build_array(cast(${role} as text))`
      : sql<boolean>`json_contains(roles, json_quote(${role}))`;
  /** How many members of the organization other than `userId` hold `ownerRole`, read after the lock. */
  const otherOwners = async (trx: Kysely<AnyDatabase>, orgId: string, userId: string, ownerRole: string) => {
    const row = await trx
      .selectFrom(t.organizationMembers)
      .select(sql<number | string | bigint>`count(*)`.as("owners"))
      .where("org_id", "=", orgId)
      .where("user_id", "<>", userId)
      .where(holds(ownerRole))
      // MySQL's repeatable read: a locking read sees the rows as committed now, not a snapshot.
      .$if(!postgres, (query) => query.forUpdate())
      .executeTakeFirst();
    return num(row?.owners ?? 0);
  };
  /**
   * Changes a membership (`change`, on the locked organization) unless it would take `ownerRole`
   * from the last member holding it. One transaction that locks the organization's row first.
   */
  const changeMembership = async (
    orgId: string,
    userId: string,
    ownerRole: string,
    keepsOwner: (membership: MembershipRecord) => boolean,
    change: (trx: Kysely<AnyDatabase>) => Promise<void>,
  ): Promise<MembershipChange> => {
    if (!isUserId(userId)) return "not_found";
    return db.transaction().execute(async (trx) => {
      if (!(await lockOrganization(trx, orgId))) return "not_found";
      const membership = await findMembership(orgId, userId, trx);
      if (membership === null) return "not_found";
      const losesOwner = membership.roles.includes(ownerRole) && !keepsOwner(membership);
      if (losesOwner && (await otherOwners(trx, orgId, userId, ownerRole)) === 0) return "last_owner";
      await change(trx);
      return "done";
    });
  };
  return {
    findMembership: (orgId, userId) => findMembership(orgId, userId),
    async listMembers(orgId, { cursor, limit }): Promise<Page<MembershipRecord>> {
      if (cursor !== undefined && !isUserId(cursor)) return { items: [], nextCursor: null };
      const rows = await db
        .selectFrom(t.organizationMembers)
        .selectAll()
        .where("org_id", "=", orgId)
        .$if(cursor !== undefined, (query) => query.where("user_id", ">", cursor as string))
        .orderBy("user_id")
        .limit(limit + 1)
        .execute();
      return pageOf(
        rows.map((row) => toMembership(row as OrganizationMemberRow)),
        limit,
        (membership) => membership.userId,
      );
    },
    async listUserOrganizations(userId) {
      if (!isUserId(userId)) return [];
      const selected = sql.join([selectedAs("o", organizationColumns), selectedAs("m", memberColumns)]);
      const { rows } = await sql<Record<string, unknown>>`select ${selected}
        from ${sql.table(t.organizationMembers)} m join ${sql.table(t.organizations)} o on o.id = m.org_id
        where m.user_id = ${userId} order by o.id`.execute(db);
      return rows.map((row) => ({
        organization: toOrganization(rowOf(row, "o", organizationColumns) as OrganizationRow),
        membership: toMembership(rowOf(row, "m", memberColumns) as OrganizationMemberRow),
      }));
    },
    async addMember(membership) {
      if (!isUserId(membership.userId)) return false;
      const row = toMembershipRow(membership);
      return insertedBesideOrganization(
        db,
        sql`insert into ${sql.table(t.organizationMembers)} (org_id, user_id, roles, created_at, last_active_at)
          select ${row.org_id}, ${row.user_id}, ${row.roles}, ${row.created_at}, ${row.last_active_at}
          from ${sql.table(t.organizations)} where id = ${row.org_id}`,
      );
    },
    changeMemberRoles: (orgId, userId, roles, ownerRole) =>
      changeMembership(
        orgId,
        userId,
        ownerRole,
        () => roles.includes(ownerRole),
        async (trx) => {
          await trx
            .updateTable(t.organizationMembers)
            .set({ roles: JSON.stringify(roles) })
            .where("org_id", "=", orgId)
            .where("user_id", "=", userId)
            .execute();
        },
      ),
    removeMember: (orgId, userId, ownerRole) =>
      changeMembership(
        orgId,
        userId,
        ownerRole,
        () => false,
        async (trx) => {
          await trx.deleteFrom(t.organizationMembers).where("org_id", "=", orgId).where("user_id", "=", userId).execute();
          await trx
            .updateTable(t.sessions)
            .set({ active_org_id: null })
            .where("user_id", "=", userId)
            .where("active_org_id", "=", orgId)
            .execute();
        },
      ),
    async setActiveOrganization(sessionId, userId, orgId, now) {
      if (!isUserId(userId)) return false;
      return unlessRefused(db, async (trx) => {
        if (orgId !== null) {
          // The membership's row first (locked by this write), as every transaction here takes it before the session's.
          await trx
            .updateTable(t.organizationMembers)
            .set({ last_active_at: now })
            .where("org_id", "=", orgId)
            .where("user_id", "=", userId)
            .execute();
        }
        const ofUser = sql`id = ${sessionId} and user_id = ${userId} and revoked_at is null`;
        const isMember =
          orgId === null
            ? sql`1 = 1`
            : sql`exists (select 1 from ${sql.table(t.organizationMembers)} m where m.org_id = ${orgId} and m.user_id = ${userId})`;
        const updated = await sql`update ${sql.table(t.sessions)} set active_org_id = ${orgId}
          where ${ofUser} and ${isMember}`.execute(trx);
        if (num(updated.numAffectedRows ?? BigInt(0)) === 1) return;
        // MySQL counts only changed rows: a session that already had this organization active matched too.
        const same = orgId === null ? sql`active_org_id is null` : sql`active_org_id = ${orgId}`;
        const { rows } = await sql`select 1 as found from ${sql.table(t.sessions)}
          where ${ofUser} and ${isMember} and ${same}`.execute(trx);
        if (postgres || rows.length === 0) throw new Refused();
      });
    },
    async clearActiveOrganization(orgId) {
      const result = await db
        .updateTable(t.sessions)
        .set({ active_org_id: null })
        .where("active_org_id", "=", orgId)
        .executeTakeFirst();
      return rowsChanged(result);
    },
  };
}
