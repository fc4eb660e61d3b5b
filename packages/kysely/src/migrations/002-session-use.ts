import { type Migration, columnTypes } from "./column-types.js";

/**
 * Issue 21: where and when each session was last used, and the users listed in key order.
 */
export const sessionUse: Migration = {
  version: 2,
  statements(dialect, t, collations) {
    const c = columnTypes(dialect, collations);
    if (dialect === "mysql") {
      return [
        `alter table ${t.sessions} add column last_used_at ${c.time}, add column user_agent ${c.text(512)}, add column address ${c.text(128)}`,
        `update ${t.sessions} set last_used_at = created_at`,
        `alter table ${t.sessions} modify last_used_at ${c.time} not null`,
      ];
    }
    return [
      `alter table ${t.sessions} add column last_used_at ${c.time}, add column user_agent ${c.text(512)}, add column address ${c.text(128)}`,
      `update ${t.sessions} set last_used_at = created_at`,
      `alter table ${t.sessions} alter column last_used_at set not null`,
      // Byte order, which is code point order: the unique index on the key then answers the
      // listing's range (key >= prefix and key < its upper bound) whatever the database's locale.
      `alter table ${t.users} alter column username_key type ${c.text(512)} collate "C"`,
    ];
  },
};
