import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { readRefreshToken, relationToCurrent } from "../tokens/refresh-token.js";
import { revokeSession } from "../users/sessions.js";
import { requiredString } from "./input.js";

/** The input of {@link logout}. */
export interface LogoutInput {
  refreshToken: string;
}

/**
 * Ends the session a refresh token belongs to (`POST /auth/logout`; RT-4): the session is revoked,
 * so no token minted from it refreshes again, and its access tokens are refused at their next
 * check. A token the session replaced already ends it too; one it never held (made up from its id)
 * ends nothing.
 *
 * @throws {AuthError} 40101 when the refresh token is unknown.
 */
export async function logout(auth: Auth, input: LogoutInput): Promise<void> {
  const presented = requiredString(input.refreshToken, "refreshToken");
  const token = await readRefreshToken(auth, presented);
  const session = token === null ? null : await auth.storage.sessions.findSession(token.sessionId);
  if (token === null || session === null) throw new AuthError(ErrorCode.InvalidToken);
  const held = session.refreshHash === token.hash || token.spentBeforeUpgrade;
  if (!held && relationToCurrent(auth, token, session).relation === "unrelated") throw new AuthError(ErrorCode.InvalidToken);
  await revokeSession(auth, session.userId, session.id, "logout");
}
