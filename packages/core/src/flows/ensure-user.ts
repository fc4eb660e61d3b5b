import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { UserRecord } from "../storage/types.js";
import type { FieldValue } from "../user-fields/field.js";
import { changedFields, readFieldInput } from "../user-fields/values.js";
import {
  type CheckedUserInput,
  type CreateUserInput,
  type User,
  createUserRecord,
  readCreateUserInput,
  toUser,
} from "./create-user.js";

/**
 * A field of {@link CreateUserInput} in which an existing user differs from what {@link ensureUser}
 * was given; `hasPassword` when a password was given and the user has none.
 */
export type EnsureUserDifference = "roles" | "disabled" | "email" | "emailVerified" | "hasPassword" | "fields";

/** What {@link ensureUser} did. */
export type EnsureUserResult =
  /** The username was free: the user was created from the input, as {@link createUser} creates it. */
  | { created: true; user: User; differs: [] }
  /**
   * The username was taken: the user is as it was, nothing written. `differs` names the fields the
   * input gives that the user does not hold, in the order of {@link EnsureUserDifference}; empty when
   * it holds them all. Names only: never a value, and never whether a password matches.
   */
  | { created: false; user: User; differs: EnsureUserDifference[] };

/**
 * Creates a user unless one of that username exists already: what a service's start-up seed
 * needs, since it runs again at every start on storage that keeps its users.
 *
 * - **The username is free**: the user is created as {@link createUser} creates it (the password
 *   policy, argon2id, the `user.created` event) and the answer is `{ created: true }`.
 * - **The username is taken** (regardless of case, as for `createUser`): nothing is written, and the
 *   answer is `{ created: false, user, differs }` with the user as stored. Its password, roles,
 *   state, address, second factors and sessions are left as they are, even where the input asks for
 *   something else: `differs` names those fields (`roles` compared as sets; `fields` when a given
 *   additional field differs from the stored value or its default; a field the input leaves out is
 *   not compared). The password given is not checked against the policy, hashed or compared,
 *   so the answer says nothing of whether it matches; `hasPassword` is listed when the user has none.
 *   To change a user, call the function that changes that field ({@link setUserRoles}, {@link setUserDisabled},
 *   {@link setPassword}, …).
 * - **Calls at once** (processes starting together, on storage they share): one creates the user,
 *   the others answer `created: false`; none fails for the race.
 *
 * Every field of the input is checked as `createUser` checks it, whether the user exists or not, so a
 * seed that is wrong fails at every start, not only at the first.
 *
 * @throws {AuthError} 40001 or 40002 naming the field (as `createUser`), 42200 when the username or roles
 *   are refused, or, when creating, the password (with the reason), 40900 when creating and another account
 *   holds `email` verified (EV-1), 50300 when the hashing queue is full or `password.isBreached` failed.
 * @example
 * ```ts
 * const { created, differs } = await ensureUser(auth, {
 *   username: "alice",
 *   password: process.env.ALICE_PASSWORD ?? "",
 *   roles: ["admin"],
 * });
 * if (!created && differs.length > 0) console.warn(`alice is kept as she is; she differs from the seed in ${differs.join(", ")}`);
 * ```
 */
export async function ensureUser(auth: Auth, input: CreateUserInput): Promise<EnsureUserResult> {
  const checked = readCreateUserInput(input);
  const givenFields = input.fields === undefined ? undefined : readFieldInput(auth.userFields, input.fields, "admin");
  const existing = await auth.storage.users.findByUsernameKey(checked.usernameKey);
  if (existing) return keptAsItIs(auth, existing, input, checked, givenFields);
  try {
    return { created: true, user: toUser(auth, await createUserRecord(auth, input, { by: "service" })), differs: [] };
  } catch (error) {
    // Another call created it between the lookup and the write: the store refused the taken username.
    if (!(error instanceof AuthError) || error.code !== ErrorCode.Conflict) throw error;
    const winner = await auth.storage.users.findByUsernameKey(checked.usernameKey);
    if (winner === null) throw error;
    return keptAsItIs(auth, winner, input, checked, givenFields);
  }
}

/** The answer for a user that exists: the fields the input gives that the record does not hold. */
function keptAsItIs(
  auth: Auth,
  record: UserRecord,
  input: CreateUserInput,
  checked: CheckedUserInput,
  givenFields: Record<string, FieldValue> | undefined,
): EnsureUserResult {
  const differs = differences(record, input, checked);
  if (changedFields(auth, record, givenFields) !== null) differs.push("fields");
  return { created: false, user: toUser(auth, record), differs };
}

/** Decides, from the record and the checked input alone, which given fields the record does not hold. */
export function differences(record: UserRecord, input: CreateUserInput, checked: CheckedUserInput): EnsureUserDifference[] {
  const differs: EnsureUserDifference[] = [];
  const given = (value: unknown) => value !== undefined && value !== null;
  if (given(input.roles) && !sameSet(checked.roles, record.roles)) differs.push("roles");
  if (given(input.disabled) && (input.disabled === true) !== record.disabled) differs.push("disabled");
  if (checked.address !== null && checked.address.email !== record.email) differs.push("email");
  if (checked.address !== null && given(input.emailVerified) && checked.address.verified !== record.emailVerified) {
    differs.push("emailVerified");
  }
  if (checked.password !== undefined && record.passwordHash === null) differs.push("hasPassword");
  return differs;
}

function sameSet(wanted: string[], held: string[]): boolean {
  const heldSet = new Set(held);
  return wanted.length === heldSet.size && wanted.every((role) => heldSet.has(role));
}
