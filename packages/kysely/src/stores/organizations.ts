import type {
  AcceptanceResult,
  DomainRecord,
  InvitationRecord,
  MembershipChange,
  MembershipRecord,
  OrganizationRecord,
  OrganizationStore,
  Page,
} from "@portcullis/core";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type {
  AnyDatabase,
  OrganizationDomainRow,
  OrganizationInvitationRow,
  OrganizationMemberRow,
  OrganizationRow,
} from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, num, numOrNull, unlessDuplicate } from "./context.js";

function toOrganization(row: OrganizationRow): OrganizationRecord {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    rules: JSON.parse(row.rules) as OrganizationRecord["rules"],
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

function toOrganizationRow(organization: OrganizationRecord): OrganizationRow {
  return {
    id: organization.id,
    slug: organization.slug,
    name: organization.name,
    rules: JSON.stringify(organization.rules),
    created_at: organization.createdAt,
    updated_at: organization.updatedAt,
  };
}

function toMembership(row: OrganizationMemberRow): MembershipRecord {
  return {
    orgId: row.org_id,
    userId: userIdFromRow(row.user_id),
    roles: JSON.parse(row.roles) as string[],
    createdAt: num(row.created_at),
    lastActiveAt: numOrNull(row.last_active_at),
  };
}

function toMembershipRow(membership: MembershipRecord): OrganizationMemberRow {
  return {
    org_id: membership.orgId,
    user_id: membership.userId,
    roles: JSON.stringify(membership.roles),
    created_at: membership.createdAt,
    last_active_at: membership.lastActiveAt,
  };
}

function toInvitation(row: OrganizationInvitationRow): InvitationRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    email: row.email,
    roles: JSON.parse(row.roles) as string[],
    tokenHash: row.token_hash,
    invitedBy: userIdFromRow(row.invited_by),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    acceptedAt: numOrNull(row.accepted_at),
    acceptedBy: row.accepted_by === null ? null : userIdFromRow(row.accepted_by),
    revokedAt: numOrNull(row.revoked_at),
  };
}

function toDomain(row: OrganizationDomainRow): DomainRecord {
  return {
    orgId: row.org_id,
    domain: row.domain,
    verificationValue: row.verification_value,
    createdAt: num(row.created_at),
    verifiedAt: numOrNull(row.verified_at),
  };
}

const organizationColumns = ["id", "slug", "name", "rules", "created_at", "updated_at"] as const;
const memberColumns = ["org_id", "user_id", "roles", "created_at", "last_active_at"] as const;

/** Thrown inside a transaction to roll back what it wrote, and answered as a refusal. */
class Refused extends Error {}

/** Runs `work` in a transaction; false when it threw {@link Refused}, which rolled it back. */
async function unlessRefused(db: Kysely<AnyDatabase>, work: (trx: Kysely<AnyDatabase>) => Promise<void>): Promise<boolean> {
  try {
    await db.transaction().execute(work);
    return true;
  } catch (error) {
    if (error instanceof Refused) return false;
    throw error;
  }
}

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
 */
