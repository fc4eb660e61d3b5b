import { type Migration, columnTypes, userIdType } from "./column-types.js";

/**
 * Issue 41: API keys, found by the SHA-256 of the whole key (unique) and listed by their user.
 * A key's user id takes the type of the users' ids (your table's, with the users option), a
 * foreign key like a passkey's; its organization is not one, so deleting an organization never
 * fails on the keys that name it.
 */
export const apiKeySchema: Migration = {
  version: 7,
  creates: { what: "API keys", tables: (t) => [t.apiKeys] },
  statements(dialect, t, collations, users) {
    const c = columnTypes(dialect, collations);
    const userId = userIdType(c, users);
    return [
      `create table ${t.apiKeys} (
        id ${c.ascii(255)} primary key,
        user_id ${userId} not null references ${t.users} (id),
        hash ${c.ascii(255)} not null,
        start ${c.text(64)} not null,
        name ${c.text(512)} not null,
        scopes ${c.long} not null,
        token_version bigint not null,
        org_id ${c.ascii(255)},
        created_at ${c.time} not null,
        expires_at ${c.time} not null,
        last_used_at ${c.time},
        revoked_at ${c.time},
        constraint ${t.apiKeys}_hash unique (hash)
      )${c.table}`,
      `create index ${t.apiKeys}_user on ${t.apiKeys} (user_id)`,
    ];
  },
};
