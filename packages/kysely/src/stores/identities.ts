import type { IdentityRecord, IdentityStore } from "@portcullis/core";
import type { IdentityRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, flag, insertUnlessDuplicate, num, numOrNull } from "./context.js";

function toIdentity(row: IdentityRow): IdentityRecord {
  return {
    provider: row.provider,
    subject: row.subject,
    userId: userIdFromRow(row.user_id),
    email: row.email,
    emailVerified: flag(row.email_verified),
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
  };
}

/** A link as its row. */
export function toIdentityRow(identity: IdentityRecord) {
  return {
    provider: identity.provider,
    subject: identity.subject,
    user_id: identity.userId,
    email: identity.email,
    email_verified: identity.emailVerified,
    created_at: identity.createdAt,
    last_used_at: identity.lastUsedAt,
  };
}

/** The identities table as an {@link IdentityStore}: (provider, subject) is its key, so a second link is a duplicate (OA-7). */
export function identityStore(context: StoreContext): IdentityStore {
  const { db, tables: t, isUserId } = context;
  return {
    async link(identity) {
      // A link to an id of another form than your table's can bind no one (a directory's first sign-in proposes core's own).
      if (!isUserId(identity.userId)) return false;
      return insertUnlessDuplicate(context, t.identities, toIdentityRow(identity));
    },
    async find(provider, subject) {
      const row = await db
        .selectFrom(t.identities)
        .selectAll()
        .where("provider", "=", provider)
        .where("subject", "=", subject)
        .executeTakeFirst();
      return row ? toIdentity(row as IdentityRow) : null;
    },
    async listByUser(userId) {
      if (!isUserId(userId)) return [];
      const rows = await db.selectFrom(t.identities).selectAll().where("user_id", "=", userId).orderBy("created_at").execute();
      return rows.map((row) => toIdentity(row as IdentityRow));
    },
    async findByVerifiedEmail(email) {
      const rows = await db
        .selectFrom(t.identities)
        .selectAll()
        .where("email", "=", email)
        .where("email_verified", "=", true)
        .execute();
      return rows.map((row) => toIdentity(row as IdentityRow));
    },
    async unlink(userId, provider, subject) {
      if (!isUserId(userId)) return false;
      const result = await db
        .deleteFrom(t.identities)
        .where("user_id", "=", userId)
        .where("provider", "=", provider)
        .where("subject", "=", subject)
        .executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
  };
}
