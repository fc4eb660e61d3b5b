import type { AcceptanceResult, InvitationRecord, MembershipRecord, OrganizationStore } from "@portcullis/core";
import type { Kysely } from "kysely";
import type { AnyDatabase, OrganizationInvitationRow } from "../schema.js";
import { type StoreContext, unlessDuplicate } from "./context.js";
import { organizationQueries, rowsChanged } from "./organization-queries.js";
import { toInvitation, toMembershipRow } from "./organization-rows.js";

/**
 * The organization store's methods of invitations. An invitation is spent by one conditional
 * UPDATE on its hash, pending and for the address, whose row lock lets one of concurrent
 * acceptances through (OR-6).
 *
 * @example
 * ```ts
 * const { acceptInvitation } = organizationInvitationStore(context);
 * ```
 */
export function organizationInvitationStore(
  context: StoreContext,
): Pick<
  OrganizationStore,
  "createInvitation" | "findInvitation" | "listInvitations" | "replaceInvitationToken" | "revokeInvitation" | "acceptInvitation"
> {
  const { db, postgres, tables: t, isUserId } = context;
  const { findMembership, lockOrganization } = organizationQueries(context);
  const findInvitationBy = async (column: "id" | "token_hash", value: string, from: Kysely<AnyDatabase> = db) => {
    const row = await from.selectFrom(t.organizationInvitations).selectAll().where(column, "=", value).executeTakeFirst();
    return row ? toInvitation(row as OrganizationInvitationRow) : null;
  };
  /** Pending at `now`: not accepted, not revoked, not expired. */
  // biome-ignore lint/suspicious/noExplicitAny: a where clause over the invitations' columns.
  const pending = (query: any, now: number) =>
    query.where("accepted_at", "is", null).where("revoked_at", "is", null).where("expires_at", ">", now);
  return {
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
  };
}
