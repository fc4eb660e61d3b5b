import type { FieldValue } from "../user-fields/field.js";
import type { IdentityRecord } from "./identity-store.js";
import type { PasskeyRecord } from "./passkey-store.js";
import type { TotpRecord } from "./totp-store.js";

/** Where an account's credentials live: in this library, or in a directory (LDAP). */
export type UserSource = "local" | "directory";

/** A user account. `usernameKey` is the normalised username that lookups match on. */
export interface UserRecord {
  id: string;
  /** The username as the user chose it (NFKC-normalised). */
  username: string;
  /** `username` case-folded: unique, and what lookups match on. */
  usernameKey: string;
  /** argon2id PHC string, an imported hash (`imported:…`, IM-1), or null for accounts that cannot sign in with a password. */
  passwordHash: string | null;
  roles: string[];
  disabled: boolean;
  /** Grows by one whenever existing tokens must stop working (TV-1). */
  tokenVersion: number;
  source: UserSource;
  /** The account's email address, NFKC-normalised (`normalizeEmail`), or null. Set with {@link UserStore.setEmail}. */
  email: string | null;
  /**
   * Whether `email` is proven to be the user's (always false without one). Two accounts never hold
   * the same verified address, compared by `emailKeyOf` (NFKC, lower case; EV-1); unverified ones
   * may repeat.
   */
  emailVerified: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * The values of the additional user fields declared in `createAuth({ user: { fields } })`, by
   * name (JSON-safe: strings, numbers, booleans, string arrays, null). Stores keep it as given
   * and answer it back; absent for a user stored before any field was declared, or by a store
   * that predates fields (the flows read each missing field as its default).
   */
  fields?: Record<string, FieldValue>;
}

/** What {@link UserStore.setEmail} gives a user: an address and whether it is verified, or null for none. */
export type EmailSetting = { email: string; verified: boolean } | null;

/** What {@link UserStore.setEmail} did. */
export type EmailChange =
  /** Stored; `user` is the record after the write. */
  | { outcome: "set"; user: UserRecord }
  /** Nothing written: another account holds the address verified (EV-1). */
  | { outcome: "taken" }
  /** Nothing written: no user has this id. */
  | { outcome: "unknown" };

/**
 * The fields a caller may change with {@link UserStore.update}; the address changes only through
 * {@link UserStore.setEmail}. `fields` names only the additional fields to change: the others keep
 * their stored values.
 */
export type UserPatch = Partial<Pick<UserRecord, "username" | "usernameKey" | "passwordHash" | "roles" | "disabled" | "fields">>;

/**
 * What {@link UserStore.create} and {@link UserStore.createAccount} answer: false when they
 * stored nothing; true when they stored the user under its `id`; a string when they stored it
 * under that id instead, made by the store (see {@link UserStore.create}).
 */
export type UserCreation = boolean | string;

