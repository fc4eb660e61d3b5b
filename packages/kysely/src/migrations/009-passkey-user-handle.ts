import { type Migration, columnTypes } from "./column-types.js";

/**
 * WA-4, PL-15: the WebAuthn user handle a passkey was created with, when it is not its account's
 * own (a passkey made at sign-up, before the account had an id). At most 64 bytes, so at most 86
 * base64url characters. Passkeys of before have none: null, the account's handle. A column
 * only, with no constraint or index: no name the prefix lengthens.
 */
export const passkeyUserHandle: Migration = {
  version: 9,
  statements(dialect, t, collations) {
    const c = columnTypes(dialect, collations);
    return [`alter table ${t.passkeys} add column user_handle ${c.ascii(86)}`];
  },
};
