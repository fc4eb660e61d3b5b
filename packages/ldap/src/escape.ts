/** Bytes that RFC 4515 lets stand for themselves in a filter value: printable ASCII but `*`, `(`, `)` and `\`. */
function standsForItself(byte: number): boolean {
  return byte >= 0x20 && byte <= 0x7e && byte !== 0x2a && byte !== 0x28 && byte !== 0x29 && byte !== 0x5c;
}

/**
 * Escapes a value for an LDAP search filter (RFC 4515 §3): `*`, `(`, `)`, `\`, NUL, every other
 * control byte and every byte of a non-ASCII character (UTF-8) become `\xx`, so a value can only
 * ever match itself (LDAP-1). Bytes (a binary attribute such as `objectGUID`) are escaped the same way.
 *
 * @example
 * escapeFilterValue("*)(uid=*") // "\\2a\\29\\28uid=\\2a"
 * @see https://www.rfc-editor.org/rfc/rfc4515#section-3
 */
export function escapeFilterValue(value: string | Uint8Array): string {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  let escaped = "";
  for (const byte of bytes) {
    escaped += standsForItself(byte) ? String.fromCharCode(byte) : `\\${byte.toString(16).padStart(2, "0")}`;
  }
  return escaped;
}

/**
 * Fills each `{{name}}` of a filter template with the escaped value of that name, in one pass, so
 * a value that itself reads `{{…}}` stays text (LDAP-1). The template was checked when the policy
 * was saved; the values are escaped here, never trusted. A placeholder without a value is left.
 *
 * @example
 * fillFilter("(uid={{username}})", { username: "admin*" }) // "(uid=admin\\2a)"
 */
export function fillFilter(template: string, values: Record<string, string | Uint8Array>): string {
  return template.replace(/\{\{([a-z]+)\}\}/g, (whole, name: string) => {
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    return value === undefined ? whole : escapeFilterValue(value);
  });
}
