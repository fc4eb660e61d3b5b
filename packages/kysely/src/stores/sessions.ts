import type {
  LegacyRefreshToken,
  RefreshRotation,
  RotationResult,
  SessionRecord,
  SessionStore,
  TokenState,
} from "@portcullis/core";
import { mayRotate } from "@portcullis/core";
import { sql } from "kysely";
import type { RefreshTokenRow, SessionRow, UserRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, compiledOnce, findOne, flag, num, numOrNull, placeholders, rowOf, selectedAs } from "./context.js";
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
    refreshHash: row.refresh_hash,
    refreshGeneration: num(row.refresh_generation),
    refreshExpiresAt: num(row.refresh_expires_at),
    activeOrgId: row.active_org_id ?? null,
    impersonatorId: row.impersonator_id === null || row.impersonator_id === undefined ? null : userIdFromRow(row.impersonator_id),
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
    refresh_hash: session.refreshHash,
    refresh_generation: session.refreshGeneration,
    refresh_expires_at: session.refreshExpiresAt,
    active_org_id: session.activeOrgId ?? null,
    impersonator_id: session.impersonatorId ?? null,
  };
}

function toLegacyRefreshToken(row: RefreshTokenRow): LegacyRefreshToken {
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
  "refresh_hash",
  "refresh_generation",
  "refresh_expires_at",
  "active_org_id",
  "impersonator_id",
] as const;
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

/** What a rotation read, as it was before the rotation's write: the session, its user, the user's TOTP state. */
interface RotationRead {
  session: SessionRecord;
  user: ReturnType<typeof toUser> | null;
  totpEnabled: boolean;
}

/** The users columns a rotation reads: the user's own, and those of the declared fields. */
const userColumnsOf = ({ fieldColumns }: StoreContext): readonly string[] => [
  ...userColumns,
  ...fieldColumns.map(({ column }) => column),
];

function toRotationRead(joined: Record<string, unknown>, context: StoreContext): RotationRead {
  const user = rowOf<UserRow>(joined, "u", userColumnsOf(context));
  return {
    session: toSession(rowOf<SessionRow>(joined, "s", sessionColumns) as SessionRow),
    user: user && toUser(user, context.fieldColumns),
    totpEnabled: joined.totp_enabled !== null && flag(joined.totp_enabled as boolean | number | string),
  };
}

/**
 * The condition of the rotation's UPDATE of the session `target`, beyond its id and token, as
 * {@link mayRotate} states it: not revoked, neither it nor its token expired (RT-4: `now` and
 * `nowAgain` are the rotation's time), and its user there (through `usersFrom`: your table's row
 * too, with the `users` option), enabled, at the session's token version (TV-2).
 */
function mayRotateWhere(context: StoreContext, now: unknown, nowAgain: unknown) {
  return sql`target.revoked_at is null and target.expires_at > ${now} and target.refresh_expires_at > ${nowAgain}
        and exists (select 1 from ${context.usersFrom} as holder
          where holder.id = target.user_id and not holder.disabled and holder.token_version = target.token_version)`;
}

/**
 * A refresh on PostgreSQL, one statement (see {@link SessionStore.rotateRefresh}): the session, its
 * user and the user's TOTP state read from the statement's snapshot, taken before its write, and
 * one conditional UPDATE of the session by its primary key, on the token it holds and the rule of
 * {@link mayRotateWhere}. A concurrent rotation of the same session holds the row's lock; this
 * UPDATE waits for it, checks its condition again on the row that rotation left, which holds
 * another token, and writes nothing (RT-3). Returns the read row with whether it rotated, or
 * nothing for an unknown session. Compiled once per store; its values are those of
 * {@link rotationValues}, in that order.
 */
