import { type Migration, columnTypes } from "./column-types.js";

/**
 * Issue 24: an address on each account, and the key of a verified one, unique (EV-1). Null
 * keys never collide, so unverified addresses repeat. Existing users: no address, not verified.
 */
export const userEmails: Migration = {
  version: 3,
  statements(dialect, t, collations, users) {
    const c = columnTypes(dialect, collations);
    const key = dialect === "mysql" ? c.text(512) : `${c.text(512)} collate "C"`;
    // With the users option's email column, the address is yours: Portcullis keeps whether it is verified.
    const email = users?.table.email ? "" : `add column email ${c.text(512)}, `;
    return [
      `alter table ${t.users} ${email}add column email_verified ${c.flag} not null default false, add column verified_email_key ${key}`,
      `alter table ${t.users} add constraint ${t.users}_verified_email_key unique (verified_email_key)`,
    ];
  },
};
