import type { Page } from "@portcullis/core";
import type { Kysely, RawBuilder } from "kysely";
import type { AnyDatabase, OrganizationMemberRow } from "../schema.js";
import { type StoreContext, num, unlessDuplicate } from "./context.js";
import { toMembership } from "./organization-rows.js";

/** Thrown inside a transaction to roll back what it wrote, and answered as a refusal. */
export class Refused extends Error {}

/** Runs `work` in a transaction; false when it threw {@link Refused}, which rolled it back. */
export async function unlessRefused(
  db: Kysely<AnyDatabase>,
  work: (trx: Kysely<AnyDatabase>) => Promise<void>,
): Promise<boolean> {
  try {
    await db.transaction().execute(work);
    return true;
  } catch (error) {
    if (error instanceof Refused) return false;
    throw error;
  }
}

/** How many rows an UPDATE or a DELETE changed. */
export const rowsChanged = (result: { numUpdatedRows?: bigint; numDeletedRows?: bigint }) =>
  num(result.numUpdatedRows ?? result.numDeletedRows ?? BigInt(0));

/**
 * Runs an `INSERT … SELECT … FROM organizations WHERE id = …`: true when it inserted its row; false
 * when the organization is unknown (nothing selected) or the row's key is taken.
 */
export async function insertedBesideOrganization(db: Kysely<AnyDatabase>, statement: RawBuilder<unknown>): Promise<boolean> {
  let inserted = false;
  const unique = await unlessDuplicate(async () => {
    inserted = num((await statement.execute(db)).numAffectedRows ?? BigInt(0)) === 1;
  });
  return unique && inserted;
}

/** A page of `rows`, read `limit + 1` at a time: the extra row says there is a next page. */
export function pageOf<T>(rows: T[], limit: number, keyOf: (item: T) => string): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last !== undefined ? keyOf(last) : null };
}

/**
 * The reads and locks the organization stores share, over `context`'s tables: each may run in a
 * transaction (`from`, `trx`).
 *
 * @example
 * ```ts
 * const { lockOrganization } = organizationQueries(context);
 * ```
 */
export function organizationQueries({ db, tables: t, isUserId }: StoreContext) {
  return {
    /** The membership of `userId` in `orgId`, or null. */
    async findMembership(orgId: string, userId: string, from: Kysely<AnyDatabase> = db) {
      if (!isUserId(userId)) return null;
      const row = await from
        .selectFrom(t.organizationMembers)
        .selectAll()
        .where("org_id", "=", orgId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return row ? toMembership(row as OrganizationMemberRow) : null;
    },
    /** Locks the organization's row for the rest of the transaction; false for an unknown organization. */
    lockOrganization: async (trx: Kysely<AnyDatabase>, orgId: string) =>
      (await trx.selectFrom(t.organizations).select("id").where("id", "=", orgId).forUpdate().executeTakeFirst()) !== undefined,
  };
}
