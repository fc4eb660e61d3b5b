import type { ChallengeKind, ChallengeRecord, ChallengeStore } from "@portcullis/core";
import { sql } from "kysely";
import type { ChallengeRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, num, updateCounting, upsert } from "./context.js";
import { deleteExpiredRows } from "./expired-rows.js";

function toChallenge(row: ChallengeRow): ChallengeRecord {
  return {
    id: row.id,
    kind: row.kind as ChallengeKind,
    userId: row.user_id === null ? null : userIdFromRow(row.user_id),
    data: JSON.parse(row.data) as Record<string, unknown>,
    attempts: num(row.attempts),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
  };
}

/**
 * The challenges table as a {@link ChallengeStore}: consuming is a `DELETE … RETURNING` on
 * PostgreSQL and a conditional DELETE whose affected rows decide the winner on MySQL (ST-1); an
 * attempt is one counting UPDATE (TMP-4). Its `deleteExpired` also prunes the other tables' expired rows.
 */
export function challengeStore(context: StoreContext): ChallengeStore {
  const { db, postgres, tables: t } = context;
  const findChallenge = async (id: string, kind: ChallengeKind, now: number) => {
    const row = await db
      .selectFrom(t.challenges)
      .selectAll()
      .where("id", "=", id)
      .where("kind", "=", kind)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    return row ? toChallenge(row as ChallengeRow) : null;
  };
  return {
    async put(challenge) {
      const values = {
        id: challenge.id,
        kind: challenge.kind,
        user_id: challenge.userId,
        data: JSON.stringify(challenge.data),
        attempts: challenge.attempts,
        created_at: challenge.createdAt,
        expires_at: challenge.expiresAt,
      };
      const { id: _id, ...changes } = values;
      await upsert(context, t.challenges, "id", values, changes);
    },
    find: findChallenge,
    async consume(id, kind, now) {
      const live = db.deleteFrom(t.challenges).where("id", "=", id).where("kind", "=", kind).where("expires_at", ">", now);
      if (postgres) {
        const row = await live.returningAll().executeTakeFirst();
        return row ? toChallenge(row as ChallengeRow) : null;
      }
      // MySQL: the delete decides who wins; the winner returns what it read just before.
      const found = await findChallenge(id, kind, now);
      if (!found) return null;
      return num((await live.executeTakeFirst()).numDeletedRows) === 1 ? found : null;
    },
    async takeAttempt(id, kind, limit, now) {
      const attempts = await updateCounting(context, t.challenges, "attempts", sql`attempts + 1`, (query) =>
        query.where("id", "=", id).where("kind", "=", kind).where("expires_at", ">", now).where("attempts", "<", limit),
      );
      if (attempts === null) return null;
      const challenge = await db.selectFrom(t.challenges).selectAll().where("id", "=", id).executeTakeFirst();
      return challenge ? { ...toChallenge(challenge as ChallengeRow), attempts } : null;
    },
    deleteExpired: (now, limit) => deleteExpiredRows(context, now, limit),
  };
}
