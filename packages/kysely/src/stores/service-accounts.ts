import type { PublicJwk, ServiceAccountCredentialRecord, ServiceAccountRecord, ServiceAccountStore } from "@portcullis/core";
import { type Kysely, sql } from "kysely";
import type { AnyDatabase, ServiceAccountCredentialRow, ServiceAccountRow } from "../schema.js";
import { userIdFromRow } from "../users-table.js";
import { type StoreContext, flag, num, numOrNull, rowOf, selectedAs } from "./context.js";

function toServiceAccount(row: ServiceAccountRow): ServiceAccountRecord {
  return {
    id: row.id,
    name: row.name,
    roles: JSON.parse(row.roles) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    disabled: flag(row.disabled),
    tokenVersion: num(row.token_version),
    createdAt: num(row.created_at),
    createdBy: row.created_by === null ? null : userIdFromRow(row.created_by),
  };
}

function toServiceAccountRow(account: ServiceAccountRecord): ServiceAccountRow {
  return {
    id: account.id,
    name: account.name,
    roles: JSON.stringify(account.roles),
    scopes: JSON.stringify(account.scopes),
    disabled: account.disabled,
    token_version: account.tokenVersion,
    created_at: account.createdAt,
    created_by: account.createdBy,
  };
}

function toCredential(row: ServiceAccountCredentialRow): ServiceAccountCredentialRecord {
  const common = {
    id: row.id,
    serviceAccountId: row.service_account_id,
    createdAt: num(row.created_at),
    expiresAt: numOrNull(row.expires_at),
    lastUsedAt: numOrNull(row.last_used_at),
  };
  return row.kind === "jwk"
    ? { ...common, kind: "jwk", publicJwk: JSON.parse(row.public_jwk as string) as PublicJwk }
    : { ...common, kind: "secret", secretHash: row.secret_hash as string, start: row.start as string };
}

function toCredentialRow(credential: ServiceAccountCredentialRecord): ServiceAccountCredentialRow {
  return {
    id: credential.id,
    service_account_id: credential.serviceAccountId,
    kind: credential.kind,
    secret_hash: credential.kind === "secret" ? credential.secretHash : null,
    start: credential.kind === "secret" ? credential.start : null,
    public_jwk: credential.kind === "jwk" ? JSON.stringify(credential.publicJwk) : null,
    created_at: credential.createdAt,
    expires_at: credential.expiresAt,
    last_used_at: credential.lastUsedAt,
  };
}

const accountColumns = [
  "id",
  "name",
  "roles",
  "scopes",
  "disabled",
  "token_version",
  "created_at",
  "created_by",
] as const satisfies readonly (keyof ServiceAccountRow)[];
const credentialColumns = [
  "id",
  "service_account_id",
  "kind",
  "secret_hash",
  "start",
  "public_jwk",
  "created_at",
  "expires_at",
  "last_used_at",
] as const satisfies readonly (keyof ServiceAccountCredentialRow)[];

/**
 * The service_accounts and service_account_credentials tables (schema version 8) as a
 * {@link ServiceAccountStore}. The token endpoint's read of a client is one SELECT: the account
 * joined to its credentials through the index on `service_account_id`. Adding a credential is a
 * transaction that locks the account's row first (`SELECT … FOR UPDATE`), then counts the live
 * credentials of the kind and inserts: concurrent additions to one account run one after the
 * other, each counting what the one before left, so the limit holds (PGlite, one connection,
 * runs them one at a time anyway). A credential goes with its account by the foreign key's
 * `on delete cascade`. A use is one conditional UPDATE on `last_used_at` being at least the
 * interval older.
 */