function rotationStatement(context: StoreContext) {
  const [sessions, totp] = [context.tables.sessions, context.tables.totp].map((name) => sql.table(name));
  const [sessionId, hash, nextHash, nextGeneration, idleEnd, now, userAgent, address] = placeholders(context, 8);
  return sql<Record<string, unknown>>`/* prepared */
    with s as (select * from ${sessions} where id = ${sessionId}),
    u as (select * from ${context.usersFrom} as users where id = (select user_id from s)),
    rotated as (
      update ${sessions} as target set refresh_hash = ${nextHash}, refresh_generation = ${nextGeneration},
        refresh_expires_at = least(${idleEnd}::bigint, target.expires_at), last_used_at = ${now},
        user_agent = ${userAgent}, address = ${address}
      where target.id = ${sessionId} and target.refresh_hash = ${hash} and ${mayRotateWhere(context, now, now)}
      returning target.id
    )
    select ${selectedAs("s", sessionColumns)}, ${selectedAs("u", userColumnsOf(context))},
      (select enabled from ${totp} where user_id = s.user_id) as totp_enabled,
      exists (select 1 from rotated) as rotated
    from s left join u on true`;
}

/** The values of {@link rotationStatement}, in the order of its placeholders. */
function rotationValues({ sessionId, hash, nextHash, nextGeneration, idleMs, now, use }: RefreshRotation): unknown[] {
  return [sessionId, hash, nextHash, nextGeneration, now + idleMs, now, use.userAgent, use.address];
}

/**
 * What a rotation on MySQL reads before its write: the session, its user and the user's TOTP
 * state, one SELECT through their primary keys. Compiled once per store; its one value is the
 * session's id.
 */
function rotationReadQuery(context: StoreContext) {
  const t = context.tables;
  const [sessionId] = placeholders(context, 1);
  return sql<Record<string, unknown>>`
    select ${selectedAs("s", sessionColumns)}, ${selectedAs("u", userColumnsOf(context))}, p.enabled as totp_enabled
    from ${sql.table(t.sessions)} s
    left join ${context.usersFrom} u on u.id = s.user_id
    left join ${sql.table(t.totp)} p on p.user_id = s.user_id
    where s.id = ${sessionId}`;
}

/**
 * A rotation's write on MySQL: the conditional UPDATE of the session by its primary key, with the
 * user's condition as an EXISTS subquery (see {@link mayRotateWhere}). InnoDB's row lock makes a
 * concurrent rotation of the session wait, and its UPDATE then reads the row as that one left it,
 * holding another token: it changes nothing (RT-3). Compiled once per store; its values are those
 * of {@link rotationWriteValues}, in that order.
 */
function rotationWriteStatement(context: StoreContext) {
  const [nextHash, nextGeneration, idleEnd, now, userAgent, address, sessionId, hash, notExpired, tokenNotExpired] = placeholders(
    context,
    10,
  );
  return sql<Record<string, unknown>>`
    update ${sql.table(context.tables.sessions)} as target set refresh_hash = ${nextHash}, refresh_generation = ${nextGeneration},
      refresh_expires_at = least(${idleEnd}, target.expires_at), last_used_at = ${now},
      user_agent = ${userAgent}, address = ${address}
    where target.id = ${sessionId} and target.refresh_hash = ${hash} and ${mayRotateWhere(context, notExpired, tokenNotExpired)}`;
}

/** The values of {@link rotationWriteStatement}, in the order of its placeholders. */
function rotationWriteValues({ sessionId, hash, nextHash, nextGeneration, idleMs, now, use }: RefreshRotation): unknown[] {
  return [nextHash, nextGeneration, now + idleMs, now, use.userAgent, use.address, sessionId, hash, now, now];
}

/** The {@link RotationResult} of what a rotation read and whether its write took place. */
function rotationResult(read: RotationRead, rotated: boolean): RotationResult {
  const { session, user, totpEnabled } = read;
  if (!rotated || user === null) return { outcome: "refused" };
  return { outcome: "rotated", session, user, totpEnabled };
}

/**
 * A session, its user's token version and disabled flag, and the user's roles in the session's
 * active organization (see {@link SessionStore.findTokenState}, OR-7): one SELECT through the three
 * primary keys, prepared on PostgreSQL (every protected request may send it), compiled once per
 * store; its one value is the session's id.
 */
