import type {
  RefreshRotation,
  RefreshTokenRecord,
  RotationResult,
  SessionRecord,
  SessionStore,
  TokenState,
} from "@portcullis/core";
import { mayRotate, replacementToken } from "@portcullis/core";
import { type RawBuilder, sql } from "kysely";
import type { RefreshTokenRow, SessionRow, UserRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, compiledOnce, findOne, flag, num, numOrNull, placeholders } from "./context.js";
import { revokeAllSessions } from "./revoke-all.js";
import { toUser } from "./users.js";

function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    userId: userIdFromRow(row.user_id),
    tokenVersion: num(row.token_version),
    amr: JSON.parse(row.amr) as SessionRecord["amr"],
    authTime: num(row.auth_time),
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    revokedAt: numOrNull(row.revoked_at),
    lastUsedAt: num(row.last_used_at),
    userAgent: row.user_agent,
    address: row.address,
  };
}

/** A session as the row `createSession` inserts. Exported for the migration tests, which write older versions' rows. */
export function toSessionRow(session: SessionRecord): SessionRow {
  return {
    id: session.id,
    user_id: session.userId,
    token_version: session.tokenVersion,
    amr: JSON.stringify(session.amr),
    auth_time: session.authTime,
    created_at: session.createdAt,
    expires_at: session.expiresAt,
    revoked_at: session.revokedAt,
    last_used_at: session.lastUsedAt,
    user_agent: session.userAgent,
    address: session.address,
  };
}

