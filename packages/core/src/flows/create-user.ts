import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { assertAcceptablePassword } from "../crypto/password-policy.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserCreator } from "../events/types.js";
import type { UserRecord } from "../storage/types.js";
import type { FieldValue } from "../user-fields/field.js";
import { newUserFields, readFieldInput, storedFieldValues } from "../user-fields/values.js";
import { emailKeyOf, normalizeEmail } from "../users/email.js";
import { rolesProblem } from "../users/roles.js";
import { normalizeUsername } from "../users/username.js";
import { optionalString, requiredString } from "./input.js";

/** The input of {@link createUser}. */
export interface CreateUserInput {
  username: string;
  /** Checked against the password policy (PW-3); omit for an account that cannot sign in with one yet. */
  password?: string;
  roles?: string[];
  disabled?: boolean;
  /** The account's email address, checked and NFKC-normalised (`normalizeEmail`: 40002 naming `email`). */
  email?: string;
  /**
   * True when the caller vouches that `email` is the user's (the service, or an administrator):
   * stored verified, which no other account may be (EV-1: 40900). Default false; true needs `email`.
   */
  emailVerified?: boolean;
  /**
   * Additional fields (`user.fields` of `createAuth`): any declared field, checked against its
   * declaration (40002 malformed, 42200 out of its limits, naming it); each left out gets its
   * default, and a `required` one without a default must be given (40001).
   */
  fields?: Record<string, FieldValue>;
}

/** Who asks for an account, as the `user.created` event tells it. */
export interface UserOrigin {
  by: Exclude<UserCreator, "directory">;
  /** With `by: "admin"`, the administrator. */
  adminUserId?: string;
}

/**
 * A user as management functions return it: everything but the password hash; with fields
 * declared, `fields` holds every one of them (defaults filled in, `inMe: false` ones too: this
 * view is the service's).
 */
export type User = Omit<UserRecord, "passwordHash" | "usernameKey"> & { hasPassword: boolean };

/** The management view of a user record. */
export function toUser(auth: Auth, record: UserRecord): User {
  const { passwordHash, usernameKey: _, fields, ...rest } = record;
  const view: User = { ...rest, roles: [...rest.roles], hasPassword: passwordHash !== null };
  return auth.userFields.length === 0 ? view : { ...view, fields: storedFieldValues(auth.userFields, fields) };
}

/**
 * Checks an account's roles, each counted once: at most 50 names of 1 to 64 characters, 4,096
 * bytes together as the access token carries them (AD-2; `rolesProblem`), so that every token
 * fits in a request header. Every write of roles goes through it: creation, an administrator's
 * change, `setUserRoles`, the import, a provider's first sign-in.
 *
 * @throws {AuthError} 42200 with the reason.
 */
export function checkRoles(roles: unknown): string[] {
  const problem = rolesProblem(roles);
  if (problem !== null) throw new AuthError(ErrorCode.ValidationFailed, `roles ${problem}`);
  return [...new Set(roles as string[])];
}

/**
 * Creates a local user. The password is checked against the policy and stored as argon2id
 * (PW-1, PW-3); the username is normalised (NFKC) and must be unique regardless of case.
 *
 * `email` is stored unverified unless `emailVerified` is true: the service vouches for it, and no
 * other account may hold it verified (EV-1).
 *
 * @throws {AuthError} 40002 when `email` is not an address or `emailVerified` not a boolean (naming the field),
 *   42200 when the username or password is refused (with the reason), 40900 when the username is taken or
 *   another account holds `email` verified, 50300 when the hashing queue is full or `password.isBreached` failed.
 * @example
 * ```ts
 * await createUser(auth, { username: "alice", password: "a long passphrase", roles: ["admin"] });
 * ```
 */
export async function createUser(auth: Auth, input: CreateUserInput): Promise<User> {
  return toUser(auth, await createUserRecord(auth, input, { by: "service" }));
}

