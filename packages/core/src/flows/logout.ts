import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { revokeSession } from "../users/sessions.js";
import { requiredString } from "./input.js";

/** The input of {@link logout}. */
export interface LogoutInput {
  refreshToken: string;
}

/**
 * Ends the session a refresh token belongs to (`POST /auth/logout`; RT-4): the token is spent
 * and the session revoked, so neither it nor any token minted from the session refreshes
 * again, and the session's access tokens are refused at their next check.
 *
 * @throws {AuthError} 40101 when the refresh token is unknown.
 */
export async function logout(auth: Auth, input: LogoutInput): Promise<void> {
  const presented = requiredString(input.refreshToken, "refreshToken");
  const result = await auth.storage.sessions.spendRefreshToken(sha256(presented), auth.now());
  if (result.outcome === "unknown") throw new AuthError(ErrorCode.InvalidToken);
  await revokeSession(auth, result.token.userId, result.token.sessionId, "logout");
}
