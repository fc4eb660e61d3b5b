import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import { type PublicUser, publicUser } from "../tokens/issue-tokens.js";
import type { FieldValue } from "../user-fields/field.js";
import { checkRoles, createUserRecord } from "./create-user.js";
import { requiredString } from "./input.js";
import { existingUser } from "./manage-users.js";

/**
 * A user as the admin routes show it: the contract's user object (with the `publicUser` hook's
 * fields) and whether the account is disabled. Never a password hash, TOTP secret, recovery code
 * or token version (AD-1).
 */
export type AdminUser = PublicUser & { disabled: boolean };

/** One user in detail (`GET /auth/admin/users/:id`): {@link AdminUser} and what signs the user in. */
export type AdminUserDetails = AdminUser & {
  /** Live sessions: not revoked, not expired, at the user's token version; counted up to {@link sessionCountCap}. */
  sessions: number;
  /** Registered passkeys. */
  passkeys: number;
  /** The providers linked to the account, by name, sorted. */
  identities: string[];
};

/** The most live sessions {@link getUserDetails} counts. */
export const sessionCountCap = 1000;

/** The admin view of a stored user: the contract's fields and `disabled` win over the hook's. */
export async function adminUserView(auth: Auth, user: UserRecord): Promise<AdminUser> {
  return { ...(await publicUser(auth, user)), disabled: user.disabled };
}

/**
 * One user with the counts an administrator needs (`GET /auth/admin/users/:id`): live sessions,
 * passkeys and the providers linked.
 *
 * @throws {AuthError} 40001/40002 a missing or non-string id, 40400 an unknown one.
 */
export async function getUserDetails(auth: Auth, input: { userId: string }): Promise<AdminUserDetails> {
  const user = await existingUser(auth, input.userId);
  const [view, sessions, passkeys, identities] = await Promise.all([
    adminUserView(auth, user),
    auth.storage.sessions.listByUser(user.id, auth.now(), sessionCountCap),
    auth.storage.passkeys.listByUser(user.id),
    auth.storage.identities.listByUser(user.id),
  ]);
  return {
    ...view,
    sessions: sessions.filter((session) => session.tokenVersion === user.tokenVersion).length,
    passkeys: passkeys.length,
    identities: [...new Set(identities.map((identity) => identity.provider))].sort(),
  };
}

/** The input of {@link adminCreateUser}. */
export interface AdminCreateUserInput {
  /** The administrator, from the access token. */
  adminUserId: string;
  username: string;
  /** The new account's first password, checked against the policy (PW-3); without one it cannot sign in with a password. */
  password?: string;
  /** The account's email address (`normalizeEmail`). */
  email?: string;
  /** True when the administrator vouches for `email`: stored verified, which no other account may be (EV-1). Default false. */
  emailVerified?: boolean;
  /** Role names; never the admin role, which `updateUser` grants after re-authentication. */
  roles?: string[];
  /** Additional fields: any declared one (see `CreateUserInput.fields`). */
  fields?: Record<string, FieldValue>;
}

/**
 * Makes a local account for an administrator (`POST /auth/admin/users`): no session is started.
 * The admin role is not granted here: `updateUser` grants it, after the administrator
 * re-authenticates, so that a stolen access token cannot mint an administrator of its own.
 * Emits `user.created` with `by: "admin"` and the administrator's id.
 *
 * @throws {AuthError} 40001/40002 bad fields (an `email` that is not an address, an `emailVerified` that is not a
 *   boolean), 40900 the username is taken or another account holds `email` verified (EV-1), 42200 the username,
 *   password or roles are refused (with the reason), 50300 the hashing queue is full or
 *   `password.isBreached` failed.
 */
export async function adminCreateUser(auth: Auth, input: AdminCreateUserInput): Promise<AdminUser> {
  const adminUserId = requiredString(input.adminUserId, "adminUserId");
  const roles = checkRoles(input.roles ?? []);
  if (roles.includes(auth.config.adminRole)) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      "The admin role is granted with PATCH /auth/admin/users/:id, which asks you to confirm it is you",
    );
  }
  const user = await createUserRecord(
    auth,
    {
      username: input.username,
      password: input.password,
      roles,
      email: input.email,
      emailVerified: input.emailVerified,
      fields: input.fields,
    },
    { by: "admin", adminUserId },
  );
  return adminUserView(auth, user);
}