function tokenStateQuery(context: StoreContext) {
  const t = context.tables;
  const [sessionId] = placeholders(context, 1);
  return sql<Record<string, unknown>>`/* prepared */
    select s.user_id, s.revoked_at, s.expires_at, s.active_org_id, u.token_version, u.disabled, m.roles as org_roles
    from ${sql.table(t.sessions)} s left join ${sql.table(t.users)} u on u.id = s.user_id
    left join ${sql.table(t.organizationMembers)} m on m.org_id = s.active_org_id and m.user_id = s.user_id
    where s.id = ${sessionId}`;
}

function toTokenState(row: Record<string, unknown>): TokenState {
  return {
    session: {
      userId: userIdFromRow(row.user_id),
      revokedAt: numOrNull(row.revoked_at as string | number | null),
      expiresAt: num(row.expires_at as string | number),
      activeOrgId: (row.active_org_id as string | null) ?? null,
    },
    user:
      row.token_version === null
        ? null
        : { tokenVersion: num(row.token_version as string | number), disabled: flag(row.disabled as boolean | number) },
    orgRoles: row.org_roles === null || row.org_roles === undefined ? null : (JSON.parse(row.org_roles as string) as string[]),
  };
}

/**
 * The sessions table as a {@link SessionStore}. Each session holds the hash of the one refresh
 * token it accepts now, that token's generation and idle expiry (schema version 5), so a refresh
 * writes one row: {@link SessionStore.rotateRefresh} is one conditional UPDATE of the session by
 * its primary key, on `refresh_hash` equal to the presented token's, whose row lock lets one of
 * concurrent refreshes with one token through (RT-3). On PostgreSQL that UPDATE and the reads the
 * refresh answers with (session, user, TOTP state) are one prepared statement, one round trip. On
 * MySQL, which has no writing CTE and no `UPDATE … RETURNING`, they are two: the SELECT first, so
 * that the session it answers is the session as it was before the write (the UPDATE overwrites
 * `last_used_at`, the address and the token, which no later read could give back), then the
 * UPDATE, sent only when what was read may rotate (a refusal costs the SELECT alone); the UPDATE
 * checks the whole condition again, and its affected-row count decides.
 *
 * The refresh_tokens table of the releases before is only read now
 * ({@link SessionStore.findLegacyRefreshToken}: a token handed out before the upgrade, which
 * migration 5 made its session's current one, or one spent before it, which is reuse); the sweep
 * deletes its rows as they expire. Revoking is a conditional UPDATE on `revoked_at IS NULL` (one
 * statement for all of a user's sessions but the one kept, SE-2); a user's sessions are listed
 * through the index on `user_id`.
 */
export function sessionStore(context: StoreContext): SessionStore {
  const { db, postgres, tables: t, isUserId } = context;
  const findSession = (id: string) => findOne(context, t.sessions, "id", id, toSession);
  const readTokenState = compiledOnce(context, () => tokenStateQuery(context));
  const rotateInOneStatement = compiledOnce(context, () => rotationStatement(context));
  const readForRotation = compiledOnce(context, () => rotationReadQuery(context));
  const writeRotation = compiledOnce(context, () => rotationWriteStatement(context));
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
    async rotateRefresh(rotation) {
      if (postgres) {
        const joined = (await rotateInOneStatement(rotationValues(rotation))).rows[0];
        if (joined === undefined) return { outcome: "refused" };
        return rotationResult(toRotationRead(joined, context), flag(joined.rotated as boolean));
      }
      const joined = (await readForRotation([rotation.sessionId])).rows[0];
      if (joined === undefined) return { outcome: "refused" };
      const read = toRotationRead(joined, context);
      if (!mayRotate(read.session, read.user, rotation)) return { outcome: "refused" };
      const written = await writeRotation(rotationWriteValues(rotation));
      return rotationResult(read, num(written.numAffectedRows ?? 0) === 1);
    },
    findLegacyRefreshToken: (hash) => findOne(context, t.refreshTokens, "hash", hash, toLegacyRefreshToken),
  };
}
