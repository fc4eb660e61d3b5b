/**
 * How many roles an account may hold (AD-2). Every access token carries its user's roles, and
 * the token travels in a request header: Node's HTTP server refuses a request whose headers pass
 * 16 KiB (431), and so does every adapter on it. 50 names of 64 ASCII characters give a token
 * of about 4.9 KB.
 */
export const maxRoles = 50;

/** The longest role name, in UTF-16 code units (`string.length`). */
export const maxRoleLength = 64;

/**
 * The most bytes an account's roles may take together as the access token carries them (their
 * JSON, in UTF-8): names of non-ASCII or control characters weigh more than their length. With
 * the rest of the token's claims, a token stays under about 6 KiB (AD-2).
 */
export const maxRolesBytes = 4096;

/**
 * Why `roles` cannot be an account's roles (a list of at most {@link maxRoles} distinct names of
 * 1 to {@link maxRoleLength} characters, {@link maxRolesBytes} bytes together), or null when it
 * can. The message starts with what the list must be, for `what` to be put before it.
 */
export function rolesProblem(roles: unknown): string | null {
  if (
    !Array.isArray(roles) ||
    !roles.every((role) => typeof role === "string" && role.length > 0 && role.length <= maxRoleLength)
  ) {
    return `must be a list of names of 1 to ${maxRoleLength} characters`;
  }
  const distinct = [...new Set(roles)];
  if (distinct.length > maxRoles) return `must be at most ${maxRoles} names; got ${distinct.length}`;
  const bytes = Buffer.byteLength(JSON.stringify(distinct));
  if (bytes > maxRolesBytes) {
    return `must take at most ${maxRolesBytes} bytes together (JSON, UTF-8, as the access token carries them); these take ${bytes}`;
  }
  return null;
}
