import type { ApiKeyRecord, ApiKeyState, ApiKeyStore } from "@portcullis/core";
import { sql } from "kysely";
import type { ApiKeyRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, compiledOnce, flag, num, numOrNull, placeholders } from "./context.js";

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    userId: userIdFromRow(row.user_id),
    hash: row.hash,
    start: row.start,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    tokenVersion: num(row.token_version),
    orgId: row.org_id ?? null,
    createdAt: num(row.created_at),
    expiresAt: num(row.expires_at),
    lastUsedAt: numOrNull(row.last_used_at),
    revokedAt: numOrNull(row.revoked_at),
  };
}

function toApiKeyRow(key: ApiKeyRecord) {
  return {
    id: key.id,
    user_id: key.userId,
    hash: key.hash,
    start: key.start,
    name: key.name,
    scopes: JSON.stringify(key.scopes),
    token_version: key.tokenVersion,
    org_id: key.orgId,
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
  };
}

/**
 * A key and its user's token version, disabled flag and roles (see {@link ApiKeyStore.findApiKeyByHash}):
 * one SELECT through the unique hash and the users' primary key (your table's users' accounts, with
 * the `users` option), prepared on PostgreSQL (every request with a key sends it), compiled once
 * per store; its one value is the hash.
 */
function keyStateQuery(context: StoreContext) {
  const t = context.tables;
  const [hash] = placeholders(context, 1);
  return sql<Record<string, unknown>>`/* prepared */
    select k.*, u.token_version as user_token_version, u.disabled as user_disabled, u.roles as user_roles
    from ${sql.table(t.apiKeys)} k left join ${sql.table(t.users)} u on u.id = k.user_id
    where k.hash = ${hash}`;
}

function toApiKeyState(row: Record<string, unknown>): ApiKeyState {
  const { user_token_version: tokenVersion, user_disabled: disabled, user_roles: roles, ...key } = row;
  return {
    key: toApiKey(key as unknown as ApiKeyRow),
    user:
      tokenVersion === null || tokenVersion === undefined
        ? null
        : {
            tokenVersion: num(tokenVersion as string | number),
            disabled: flag(disabled as boolean | number),
            roles: JSON.parse(roles as string) as string[],
          },
  };
}

/** Each key's latest use, and the keys by that time, earliest first: one UPDATE per distinct time. */
function keysByTime(uses: readonly { id: string; at: number }[]): [number, string[]][] {
  const latest = new Map<string, number>();
  for (const { id, at } of uses) latest.set(id, Math.max(at, latest.get(id) ?? at));
  const byTime = new Map<number, string[]>();
  for (const [id, at] of latest) byTime.set(at, [...(byTime.get(at) ?? []), id]);
  return [...byTime].sort(([a], [b]) => a - b);
}

/**
 * The api_keys table (schema version 7) as an {@link ApiKeyStore}. A presented key is found by its
 * unique hash, its user's standing read in the same statement; a user's keys are listed through
 * the index on `user_id`. Each write is one conditional statement: a rename and a revocation on
 * `revoked_at IS NULL` (a revocation's row lock lets one of concurrent ones through, AK-2), a use
 * on `last_used_at` being at least the interval older (AK-4), for every key used at one time in
 * one UPDATE. A revocation answers the row by `RETURNING` on PostgreSQL, by reading it after the
 * UPDATE on MySQL, which has no `UPDATE … RETURNING`.
 */
export function apiKeyStore(context: StoreContext): ApiKeyStore {
  const { db, postgres, tables: t, isUserId } = context;
  const readKeyState = compiledOnce(context, () => keyStateQuery(context));
  const findById = async (id: string) => {
    const row = await db.selectFrom(t.apiKeys).selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toApiKey(row as ApiKeyRow) : null;
  };
  /** The keys whose `column` is `value`, newest first (revoked and expired ones too). */
  const listWhere = async (column: "user_id" | "org_id", value: string) => {
    const rows = await db
      .selectFrom(t.apiKeys)
      .selectAll()
      .where(column, "=", value)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .execute();
    return rows.map((row) => toApiKey(row as ApiKeyRow));
  };
  return {
    async createApiKey(key) {
      await db.insertInto(t.apiKeys).values(toApiKeyRow(key)).execute();
    },
    async findApiKeyByHash(hash) {
      const row = (await readKeyState([hash])).rows[0];
      return row === undefined ? null : toApiKeyState(row);
    },
    async listApiKeys(userId) {
      return isUserId(userId) ? listWhere("user_id", userId) : [];
    },
    listOrganizationApiKeys: (orgId) => listWhere("org_id", orgId),
    async renameApiKey(userId, id, name) {
      if (!isUserId(userId)) return false;
      const result = await db
        .updateTable(t.apiKeys)
        .set({ name })
        .where("id", "=", id)
        .where("user_id", "=", userId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      if (num(result.numUpdatedRows) === 1) return true;
      // MySQL counts only changed rows: a live key that already has this name matched too.
      const key = await findById(id);
      return key !== null && key.userId === userId && key.revokedAt === null && key.name === name;
    },
    async revokeApiKey(userId, id, now) {
      if (userId !== null && !isUserId(userId)) return null;
      const revoke = db
        .updateTable(t.apiKeys)
        .set({ revoked_at: now })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .$if(userId !== null, (query) => query.where("user_id", "=", userId));
      if (postgres) {
        const row = await revoke.returningAll().executeTakeFirst();
        return row ? toApiKey(row as ApiKeyRow) : null;
      }
      const result = await revoke.executeTakeFirst();
      return num(result.numUpdatedRows) === 1 ? findById(id) : null;
    },
    async recordApiKeyUse(uses, minIntervalMs) {
      for (const [at, ids] of keysByTime(uses)) {
        await db
          .updateTable(t.apiKeys)
          .set({ last_used_at: at })
          .where("id", "in", ids)
          .where((where) => where.or([where("last_used_at", "is", null), where("last_used_at", "<=", at - minIntervalMs)]))
          .execute();
      }
    },
  };
}