function toRefreshToken(row: RefreshTokenRow): RefreshTokenRecord {
  return {
    hash: row.hash,
    sessionId: row.session_id,
    userId: userIdFromRow(row.user_id),
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

const sessionColumns = [
  "id",
  "user_id",
  "token_version",
  "amr",
  "auth_time",
  "created_at",
  "expires_at",
  "revoked_at",
  "last_used_at",
  "user_agent",
  "address",
] as const;
const tokenColumns = ["hash", "session_id", "user_id", "created_at", "expires_at", "spent_at"] as const;
const userColumns = [
  "id",
  "username",
  "username_key",
  "password_hash",
  "roles",
  "disabled",
  "token_version",
  "source",
  "email",
  "email_verified",
  "verified_email_key",
  "created_at",
  "updated_at",
] as const;

/** `alias.column AS alias_column, …`: the columns of one table in a join, named apart from the others'. */
function selectedAs(alias: string, columns: readonly string[]): RawBuilder<unknown> {
  return sql.raw(columns.map((column) => `${alias}.${column} as ${alias}_${column}`).join(", "));
}

/** The row of one table out of a joined row read with {@link selectedAs}; null when the join found none. */
function rowOf<Row>(joined: Record<string, unknown>, alias: string, columns: readonly string[]): Row | null {
  if (joined[`${alias}_${columns[0]}`] === null) return null;
  return Object.fromEntries(columns.map((column) => [column, joined[`${alias}_${column}`]])) as Row;
}

/** What a rotation read: the token as it was before the call, its session and user, the user's TOTP state. */
interface RotationRead {
  token: RefreshTokenRecord;
  session: SessionRecord | null;
  user: ReturnType<typeof toUser> | null;
  totpEnabled: boolean;
}

/** The users columns a rotation reads: the user's own, and those of the declared fields. */
const userColumnsOf = ({ fieldColumns }: StoreContext): readonly string[] => [
  ...userColumns,
  ...fieldColumns.map(({ column }) => column),
];

function toRotationRead(joined: Record<string, unknown>, context: StoreContext): RotationRead {
  const session = rowOf<SessionRow>(joined, "s", sessionColumns);
  const user = rowOf<UserRow>(joined, "u", userColumnsOf(context));
  return {
    token: toRefreshToken(rowOf<RefreshTokenRow>(joined, "r", tokenColumns) as RefreshTokenRow),
    session: session && toSession(session),
    user: user && toUser(user, context.fieldColumns),
    totpEnabled: joined.totp_enabled !== null && flag(joined.totp_enabled as boolean | number | string),
  };
}

/**
 * A refresh on PostgreSQL, one statement (see {@link SessionStore.rotateRefreshToken}): the token,
 * its session, its user and the user's TOTP state read from the statement's snapshot, taken before
 * its writes; the spend, a conditional UPDATE on `spent_at IS NULL` that a concurrent spend's row
 * lock makes wait and then skip (RT-3); and, only from a spend whose token, session and user pass
 * the rule of `mayRotate`, the insert of the replacement and the session's use. Returns the read
 * row with whether it spent the token and the replacement's expiry, or nothing for an unknown hash.
 * Compiled once per store; its values are those of {@link rotationValues}, in that order.
 */
function rotationStatement(context: StoreContext) {
  const t = context.tables;
  const [tokens, sessions, totp] = [t.refreshTokens, t.sessions, t.totp].map((name) => sql.table(name));
  const users = context.usersFrom;
  const [hash, now, nextHash, idleEnd, userAgent, address] = placeholders(context, 6);
  return sql<Record<string, unknown>>`/* prepared */
    with r as (select * from ${tokens} where hash = ${hash}),
    spent as (update ${tokens} set spent_at = ${now} where hash = ${hash} and spent_at is null returning hash),
    s as (select * from ${sessions} where id = (select session_id from r)),
    u as (select * from ${users} as users where id = (select user_id from r)),
    allowed as (
      select s.id as session_id, r.user_id, least(${idleEnd}::bigint, s.expires_at) as expires_at
      from spent, r, s, u
      where r.expires_at > ${now} and s.revoked_at is null and s.expires_at > ${now} and s.user_id = r.user_id
        and not u.disabled and u.token_version = s.token_version
    ),
    inserted as (
      insert into ${tokens} (hash, session_id, user_id, created_at, expires_at, spent_at)
      select ${nextHash}, session_id, user_id, ${now}, expires_at, null from allowed
      returning expires_at
    ),
    touched as (
      update ${sessions} set last_used_at = ${now}, user_agent = ${userAgent}, address = ${address}
      where id = (select session_id from allowed) and revoked_at is null
      returning id
    )
    select ${selectedAs("r", tokenColumns)}, ${selectedAs("s", sessionColumns)}, ${selectedAs("u", userColumnsOf(context))},
      (select enabled from ${totp} where user_id = r.user_id) as totp_enabled,
      exists (select 1 from spent) as spent,
      (select expires_at from inserted) as next_expires_at
    from r left join s on true left join u on true`;
}

/** The values of {@link rotationStatement}, in the order of its placeholders. */
function rotationValues({ hash, now, nextHash, idleMs, use }: RefreshRotation): unknown[] {
  return [hash, now, nextHash, now + idleMs, use.userAgent, use.address];
}

/**
 * What a rotation read on MySQL, before its writes: one SELECT of the token, its session, its user
 * and the user's TOTP state. MySQL has no writing CTE and no `UPDATE … RETURNING`, so the spend,
 * the insert and the session's use follow as a statement each.
 */
function rotationReadQuery(context: StoreContext, hash: string) {
  const { tables: t, usersFrom: users } = context;
  const [tokens, sessions, totp] = [t.refreshTokens, t.sessions, t.totp].map((name) => sql.table(name));
  return sql<Record<string, unknown>>`
    select ${selectedAs("r", tokenColumns)}, ${selectedAs("s", sessionColumns)}, ${selectedAs("u", userColumnsOf(context))},
      p.enabled as totp_enabled
    from ${tokens} r
    left join ${sessions} s on s.id = r.session_id
    left join ${users} u on u.id = r.user_id
    left join ${totp} p on p.user_id = r.user_id
    where r.hash = ${hash}`;
}

/** The {@link RotationResult} of what a rotation read, whether it spent the token and whether it stored the replacement. */
function rotationResult(rotation: RefreshRotation, read: RotationRead, spent: boolean, rotated: boolean): RotationResult {
  if (!spent) return { outcome: "already_spent", token: read.token };
  const token = { ...read.token, spentAt: rotation.now };
  const { session, user } = read;
  if (!rotated || session === null || user === null) return { outcome: "refused", token, session, user };
  return {
    outcome: "rotated",
    token,
    session,
    user,
    totpEnabled: read.totpEnabled,
    next: replacementToken(rotation, token, session),
  };
}

/**
 * A session and its user's token version and disabled flag (see {@link SessionStore.findTokenState}):
 * one SELECT through both primary keys, prepared on PostgreSQL (every protected request may send
 * it), compiled once per store; its one value is the session's id.
 */
function tokenStateQuery(context: StoreContext) {
  const t = context.tables;
  const [sessionId] = placeholders(context, 1);
  return sql<Record<string, unknown>>`/* prepared */
    select s.user_id, s.revoked_at, s.expires_at, u.token_version, u.disabled
    from ${sql.table(t.sessions)} s left join ${sql.table(t.users)} u on u.id = s.user_id
    where s.id = ${sessionId}`;
}

function toTokenState(row: Record<string, unknown>): TokenState {
  return {
    session: {
      userId: userIdFromRow(row.user_id),
      revokedAt: numOrNull(row.revoked_at as string | number | null),
      expiresAt: num(row.expires_at as string | number),
    },
    user:
      row.token_version === null
        ? null
        : { tokenVersion: num(row.token_version as string | number), disabled: flag(row.disabled as boolean | number) },
  };
}

/**
 * The sessions and refresh_tokens tables as a {@link SessionStore}: revoking is a conditional
 * UPDATE on `revoked_at IS NULL` (one statement for all of a user's sessions but the one kept,
 * SE-2), and spending a refresh token one on `spent_at IS NULL` (RT-3), with `RETURNING` on
 * PostgreSQL and the affected-row count deciding the winner on MySQL. A user's sessions are
 * listed through the index on `user_id`.
 */
export function sessionStore(context: StoreContext): SessionStore {
  const { db, postgres, tables: t, isUserId } = context;
  const findSession = (id: string) => findOne(context, t.sessions, "id", id, toSession);
  const findRefreshToken = (hash: string) => findOne(context, t.refreshTokens, "hash", hash, toRefreshToken);
  const readTokenState = compiledOnce(context, () => tokenStateQuery(context));
  const rotateInOneStatement = compiledOnce(context, () => rotationStatement(context));
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
  /** A token another caller spent after it was read is read again, so already_spent carries its spend. */
  const spentMeanwhile = async (read: RotationRead, spent: boolean): Promise<RotationRead> =>
    spent || read.token.spentAt !== null ? read : { ...read, token: (await findRefreshToken(read.token.hash)) ?? read.token };
  const store: SessionStore = {
    async createSession(session) {
      await db.insertInto(t.sessions).values(toSessionRow(session)).execute();
    },
    findSession,
    async findTokenState(id) {
      const row = (await readTokenState([id])).rows[0];
      return row === undefined ? null : toTokenState(row);
    },
    async revokeSession(id, now) {
      return (await updateLive("id", id, { revoked_at: now })) === 1;
    },
    async setTokenVersion(id, tokenVersion) {
      if ((await updateLive("id", id, { token_version: tokenVersion })) === 1) return true;
      // MySQL counts only changed rows: a session already at this version matched too.
      const session = await findSession(id);
      return session !== null && session.revokedAt === null && session.tokenVersion === tokenVersion;
    },
    revokeUserSessions: async (userId, now, exceptSessionId) =>
      isUserId(userId) ? updateLive("user_id", userId, { revoked_at: now }, exceptSessionId) : 0,
    revokeAll: revokeAllSessions(context),
    async listByUser(userId, now, limit) {
      if (!isUserId(userId)) return [];
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
    async rotateRefreshToken(rotation) {
      if (postgres) {
        const joined = (await rotateInOneStatement(rotationValues(rotation))).rows[0];
        if (joined === undefined) return { outcome: "unknown" };
        const spent = flag(joined.spent as boolean);
        const read = await spentMeanwhile(toRotationRead(joined, context), spent);
        return rotationResult(rotation, read, spent, joined.next_expires_at !== null);
      }
      const joined = (await rotationReadQuery(context, rotation.hash).execute(db)).rows[0];
      if (joined === undefined) return { outcome: "unknown" };
      const read = toRotationRead(joined, context);
      const spend = await db
        .updateTable(t.refreshTokens)
        .set({ spent_at: rotation.now })
        .where("hash", "=", rotation.hash)
        .where("spent_at", "is", null)
        .executeTakeFirst();
      const spent = num(spend.numUpdatedRows) === 1;
      const { session, user } = read;
      const rotate = spent && session !== null && user !== null && mayRotate(read.token, session, user, rotation.now);
      if (rotate) {
        await store.insertRefreshToken(replacementToken(rotation, read.token, session));
        await store.recordUse(session.id, rotation.now, rotation.use);
      }
      return rotationResult(rotation, await spentMeanwhile(read, spent), spent, rotate);
    },
  };
  return store;
}