/** Users. */
export interface UserStore {
  /**
   * Inserts a user; returns false, storing nothing, when `usernameKey` or `id` is taken, or when
   * the user's `email` is verified and another account holds an address with the same
   * `emailKeyOf` verified (EV-1). Atomically: of concurrent creates with one verified address, one
   * stores (SQL: a unique index on the key of verified addresses, null for the others).
   *
   * Answers true when it stored the user under `user.id`. A store that keeps ids of a form of its
   * own (integers or UUIDs of an existing users table: `@portcullis/kysely`'s `users` option)
   * stores a user whose `id` is not of that form under an id it makes (the database's sequence or
   * AUTO_INCREMENT, a random UUID) and answers that id: the caller then uses it. Core's random
   * ids are never of those forms, so a new user always gets the store's id; an id of the form
   * (an import that keeps ids) is stored as it is.
   */
  create(user: UserRecord): Promise<UserCreation>;
  /**
   * Creates an account whole: the user and every factor and link it owns, all or nothing (IM-1:
   * an account must never exist without the second factor its record carries, not even for a
   * moment, nor after a failure part way). One atomic operation: one transaction on SQL, one
   * script or step elsewhere; never the separate writes of `create`, `totp.putPending`,
   * `recoveryCodes.replace`, `passkeys.create` and `identities.link`, which a failure between
   * them would leave half done. What is written is what those writes would store: the user as
   * {@link create} stores it, `totp` as {@link TotpStore.get} returns it (enabled or pending),
   * each recovery code hash as an unused code (RC-2), each passkey and link, all with
   * `userId` the user's id.
   *
   * Returns false, writing nothing of the account, when {@link create} would refuse the user (its
   * `id` or `usernameKey` taken, or its address verified on another account: EV-1), when one of
   * its credential ids is registered to anyone (WA-6), when one of its (provider, subject) links
   * is taken (OA-7), or when the account names one credential id or one link twice. Of
   * concurrent calls that share any of these keys, at most one writes. A store that fails part
   * way (the database unreachable) throws, and has stored nothing of the account.
   *
   * Answers as {@link UserStore.create} does: true, or the id the store gave the user.
   */
  createAccount(account: NewAccount): Promise<UserCreation>;
  /** The user with this id, or null. */
  findById(id: string): Promise<UserRecord | null>;
  /** The user whose `usernameKey` equals this one exactly, or null: callers pass a key already normalised. */
  findByUsernameKey(usernameKey: string): Promise<UserRecord | null>;
  /**
   * The user whose verified address has this key (`emailKeyOf` of it, compared exactly), or null.
   * Unverified addresses are never found: they prove nothing (EV-1).
   */
  findByVerifiedEmail(emailKey: string): Promise<UserRecord | null>;
  /**
   * Sets the user's address and whether it is verified (null: no address, not verified) and sets
   * `updatedAt`, in one atomic write: when `verified` and another account holds an address with
   * the same `emailKeyOf` verified, it writes nothing and answers `taken`, so of concurrent calls
   * for one address on two accounts at most one holds it verified (EV-1). Never a read, then a write.
   */
  setEmail(id: string, setting: EmailSetting, now: number): Promise<EmailChange>;
  /** Applies `patch` and sets `updatedAt`; returns the updated user, or null if none. */
  update(id: string, patch: UserPatch, now: number): Promise<UserRecord | null>;
  /**
   * Atomically sets the user's `passwordHash` to `next`, and `updatedAt`, only if it still equals
   * `expected` (compare-and-set): a re-hash at sign-in (PW-1, IM-1) never overwrites a password
   * changed since it was read. Returns whether it wrote. Of concurrent calls with one `expected`,
   * at most one writes (SQL: `UPDATE … WHERE id = ? AND password_hash = ?`).
   */
  replacePasswordHash(id: string, expected: string, next: string, now: number): Promise<boolean>;
  /** Atomically adds one to the token version; returns the new value, or null if no user. */
  incrementTokenVersion(id: string, now: number): Promise<number | null>;
  /**
   * Atomically adds one to the token version of every user from `source` (one statement, not a
   * loop over reads): saving a directory policy ends every directory user's tokens. Returns how many.
   */
  incrementTokenVersionsBySource(source: UserSource, now: number): Promise<number>;
  /**
   * One page of users in the code point order of their `usernameKey` (UTF-8 byte order:
   * `compareCodePoints`; SQL `COLLATE "C"` or a `_bin` collation): at most `limit`, only keys
   * after `afterUsernameKey` when given, and only keys that start with `usernameKeyPrefix` when
   * given (exactly, code point for code point: no case or accent folding, `%`, `_` and `\` plain
   * characters). Paging from the last key of each page visits every user once. SQL stores answer
   * from the index on the key (a range from the prefix to its `prefixUpperBound`), never by
   * reading every row.
   */
  list(query: UserListQuery): Promise<UserRecord[]>;
}

/**
 * What {@link UserStore.createAccount} stores as one: a new user and everything it owns. The
 * records of its factors carry no `userId`: each is the user's.
 */
export interface NewAccount {
  user: UserRecord;
  /** The user's TOTP factor, as {@link TotpStore.get} will return it, or null for none. */
  totp: Omit<TotpRecord, "userId"> | null;
  /** The hashes of the user's unused recovery codes (RC-2), stored as at the user's `createdAt`; may be empty. */
  recoveryCodeHashes: string[];
  /** The user's passkeys; may be empty. */
  passkeys: Omit<PasskeyRecord, "userId">[];
  /** The user's links to sign-in providers; may be empty. */
  identities: Omit<IdentityRecord, "userId">[];
}

/** What {@link UserStore.list} returns a page of. */
export interface UserListQuery {
  limit: number;
  afterUsernameKey?: string;
  usernameKeyPrefix?: string;
}
