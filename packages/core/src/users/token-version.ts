import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { revoked } from "./token-state.js";

/**
 * Raises a user's token version (TV-1): every access, refresh and temporary token issued
 * before is refused from now on (TV-2). Forgets this process's cached token checks for the
 * user so that here the change is seen at once, and tells the `revocationChannel`.
 */
export async function raiseTokenVersion(auth: Auth, userId: string, reason: string): Promise<number> {
  const now = auth.now();
  const tokenVersion = await auth.storage.users.incrementTokenVersion(userId, now);
  if (tokenVersion === null) throw new AuthError(ErrorCode.NotFound, "No such user");
  revoked(auth, { kind: "token_version", userId });
  auth.emit({ type: "token_version.raised", userId, tokenVersion, reason, at: now });
  return tokenVersion;
}
