import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { type PublicUser, publicUser } from "../tokens/issue-tokens.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { type User, checkRoles, toUser } from "./create-user.js";
import { requiredString } from "./input.js";

async function existingUser(auth: Auth, userId: unknown) {
  const user = await auth.storage.users.findById(requiredString(userId, "userId"));
  if (!user) throw new AuthError(ErrorCode.NotFound, "No such user");
  return user;
}

/** The contract's public view of a user (`GET /auth/me`). @throws {AuthError} 40400 unknown user. */
export async function getPublicUser(auth: Auth, input: { userId: string }): Promise<PublicUser> {
  return publicUser(auth, await existingUser(auth, input.userId));
}

/**
 * Replaces a user's roles and raises the token version, so tokens carrying the old roles
 * stop working (TV-1).
 */
export async function setUserRoles(auth: Auth, input: { userId: string; roles: string[] }): Promise<User> {
  const user = await existingUser(auth, input.userId);
  const updated = await auth.storage.users.update(user.id, { roles: checkRoles(input.roles) }, auth.now());
  await raiseTokenVersion(auth, user.id, "roles_changed");
  return toUser({ ...(updated ?? user), tokenVersion: user.tokenVersion + 1 });
}

/**
 * Disables or re-enables an account. Disabling raises the token version and revokes every
 * session (RT-4); a disabled user's correct password is answered 40300, a wrong one like any
 * other failure (EN-1).
 */
export async function setUserDisabled(auth: Auth, input: { userId: string; disabled: boolean }): Promise<User> {
  const user = await existingUser(auth, input.userId);
  const disabled = input.disabled === true;
  const updated = await auth.storage.users.update(user.id, { disabled }, auth.now());
  if (!disabled) return toUser(updated ?? user);
  await raiseTokenVersion(auth, user.id, "user_disabled");
  await revokeAllSessions(auth, user.id, "user_disabled");
  return toUser({ ...(updated ?? user), tokenVersion: user.tokenVersion + 1 });
}

/**
 * Signs a user out everywhere: raises the token version and revokes every session, so every
 * access, refresh and temporary token issued before is refused (TV-1, TV-2). Returns how many
 * live sessions it ended.
 */
export async function signOutEverywhere(auth: Auth, input: { userId: string }): Promise<number> {
  const user = await existingUser(auth, input.userId);
  await raiseTokenVersion(auth, user.id, "sign_out_everywhere");
  return await revokeAllSessions(auth, user.id, "sign_out_everywhere");
}

async function revokeAllSessions(auth: Auth, userId: string, reason: "sign_out_everywhere" | "user_disabled"): Promise<number> {
  const now = auth.now();
  const count = await auth.storage.sessions.revokeUserSessions(userId, now);
  auth.emit({ type: "sessions.revoked_all", userId, count, reason, at: now });
  return count;
}
