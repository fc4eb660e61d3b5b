import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import type { UserRecord } from "../storage/types.js";

/**
 * The account an access token speaks for, in a flow for a signed-in user: a user who is gone
 * or disabled since the token was issued is 40101, as a revoked token would be.
 */
export async function signedInUser(auth: Auth, userId: unknown): Promise<UserRecord> {
  const user = await auth.storage.users.findById(requiredString(userId, "userId"));
  if (!user || user.disabled) throw new AuthError(ErrorCode.InvalidToken);
  return user;
}
