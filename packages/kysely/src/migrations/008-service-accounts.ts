import { type Migration, columnTypes, userIdType } from "./column-types.js";

/**
 * Issue 41: service accounts and their client credentials, and impersonation. A credential is a
 * secret, found through its account and unique by its SHA-256, or a public JWK (long text); it
 * points at its account and goes with it (`on delete cascade`). The user columns (who made an
 * account, who impersonates in a session) take the type of the users' ids (your table's, with the
 * users option) and are not foreign keys: deleting an administrator never fails on the accounts
 * they made or the sessions they ended as someone else. Sessions of before have no impersonator.
 * An index on the API keys' organization serves the listing of an organization's keys (AK-6).
 * Constraint and index names are short and named, never generated: MySQL allows 64 characters,
 * and the longest prefix (31) with this table's name leaves 6.
 */
export const serviceAccountSchema: Migration = {
  version: 8,
  creates: { what: "service accounts", tables: (t) => [t.serviceAccounts, t.serviceAccountCredentials] },
  statements(dialect, t, collations, users) {
    const c = columnTypes(dialect, collations);
    const userId = userIdType(c, users);
    const accountId = c.ascii(255);
    return [
      `create table ${t.serviceAccounts} (
        id ${accountId} primary key,
        name ${c.text(512)} not null,
        roles ${c.long} not null,
        scopes ${c.long} not null,
        disabled ${c.flag} not null,
        token_version bigint not null,
        created_at ${c.time} not null,
        created_by ${userId}
      )${c.table}`,
      `create table ${t.serviceAccountCredentials} (
        id ${c.ascii(255)} primary key,
        service_account_id ${accountId} not null,
        kind ${c.ascii(16)} not null,
        secret_hash ${c.ascii(255)},
        start ${c.text(64)},
        public_jwk ${c.long},
        created_at ${c.time} not null,
        expires_at ${c.time},
        last_used_at ${c.time},
        constraint ${t.serviceAccountCredentials}_fk foreign key (service_account_id) references ${t.serviceAccounts} (id) on delete cascade,
        constraint ${t.serviceAccountCredentials}_hash unique (secret_hash)
      )${c.table}`,
      `create index ${t.serviceAccountCredentials}_sa on ${t.serviceAccountCredentials} (service_account_id)`,
      `alter table ${t.sessions} add column impersonator_id ${userId}`,
      `create index ${t.apiKeys}_org on ${t.apiKeys} (org_id)`,
    ];
  },
};