export function organizationStore(context: StoreContext): OrganizationStore {
  const { db, postgres, tables: t, isUserId } = context;
  const rowsChanged = (result: { numUpdatedRows?: bigint; numDeletedRows?: bigint }) =>
    num(result.numUpdatedRows ?? result.numDeletedRows ?? BigInt(0));
  /** Whether a member's JSON `roles` hold `role`. */
  const holds = (role: string): RawBuilder<boolean> =>
    postgres
      ? sql<boolean>`roles::jsonb @> jsonb_build_array(cast(${role} as text))`
      : sql<boolean>`json_contains(roles, json_quote(${role}))`;

  const findOrganization = async (id: string, from: Kysely<AnyDatabase> = db) => {
    const row = await from.selectFrom(t.organizations).selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toOrganization(row as OrganizationRow) : null;
  };
  const findMembership = async (orgId: string, userId: string, from: Kysely<AnyDatabase> = db) => {
    if (!isUserId(userId)) return null;
    const row = await from
      .selectFrom(t.organizationMembers)
      .selectAll()
      .where("org_id", "=", orgId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    return row ? toMembership(row as OrganizationMemberRow) : null;
  };
  const findInvitationBy = async (column: "id" | "token_hash", value: string, from: Kysely<AnyDatabase> = db) => {
    const row = await from.selectFrom(t.organizationInvitations).selectAll().where(column, "=", value).executeTakeFirst();
    return row ? toInvitation(row as OrganizationInvitationRow) : null;
  };
  /** Locks the organization's row for the rest of the transaction; false for an unknown organization. */
  const lockOrganization = async (trx: Kysely<AnyDatabase>, orgId: string) =>
    (await trx.selectFrom(t.organizations).select("id").where("id", "=", orgId).forUpdate().executeTakeFirst()) !== undefined;
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
  /** Pending at `now`: not accepted, not revoked, not expired. */
  // biome-ignore lint/suspicious/noExplicitAny: a where clause over the invitations' columns.
  const pending = (query: any, now: number) =>
    query.where("accepted_at", "is", null).where("revoked_at", "is", null).where("expires_at", ">", now);
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
    async createOrganization(organization, owner) {
      return unlessDuplicate(() =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto(t.organizations).values(toOrganizationRow(organization)).execute();
          await trx.insertInto(t.organizationMembers).values(toMembershipRow(owner)).execute();
        }),
      );
    },
    findOrganization: (id) => findOrganization(id),
    async findOrganizationBySlug(slug) {
      const row = await db.selectFrom(t.organizations).selectAll().where("slug", "=", slug).executeTakeFirst();
      return row ? toOrganization(row as OrganizationRow) : null;
    },
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
      const selected = [
        ...organizationColumns.map((column) => `o.${column} as o_${column}`),
        ...memberColumns.map((column) => `m.${column} as m_${column}`),
      ].join(", ");
      const { rows } = await sql<Record<string, unknown>>`select ${sql.raw(selected)}
        from ${sql.table(t.organizationMembers)} m join ${sql.table(t.organizations)} o on o.id = m.org_id
        where m.user_id = ${userId} order by o.id`.execute(db);
      const part = (row: Record<string, unknown>, alias: string, columns: readonly string[]) =>
        Object.fromEntries(columns.map((column) => [column, row[`${alias}_${column}`]]));
      return rows.map((row) => ({
        organization: toOrganization(part(row, "o", organizationColumns) as unknown as OrganizationRow),
        membership: toMembership(part(row, "m", memberColumns) as unknown as OrganizationMemberRow),
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
    async createInvitation(invitation) {
      await db.transaction().execute(async (trx) => {
        // One creation at a time per organization: on MySQL two would each hold the gap of the
        // (org_id, email) index their UPDATE read, and each wait for the other's to insert.
        await lockOrganization(trx, invitation.orgId);
        await pending(
          trx
            .updateTable(t.organizationInvitations)
            .set({ revoked_at: invitation.createdAt })
            .where("org_id", "=", invitation.orgId)
            .where("email", "=", invitation.email),
          invitation.createdAt,
        ).execute();
        await trx
          .insertInto(t.organizationInvitations)
          .values({
            id: invitation.id,
            org_id: invitation.orgId,
            email: invitation.email,
            roles: JSON.stringify(invitation.roles),
            token_hash: invitation.tokenHash,
            invited_by: invitation.invitedBy,
            created_at: invitation.createdAt,
            expires_at: invitation.expiresAt,
            accepted_at: invitation.acceptedAt,
            accepted_by: invitation.acceptedBy,
            revoked_at: invitation.revokedAt,
          })
          .execute();
      });
    },
    async findInvitation(orgId, id) {
      const invitation = await findInvitationBy("id", id);
      return invitation === null || invitation.orgId !== orgId ? null : invitation;
    },
    async listInvitations(orgId, now) {
      const rows = await pending(db.selectFrom(t.organizationInvitations).selectAll().where("org_id", "=", orgId), now)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .execute();
      return rows.map((row: unknown) => toInvitation(row as OrganizationInvitationRow));
    },
    async replaceInvitationToken(orgId, id, tokenHash, expiresAt, now) {
      const result = await pending(
        db.updateTable(t.organizationInvitations).set({ token_hash: tokenHash, expires_at: expiresAt }).where("id", "=", id),
        now,
      )
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      return rowsChanged(result) === 1;
    },
    async revokeInvitation(orgId, id, now) {
      const result = await pending(db.updateTable(t.organizationInvitations).set({ revoked_at: now }).where("id", "=", id), now)
        .where("org_id", "=", orgId)
        .executeTakeFirst();
      return rowsChanged(result) === 1;
    },
    async acceptInvitation({ tokenHash, userId, email, now }): Promise<AcceptanceResult> {
      if (!isUserId(userId)) return { outcome: "refused" };
      const found = await findInvitationBy("token_hash", tokenHash);
      if (found === null) return { outcome: "refused" };
      return db.transaction().execute(async (trx): Promise<AcceptanceResult> => {
        if (!(await lockOrganization(trx, found.orgId))) return { outcome: "refused" };
        // The one conditional write that decides: of concurrent acceptances one spends it (OR-6).
        const spent = await pending(
          trx
            .updateTable(t.organizationInvitations)
            .set({ accepted_at: now, accepted_by: userId })
            .where("token_hash", "=", tokenHash)
            .where("org_id", "=", found.orgId)
            .where("email", "=", email),
          now,
        ).executeTakeFirst();
        if (rowsChanged(spent) !== 1) return { outcome: "refused" };
        const invitation = (await findInvitationBy("token_hash", tokenHash, trx)) as InvitationRecord;
        const membership: MembershipRecord = {
          orgId: invitation.orgId,
          userId,
          roles: invitation.roles,
          createdAt: now,
          lastActiveAt: null,
        };
        const insert = trx.insertInto(t.organizationMembers).values(toMembershipRow(membership));
        const added = postgres
          ? (await insert
              .onConflict((conflict) => conflict.columns(["org_id", "user_id"]).doNothing())
              .returning("user_id")
              .executeTakeFirst()) !== undefined
          : // MySQL ends only the refused statement, not the transaction.
            await unlessDuplicate(() => insert.execute());
        if (added) return { outcome: "accepted", invitation, membership };
        const existing = (await findMembership(invitation.orgId, userId, trx)) as MembershipRecord;
        return { outcome: "already_member", invitation, membership: existing };
      });
    },
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

/**
 * Runs an `INSERT … SELECT … FROM organizations WHERE id = …`: true when it inserted its row; false
 * when the organization is unknown (nothing selected) or the row's key is taken.
 */
async function insertedBesideOrganization(db: Kysely<AnyDatabase>, statement: RawBuilder<unknown>): Promise<boolean> {
  let inserted = false;
  const unique = await unlessDuplicate(async () => {
    inserted = num((await statement.execute(db)).numAffectedRows ?? BigInt(0)) === 1;
  });
  return unique && inserted;
}

/** A page of `rows`, read `limit + 1` at a time: the extra row says there is a next page. */
function pageOf<T>(rows: T[], limit: number, keyOf: (item: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? keyOf(last) : null };
}
