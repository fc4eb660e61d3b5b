import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AdminProof } from "../flows/admin-user-changes.js";
import { requireRecentAuthentication } from "../flows/reauthenticate.js";
import { signedInUser } from "../users/signed-in-user.js";
import { revoked } from "../users/token-state.js";

/** The input of {@link revokeAllSessions}. */
export interface RevokeAllSessionsInput {
  /**
   * The administrator who asked, named in the `sessions.all_revoked` event; null or absent when
   * the service's own code or `portcullis sessions revoke-all` did.
   */
  by?: string | null;
}

/** What {@link revokeAllSessions} did: how many live sessions it ended. */
export interface RevokeAllSessionsResult {
  ended: number;
}

/**
 * Ends every session of every user at once (STUP-6, ASVS 7.4.5): the incident response when
 * sessions, refresh tokens or a signing key may have leaked. One storage operation
 * (`sessions.revokeAll`, bounded writes on SQL) revokes every live session, so every refresh
 * token is refused from then on, and every access token at its next check: at once on this
 * instance, on the others as soon as the `revocationChannel` tells them, or within
 * `tokenStateCacheSeconds` without one (TV-2). Sign-ins after it start new sessions. Emits
 * `sessions.all_revoked` with the count and who asked, even when no session was live.
 *
 * It ends sessions only: a leaked signing key must also leave `secrets` (see "Incident response"
 * in docs/flows/step-up.md), and leaked passwords must be reset.
 *
 * @example
 * ```ts
 * const { ended } = await revokeAllSessions(auth, {});
 * ```
 */
export async function revokeAllSessions(auth: Auth, input: RevokeAllSessionsInput = {}): Promise<RevokeAllSessionsResult> {
  const by = input.by ?? null;
  if (by !== null && (typeof by !== "string" || by === "")) {
    throw new AuthError(ErrorCode.MalformedParameter, "by must be a user id or null");
  }
  const at = auth.now();
  const ended = await auth.storage.sessions.revokeAll(at);
  revoked(auth, { kind: "all" });
  auth.emit({ type: "sessions.all_revoked", count: ended, by, at });
  return { ended };
}

/**
 * {@link revokeAllSessions} for an administrator (`DELETE /auth/admin/sessions`), after they
 * re-authenticate: a sign-in of theirs younger than `reauthentication.recentSignIn`, or their own
 * `password` or `totpCode`. Their own session ends with everyone's.
 *
 * @throws {AuthError} 40001 no proof, 40100 wrong password, 40101 an administrator gone or
 *   disabled since the token was issued, 40103 wrong code, 42900 throttled.
 */
export async function adminRevokeAllSessions(auth: Auth, input: AdminProof): Promise<RevokeAllSessionsResult> {
  const admin = await signedInUser(auth, input.adminUserId);
  await requireRecentAuthentication(auth, admin, input);
  return revokeAllSessions(auth, { by: admin.id });
}
