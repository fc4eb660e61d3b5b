import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/**
 * Raises a user's token version (TV-1): every access, refresh and temporary token issued
 * before is refused from now on (TV-2). Forgets this process's cached token checks for the
 * user so that here the change is seen at once.
 */
export async function raiseTokenVersion(auth: Auth, userId: string, reason: string): Promise<number> {
  const now = auth.now();
  const tokenVersion = await auth.storage.users.incrementTokenVersion(userId, now);
  if (tokenVersion === null) throw new AuthError(ErrorCode.NotFound, "No such user");
  for (const [sessionId, entry] of auth.tokenStateCache) {
    if (entry.userId === userId) auth.tokenStateCache.delete(sessionId);
  }
  auth.emit({ type: "token_version.raised", userId, tokenVersion, reason, at: now });
  return tokenVersion;
}