export function serviceAccountStore(context: StoreContext): ServiceAccountStore {
  const { db, postgres, tables: t } = context;
  const findServiceAccount = async (id: string, from: Kysely<AnyDatabase> = db) => {
    const row = await from.selectFrom(t.serviceAccounts).selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toServiceAccount(row as ServiceAccountRow) : null;
  };
  return {
    async createServiceAccount(account) {
      await db.insertInto(t.serviceAccounts).values(toServiceAccountRow(account)).execute();
    },
    findServiceAccount: (id) => findServiceAccount(id),
    async findServiceAccountClient(id) {
      const { rows } = await sql<Record<string, unknown>>`
        select ${selectedAs("a", accountColumns)}, ${selectedAs("c", credentialColumns)}
        from ${sql.table(t.serviceAccounts)} a
        left join ${sql.table(t.serviceAccountCredentials)} c on c.service_account_id = a.id
        where a.id = ${id}
        order by c.created_at, c.id`.execute(db);
      const [first] = rows;
      if (first === undefined) return null;
      return {
        account: toServiceAccount(rowOf<ServiceAccountRow>(first, "a", accountColumns) as ServiceAccountRow),
        credentials: rows.flatMap((row) => {
          const credential = rowOf<ServiceAccountCredentialRow>(row, "c", credentialColumns);
          return credential === null ? [] : [toCredential(credential)];
        }),
      };
    },
    async listServiceAccounts() {
      const rows = await db.selectFrom(t.serviceAccounts).selectAll().orderBy("created_at").orderBy("id").execute();
      return rows.map((row) => toServiceAccount(row as ServiceAccountRow));
    },
    async updateServiceAccount(id, { name, roles, scopes, disabled, raiseTokenVersion }) {
      const set: Record<string, unknown> = {};
      if (name !== undefined) set.name = name;
      if (roles !== undefined) set.roles = JSON.stringify(roles);
      if (scopes !== undefined) set.scopes = JSON.stringify(scopes);
      if (disabled !== undefined) set.disabled = disabled;
      if (raiseTokenVersion === true) set.token_version = sql`token_version + 1`;
      if (Object.keys(set).length === 0) return findServiceAccount(id);
      const update = db.updateTable(t.serviceAccounts).set(set).where("id", "=", id);
      if (postgres) {
        const row = await update.returningAll().executeTakeFirst();
        return row ? toServiceAccount(row as ServiceAccountRow) : null;
      }
      // MySQL has no UPDATE … RETURNING, and counts only changed rows: the read after says whether it is there.
      await update.execute();
      return findServiceAccount(id);
    },
    async deleteServiceAccount(id) {
      const result = await db.deleteFrom(t.serviceAccounts).where("id", "=", id).executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    addServiceAccountCredential(credential, maxOfKind, now) {
      return db.transaction().execute(async (trx) => {
        const account = await trx
          .selectFrom(t.serviceAccounts)
          .select("id")
          .where("id", "=", credential.serviceAccountId)
          .forUpdate()
          .executeTakeFirst();
        if (account === undefined) return "unknown_account";
        const held = await trx
          .selectFrom(t.serviceAccountCredentials)
          .select(sql<number | string | bigint>`count(*)`.as("live"))
          .where("service_account_id", "=", credential.serviceAccountId)
          .where("kind", "=", credential.kind)
          .where((where) => where.or([where("expires_at", "is", null), where("expires_at", ">", now)]))
          // MySQL's repeatable read: a locking read sees the rows as committed now, not a snapshot.
          .$if(!postgres, (query) => query.forUpdate())
          .executeTakeFirst();
        if (num(held?.live ?? 0) >= maxOfKind) return "limit";
        await trx.insertInto(t.serviceAccountCredentials).values(toCredentialRow(credential)).execute();
        return "added";
      });
    },
    async removeServiceAccountCredential(serviceAccountId, credentialId) {
      const result = await db
        .deleteFrom(t.serviceAccountCredentials)
        .where("id", "=", credentialId)
        .where("service_account_id", "=", serviceAccountId)
        .executeTakeFirst();
      return num(result.numDeletedRows) === 1;
    },
    async recordServiceAccountCredentialUse(credentialId, at, minIntervalMs) {
      await db
        .updateTable(t.serviceAccountCredentials)
        .set({ last_used_at: at })
        .where("id", "=", credentialId)
        .where((where) => where.or([where("last_used_at", "is", null), where("last_used_at", "<=", at - minIntervalMs)]))
        .execute();
    },
  };
}
