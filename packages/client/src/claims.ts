/**
 * The payload of an access token (a JWT), read without verifying it: the server verified it, and
 * the client only reads what the server put there (`sid`, `org`, `org_roles`). Null when the
 * token is not a JWT or its payload is not a JSON object.
 *
 * @example
 * ```ts
 * const sid = accessTokenClaims(tokens.accessToken)?.sid;
 * ```
 */
export function accessTokenClaims(accessToken: string): Record<string, unknown> | null {
  try {
    const payload = (accessToken.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(payload), (character) => character.charCodeAt(0));
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return claims !== null && typeof claims === "object" && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
