import { type Migration, columnTypes } from "./column-types.js";

/**
 * Issue 39 item 1: a refresh writes one row. Each session holds the hash of the one refresh
 * token it accepts now, its generation and its idle expiry; a refresh is one conditional UPDATE
 * of the session. Each session takes its newest unspent token of refresh_tokens as its current
 * one (generation 0), so a token handed out before the upgrade refreshes once more; a session
 * with none accepts none (its idle expiry is its start, already past). refresh_tokens stays,
 * read only (a token spent before the upgrade is still reuse: RT-2) until the sweep has
 * deleted its rows as they expire.
 */
export const refreshInSession: Migration = {
  version: 5,
  statements(dialect, t, collations) {
    const c = columnTypes(dialect, collations);
    const newest = `select r.hash from ${t.refreshTokens} r where r.session_id = ${t.sessions}.id and r.spent_at is null
        order by r.created_at desc, r.hash desc limit 1`;
    return [
      `alter table ${t.sessions} add column refresh_hash ${c.ascii(255)}, add column refresh_generation bigint not null default 0, add column refresh_expires_at ${c.time}`,
      `update ${t.sessions} set refresh_hash = (${newest})`,
      `update ${t.sessions} set refresh_expires_at = coalesce(
        (select r.expires_at from ${t.refreshTokens} r where r.hash = ${t.sessions}.refresh_hash), created_at)`,
      dialect === "mysql"
        ? `alter table ${t.sessions} modify refresh_expires_at ${c.time} not null`
        : `alter table ${t.sessions} alter column refresh_expires_at set not null`,
    ];
  },
};
