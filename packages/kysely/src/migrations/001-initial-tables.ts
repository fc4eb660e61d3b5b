import { quoted, quotedTable } from "../users-table.js";
import { type Migration, columnTypes, userIdType } from "./column-types.js";

/**
 * Release 0.1's tables: users, their TOTP factors and recovery codes, sessions and their refresh tokens,
 * challenges, throttling counters, passkeys, linked identities and settings. With the users option
 * the users table is `accounts`, keyed by your id and a foreign key to your row.
 */
export const initialTables: Migration = {
  version: 1,
  statements(dialect, t, collations, users) {
    const c = columnTypes(dialect, collations);
    const table = c.table;
    // A user's id: Portcullis's own text, or your table's id's type, pointing at your row.
    const userId = userIdType(c, users);
    const yours =
      users === null
        ? ""
        : `,
        constraint ${t.users}_yours foreign key (id) references ${quotedTable(dialect, users.table)} (${quoted(dialect, users.table.idColumn)})`;
    return [
      `create table ${t.users} (
        id ${userId} primary key,${
          users?.table.username
            ? ""
            : `
        username ${c.text(512)} not null,`
        }
        username_key ${c.text(512)} not null,
        password_hash ${c.ascii(1024)},
        roles ${c.long} not null,
        disabled ${c.flag} not null,
        token_version bigint not null,
        source ${c.ascii(16)} not null,
        created_at ${c.time} not null,
        updated_at ${c.time} not null,
        constraint ${t.users}_username_key unique (username_key)${yours}
      )${table}`,
      `create index ${t.users}_source on ${t.users} (source)`,
      `create table ${t.totp} (
        user_id ${userId} primary key references ${t.users} (id),
        secret_key_id ${c.ascii(255)} not null,
        secret_sealed ${c.ascii(1024)} not null,
        enabled ${c.flag} not null,
        last_used_step bigint not null,
        created_at ${c.time} not null
      )${table}`,
      `create table ${t.recoveryCodes} (
        user_id ${userId} not null references ${t.users} (id),
        hash ${c.ascii(255)} not null,
        created_at ${c.time} not null,
        primary key (user_id, hash)
      )${table}`,
      `create table ${t.sessions} (
        id ${c.ascii(255)} primary key,
        user_id ${userId} not null references ${t.users} (id),
        token_version bigint not null,
        amr ${c.long} not null,
        created_at ${c.time} not null,
        expires_at ${c.time} not null,
        revoked_at ${c.time}
      )${table}`,
      `create index ${t.sessions}_user on ${t.sessions} (user_id)`,
      `create index ${t.sessions}_expires on ${t.sessions} (expires_at)`,
      `create table ${t.refreshTokens} (
        hash ${c.ascii(255)} primary key,
        session_id ${c.ascii(255)} not null,
        user_id ${userId} not null,
        created_at ${c.time} not null,
        expires_at ${c.time} not null,
        spent_at ${c.time}
      )${table}`,
      `create index ${t.refreshTokens}_session on ${t.refreshTokens} (session_id)`,
      `create index ${t.refreshTokens}_expires on ${t.refreshTokens} (expires_at)`,
      `create table ${t.challenges} (
        id ${c.ascii(255)} primary key,
        kind ${c.ascii(32)} not null,
        user_id ${userId},
        data ${c.long} not null,
        attempts integer not null,
        created_at ${c.time} not null,
        expires_at ${c.time} not null
      )${table}`,
      `create index ${t.challenges}_expires on ${t.challenges} (expires_at)`,
      `create table ${t.counters} (
        counter_key ${c.text(512)} primary key,
        count integer not null,
        reset_at ${c.time} not null
      )${table}`,
      `create index ${t.counters}_reset on ${t.counters} (reset_at)`,
      `create table ${t.passkeys} (
        id ${c.ascii(1400)} primary key,
        user_id ${userId} not null references ${t.users} (id),
        public_key ${c.long} not null,
        counter bigint not null,
        transports ${c.long} not null,
        label ${c.text(512)} not null,
        backup_eligible ${c.flag} not null,
        backup_state ${c.flag} not null,
        created_at ${c.time} not null,
        last_used_at ${c.time}
      )${table}`,
      `create index ${t.passkeys}_user on ${t.passkeys} (user_id)`,
      `create table ${t.identities} (
        provider ${c.text(64)} not null,
        subject ${c.text(512)} not null,
        user_id ${userId} not null,
        email ${c.text(512)},
        email_verified ${c.flag} not null,
        created_at ${c.time} not null,
        last_used_at ${c.time},
        primary key (provider, subject)
      )${table}`,
      `create index ${t.identities}_user on ${t.identities} (user_id)`,
      `create index ${t.identities}_email on ${t.identities} (email)`,
      `create table ${t.settings} (
        setting_key ${c.text(255)} primary key,
        value ${c.long} not null,
        updated_at ${c.time} not null
      )${table}`,
    ];
  },
};
