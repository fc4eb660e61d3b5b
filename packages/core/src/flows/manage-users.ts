import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserChange } from "../events/types.js";
import { refuseImpersonated } from "../impersonation/impersonate.js";
import type { UserRecord } from "../storage/types.js";
import { type PublicUser, publicUser } from "../tokens/issue-tokens.js";
import type { FieldValue } from "../user-fields/field.js";
import { changedFields } from "../user-fields/values.js";
import { revoked } from "../users/token-state.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { type User, checkRoles, toUser } from "./create-user.js";
import { requiredString } from "./input.js";

/** The stored user of an id from the caller: 40001/40002 for a missing or non-string id, 40400 for an unknown one. */
export async function existingUser(auth: Auth, userId: unknown): Promise<UserRecord> {
  const user = await auth.storage.users.findById(requiredString(userId, "userId"));
  if (!user) throw new AuthError(ErrorCode.NotFound, "No such user");
  return user;
}

/** The contract's public view of a user (`GET /auth/me`). @throws {AuthError} 40400 unknown user. */
export async function getPublicUser(auth: Auth, input: { userId: string }): Promise<PublicUser> {
  return publicUser(auth, await existingUser(auth, input.userId));
}

/** What {@link changeUser} may change; a field left out stays. */
export interface UserChanges {
  roles?: string[];
  disabled?: boolean;
  /** Additional fields already read with `readFieldInput`: only those named change. */
  fields?: Record<string, FieldValue>;
}

const sameRoles = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((role) => b.includes(role));

/**
 * Applies checked changes to a user: only the fields that differ are written (an additional
 * field's change raises nothing: tokens carry its new value from their next refresh). New roles raise the
 * token version (TV-1) and so does disabling, which also revokes every session (RT-4); one raise
 * for both. Emits `user.updated` with what changed and `by` (an administrator's id, or null for the
 * service's own code); nothing differing, nothing is written or emitted. Returns the stored user.
 */
export async function changeUser(auth: Auth, user: UserRecord, changes: UserChanges, by: string | null): Promise<UserRecord> {
  const patch: Partial<UserRecord> = {};
  const changed: UserChange[] = [];
  if (changes.roles !== undefined && !sameRoles(changes.roles, user.roles)) {
    patch.roles = changes.roles;
    changed.push("roles");
  }
  if (changes.disabled !== undefined && changes.disabled !== user.disabled) {
    patch.disabled = changes.disabled;
    changed.push("disabled");
  }
  const fields = changedFields(auth, user, changes.fields);
  if (fields !== null) {
    patch.fields = fields;
    changed.push("fields");
  }
  if (changed.length === 0) return user;
  const now = auth.now();
  const updated = { ...((await auth.storage.users.update(user.id, patch, now)) ?? user) };
  if (patch.disabled === true) {
    updated.tokenVersion = await raiseTokenVersion(auth, user.id, "user_disabled");
    await revokeAllSessions(auth, user.id, { reason: "user_disabled" });
  } else if (patch.roles !== undefined) {
    updated.tokenVersion = await raiseTokenVersion(auth, user.id, "roles_changed");
  }
  auth.emit({ type: "user.updated", userId: user.id, changes: changed, by, at: now });
  return updated;
}

/**
 * Replaces a user's roles and raises the token version, so tokens carrying the old roles
 * stop working (TV-1). The same roles in another order change nothing.
 */
export async function setUserRoles(auth: Auth, input: { userId: string; roles: string[] }): Promise<User> {
  const user = await existingUser(auth, input.userId);
  return toUser(auth, await changeUser(auth, user, { roles: checkRoles(input.roles) }, null));
}

/**
 * Disables or re-enables an account. Disabling raises the token version and revokes every
 * session (RT-4); a disabled user's correct password is answered 40300, a wrong one like any
 * other failure (EN-1).
 */
export async function setUserDisabled(auth: Auth, input: { userId: string; disabled: boolean }): Promise<User> {
  const user = await existingUser(auth, input.userId);
  return toUser(auth, await changeUser(auth, user, { disabled: input.disabled === true }, null));
}

/**
 * Signs a user out everywhere: raises the token version and revokes every session, so every
 * access, refresh and temporary token issued before is refused (TV-1, TV-2). Returns how many
 * live sessions it ended. `sessionId`, the session of the request when the user asks it, must not
 * be an impersonated one (40300, IMP-2): it would end the user's own sessions.
 */
export async function signOutEverywhere(auth: Auth, input: { userId: string; sessionId?: string }): Promise<number> {
  if (input.sessionId !== undefined) {
    refuseImpersonated(auth, await auth.storage.sessions.findSession(input.sessionId), "sign_out_everywhere");
  }
  const user = await existingUser(auth, input.userId);
  return endAllSessions(auth, user.id, { reason: "sign_out_everywhere" });
}

/** Why every session of a user ends, and the administrator who ended them. */
type EndAll = { reason: "sign_out_everywhere" | "user_disabled" } | { reason: "ended_by_admin"; by: string };

/** Raises a user's token version and revokes every session; returns how many were live. */
export async function endAllSessions(auth: Auth, userId: string, why: EndAll): Promise<number> {
  await raiseTokenVersion(auth, userId, why.reason);
  return revokeAllSessions(auth, userId, why);
}

async function revokeAllSessions(auth: Auth, userId: string, why: EndAll): Promise<number> {
  const now = auth.now();
  const count = await auth.storage.sessions.revokeUserSessions(userId, now);
  if (count > 0) revoked(auth, { kind: "user_sessions", userId, keptSessionId: null });
  auth.emit({ type: "sessions.revoked_all", userId, count, ...why, at: now });
  return count;
}
