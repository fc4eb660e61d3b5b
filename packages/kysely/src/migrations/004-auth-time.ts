import { type Migration, columnTypes } from "./column-types.js";

/**
 * Issue 37: when each session's methods were proven (STUP-1). A session of before it was
 * proven, as far as anyone knows, when it began.
 */
export const authTime: Migration = {
  version: 4,
  statements(dialect, t, collations) {
    const c = columnTypes(dialect, collations);
    return [
      `alter table ${t.sessions} add column auth_time ${c.time}`,
      `update ${t.sessions} set auth_time = created_at`,
      dialect === "mysql"
        ? `alter table ${t.sessions} modify auth_time ${c.time} not null`
        : `alter table ${t.sessions} alter column auth_time set not null`,
    ];
  },
};
