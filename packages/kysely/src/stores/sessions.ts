import type { RefreshTokenRecord, SessionRecord, SessionStore } from "@portcullis/core";
import type { RefreshTokenRow, SessionRow } from "../schema.js";
import { type StoreContext, findOne, num, numOrNull } from "./context.js";

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    tokenVersion: num(row.token_version),
    amr: JSON.parse(row.amr) as SessionRecord["amr"],
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    revokedAt: numOrNull(row.revoked_at),
    lastUsedAt: num(row.last_used_at),
    userAgent: row.user_agent,
    address: row.address,
  };
}

function toRefreshToken(row: RefreshTokenRow): RefreshTokenRecord {
  return {
    hash: row.hash,
    sessionId: row.session_id,
    userId: row.user_id,
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    spentAt: numOrNull(row.spent_at),
  };
}

/**
 * The SELECT behind {@link SessionStore.listByUser}: the user's rows found through the index on
 * `user_id`, the live ones kept, newest first. Exported for the test that reads its plan.
 */
export function listSessionsQuery({ db, tables: t }: StoreContext, userId: string, now: number, limit: number) {
  return db
    .selectFrom(t.sessions)
    .selectAll()
    .where("user_id", "=", userId)
    .where("revoked_at", "is", null)
    .where("expires_at", ">", now)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit);
}

/**
 * The sessions and refresh_tokens tables as a {@link SessionStore}: revoking is a conditional
 * UPDATE on `revoked_at IS NULL` (one statement for all of a user's sessions but the one kept,
 * SE-2), and spending a refresh token one on `spent_at IS NULL` (RT-3), with `RETURNING` on
 * PostgreSQL and the affected-row count deciding the winner on MySQL. A user's sessions are
 * listed through the index on `user_id`.
 */
export function sessionStore(context: StoreContext): SessionStore {
  const { db, postgres, tables: t } = context;
  const findSession = (id: string) => findOne(context, t.sessions, "id", id, toSession);
  const findRefreshToken = (hash: string) => findOne(context, t.refreshTokens, "hash", hash, toRefreshToken);
  /** Sets `set` on the sessions, not yet revoked, whose `column` is `value`; returns how many it changed. */
  const updateLive = async (column: "id" | "user_id", value: string, set: Record<string, unknown>, exceptId?: string) => {
    const result = await db
      .updateTable(t.sessions)
      .set(set)
      .where(column, "=", value)
      .where("revoked_at", "is", null)
      .$if(exceptId !== undefined, (query) => query.where("id", "<>", exceptId as string))
      .executeTakeFirst();
    return num(result.numUpdatedRows);
  };
  return {
    async createSession(session) {
      await db
        .insertInto(t.sessions)
        .values({
          id: session.id,
          user_id: session.userId,
          token_version: session.tokenVersion,
          amr: JSON.stringify(session.amr),
          created_at: session.createdAt,
          expires_at: session.expiresAt,
          revoked_at: session.revokedAt,
          last_used_at: session.lastUsedAt,
          user_agent: session.userAgent,
          address: session.address,
        })
        .execute();
    },
    findSession,
    async revokeSession(id, now) {
      return (await updateLive("id", id, { revoked_at: now })) === 1;
    },
    async setTokenVersion(id, tokenVersion) {
      if ((await updateLive("id", id, { token_version: tokenVersion })) === 1) return true;
      // MySQL counts only changed rows: a session already at this version matched too.
      const session = await findSession(id);
      return session !== null && session.revokedAt === null && session.tokenVersion === tokenVersion;
    },
    revokeUserSessions: (userId, now, exceptSessionId) => updateLive("user_id", userId, { revoked_at: now }, exceptSessionId),
    async listByUser(userId, now, limit) {
      const rows = await listSessionsQuery(context, userId, now, limit).execute();
      return rows.map((row) => toSession(row as SessionRow));
    },
    async recordUse(id, now, use) {
      await updateLive("id", id, { last_used_at: now, user_agent: use.userAgent, address: use.address });
    },
    async insertRefreshToken(token) {
      await db
        .insertInto(t.refreshTokens)
        .values({
          hash: token.hash,
          session_id: token.sessionId,
          user_id: token.userId,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
          spent_at: token.spentAt,
        })
        .execute();
    },
    findRefreshToken,
    async spendRefreshToken(hash, now) {
      const spend = db.updateTable(t.refreshTokens).set({ spent_at: now }).where("hash", "=", hash).where("spent_at", "is", null);
      if (postgres) {
        const row = await spend.returningAll().executeTakeFirst();
        if (row) return { outcome: "spent", token: toRefreshToken(row as RefreshTokenRow) };
      } else if (num((await spend.executeTakeFirst()).numUpdatedRows) === 1) {
        return { outcome: "spent", token: (await findRefreshToken(hash)) as RefreshTokenRecord };
      }
      const token = await findRefreshToken(hash);
      return token ? { outcome: "already_spent", token } : { outcome: "unknown" };
    },
  };
}