/**
 * {@link createUser} for the flows that make accounts (sign-up, an administrator, a provider's
 * first sign-in): the stored record, and who asked in the `user.created` event.
 */
export async function createUserRecord(auth: Auth, input: CreateUserInput, origin: UserOrigin): Promise<UserRecord> {
  const record = await newUserRecord(auth, input);
  const created = await auth.storage.users.create(record);
  if (!created) {
    // The store refuses a taken username key or id, or a verified address another account holds (EV-1).
    const holder = record.emailVerified ? await auth.storage.users.findByVerifiedEmail(emailKeyOf(record.email as string)) : null;
    throw new AuthError(
      ErrorCode.Conflict,
      holder ? "The email address is verified on another account" : "The username is taken",
    );
  }
  const stored = storedUser(record, created);
  auth.emit({ type: "user.created", userId: stored.id, ...origin, at: record.createdAt });
  return stored;
}

/**
 * A store's answer to a user it was given: the user under the id the store made, when it answered
 * one (an existing users table's integers: `UserStore.create`), else as it was.
 */
export function storedUser(record: UserRecord, created: true | string): UserRecord {
  return typeof created === "string" ? { ...record, id: created } : record;
}

/**
 * The record {@link createUserRecord} stores, checked and made but not stored: a local user with
 * a random id, token version 0, its fields with their defaults, and the password (when given)
 * checked against the policy and hashed. For a flow that stores it with what it owns
 * (`UserStore.createAccount`).
 *
 * @throws {AuthError} as {@link createUser}, but never 40900: nothing is looked up.
 */
export async function newUserRecord(auth: Auth, input: CreateUserInput): Promise<UserRecord> {
  const { username, usernameKey, password, roles, address } = readCreateUserInput(input);
  const fields = newUserFields(auth.userFields, readFieldInput(auth.userFields, input.fields, "admin"));
  if (password !== undefined) await assertAcceptablePassword(auth.config.password, password, username);
  const now = auth.now();
  return {
    id: randomId(auth),
    username,
    usernameKey,
    passwordHash: password === undefined ? null : await auth.passwords.hash(password),
    roles,
    disabled: input.disabled === true,
    tokenVersion: 0,
    source: "local",
    email: address?.email ?? null,
    emailVerified: address?.verified === true,
    createdAt: now,
    updatedAt: now,
    ...(auth.userFields.length > 0 ? { fields } : {}),
  };
}

/** A {@link CreateUserInput} with each field checked and normalised, before the password policy and storage. */
export interface CheckedUserInput {
  username: string;
  usernameKey: string;
  password: string | undefined;
  /** Each role once, in the order given; `[]` when the input has none. */
  roles: string[];
  address: { email: string; verified: boolean } | null;
}

/**
 * Checks the fields of a {@link CreateUserInput} as {@link createUser} does, in its order (username,
 * password's type, roles, address), without the password policy or storage.
 *
 * @throws {AuthError} 40001 or 40002 naming the field, 42200 for the username or roles with the reason.
 */
export function readCreateUserInput(input: CreateUserInput): CheckedUserInput {
  const { username, usernameKey } = normalizeUsername(requiredString(input.username, "username"));
  const password = optionalString(input.password, "password");
  const roles = checkRoles(input.roles ?? []);
  return { username, usernameKey, password, roles, address: emailOf(input) };
}

/** The checked address of a {@link CreateUserInput} and whether it is vouched for, or null without one. */
function emailOf(input: CreateUserInput): { email: string; verified: boolean } | null {
  const raw = optionalString(input.email, "email");
  const verified = input.emailVerified ?? false;
  if (typeof verified !== "boolean") throw new AuthError(ErrorCode.MalformedParameter, "emailVerified must be a boolean");
  if (raw === undefined) {
    if (verified) throw new AuthError(ErrorCode.MalformedParameter, "emailVerified needs an email");
    return null;
  }
  return { email: normalizeEmail(raw, "email"), verified };
}
