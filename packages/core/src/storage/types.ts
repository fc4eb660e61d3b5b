/**
 * The storage contract of Portcullis: small domain interfaces, each naming the operations
 * that security depends on being atomic. A storage adapter implements all of them and proves
 * it with the public conformance suite (`@portcullis/core/testing`).
 *
 * Times are epoch milliseconds. Every method that says "atomically" must hold under
 * concurrent callers across processes: a conditional write (`UPDATE … WHERE …`, a
 * compare-and-set, a delete that returns the row), never a read followed by a write.
 */

import type { FieldValue } from "../user-fields/field.js";

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

/** An encrypted secret: AES-256-GCM with the user id as associated data (TOTP-6). */
export interface EncryptedSecret {
  /** Which configured encryption key sealed it. */
  keyId: string;
  /** base64url of nonce ‖ ciphertext ‖ tag. */
  sealed: string;
}

/** A user's TOTP factor: pending until the first valid code, then enabled. */
export interface TotpRecord {
  userId: string;
  secret: EncryptedSecret;
  enabled: boolean;
  /** The highest time step ever accepted; -1 before the first (TOTP-4). */
  lastUsedStep: number;
  createdAt: number;
}

/** TOTP factors. */
export interface TotpStore {
  /** The user's factor, pending or enabled, or null. */
  get(userId: string): Promise<TotpRecord | null>;
  /** Stores a pending factor, replacing a pending one; returns false if one is enabled. */
  putPending(record: TotpRecord): Promise<boolean>;
  /** Atomically turns the pending factor on; returns false if there is none pending. */
  enable(userId: string): Promise<boolean>;
  /** Removes the factor, pending or enabled; returns whether one existed. */
  remove(userId: string): Promise<boolean>;
  /**
   * Atomically records `step` as used if it is greater than `lastUsedStep`, and returns
   * whether it was (compare-and-set; TOTP-4). Two callers with the same step: one true.
   */
  advanceStep(userId: string, step: number): Promise<boolean>;
}

/** One-time recovery codes, stored only as hashes (RC-2). */
export interface RecoveryCodeStore {
  /** Replaces the user's whole set with `hashes` (RC-1: regenerating voids the old set). */
  replace(userId: string, hashes: string[], now: number): Promise<void>;
  /** Whether the user has an unused code with this hash (both must match; ST-2). Spends nothing. */
  has(userId: string, hash: string): Promise<boolean>;
  /** Atomically removes the code with this hash; true for exactly one caller (RC-3). */
  consume(userId: string, hash: string): Promise<boolean>;
  /** How many unused codes the user has. */
  count(userId: string): Promise<number>;
  /** Deletes every code of the user, as turning the second factor off does. */
  removeAll(userId: string): Promise<void>;
}

/**
 * How a session was proven, in Portcullis's own words: the RFC 8176 values `pwd` (a password),
 * `otp` (a TOTP code), `hwk` (a device-bound passkey), `swk` (a synced passkey), `user` (its user
 * verification) and `fed` (a provider), with `rc` for a recovery code and `ldap` for a directory
 * password of older releases, and `mfa` for a second factor a provider asserted (STUP-5; beside
 * `fed`, with the provider's own `pwd`, `otp`, `hwk`, `swk`). Access tokens carry them as RFC 8176
 * values (`amrClaim`: `rc` is `otp`, `ldap` is `pwd`, and `mfa` is added when two factors were proven).
 */
export type AuthMethod = "pwd" | "otp" | "rc" | "hwk" | "swk" | "user" | "fed" | "ldap" | "mfa";

/** A signed-in session: one login, and the refresh token that carries it on, rotated at each refresh. */
export interface SessionRecord {
  id: string;
  userId: string;
  /** The user's token version when the session began (TV-2). */
  tokenVersion: number;
  /** How the sign-in or re-authentication that began the session was proven (STUP-1); never changed after. */
  amr: AuthMethod[];
  /**
   * When `amr` was proven: the sign-in or re-authentication that began the session (a
   * re-authentication begins a new session: STUP-2); the access tokens' `auth_time` (STUP-1).
   */
  authTime: number;
  createdAt: number;
  /** Never moved by refresh (RT-4). */
  expiresAt: number;
  revokedAt: number | null;
  /** When the session began or last refreshed its tokens; access-token checks never move it. */
  lastUsedAt: number;
  /** The User-Agent it was last used with, cut to 256 characters; shown to the user, never used for a decision. */
  userAgent: string | null;
  /** The client address it was last used from, truncated as configured (IPv4 /24, IPv6 /48 by default). */
  address: string | null;
  /**
   * The SHA-256 of the one refresh token the session accepts now (RT-1); the token names the
   * session and its generation, so a refresh finds the session by its id. Null when it accepts
   * none: a session of an earlier release left with no unspent token.
   */
  refreshHash: string | null;
  /** How many refreshes the session has had: the generation its current refresh token names (0 at sign-in). */
  refreshGeneration: number;
  /** When the current refresh token stops being accepted unused (its idle expiry); never after `expiresAt` (RT-4). */
  refreshExpiresAt: number;
}

/** Where a session was last used from: what {@link SessionStore.recordUse} keeps. */
export interface SessionUse {
  userAgent: string | null;
  address: string | null;
}

/**
 * A refresh token of an earlier release, kept in a table of its own (one row per token, spent or
 * not) until it expires; what {@link SessionStore.findLegacyRefreshToken} reads. Migration 5 of
 * the SQL storage made each live session hold its newest unspent one as its current token.
 */
export interface LegacyRefreshToken {
  hash: string;
  sessionId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  /** When it was exchanged before the migration; a token exchanged then is reuse (RT-2). */
  spentAt: number | null;
}

/** What {@link SessionStore.rotateRefresh} is asked to do: one refresh's one write. */
export interface RefreshRotation {
  sessionId: string;
  /** The SHA-256 of the presented refresh token: the session must hold it as its current one. */
  hash: string;
  now: number;
  /** The SHA-256 of the token that replaces it. */
  nextHash: string;
  /** The generation the replacement names: the session's `refreshGeneration` after the write. */
  nextGeneration: number;
  /** The replacement's idle lifetime in milliseconds: it expires at `now + idleMs`, or with its session if that is sooner (RT-4). */
  idleMs: number;
  /** Where the session is used from, recorded on it (`lastUsedAt`, `userAgent`, `address`) by the same write. */
  use: SessionUse;
}

/**
 * What {@link SessionStore.rotateRefresh} did. `session` and `user` are as they were before the
 * write, `totpEnabled` whether the user's second factor was enabled then.
 */
export type RotationResult =
  | { outcome: "rotated"; session: SessionRecord; user: UserRecord; totpEnabled: boolean }
  /** Nothing written: the session is unknown, holds another token, or may not refresh (see {@link SessionStore.rotateRefresh}). */
  | { outcome: "refused" };

/**
 * What {@link SessionStore.findTokenState} reads for the check of an access token (TV-2): a
 * session, and the standing of the user it belongs to.
 */
export interface TokenState {
  session: Pick<SessionRecord, "userId" | "revokedAt" | "expiresAt">;
  /** The session's user (`session.userId`), or null when no user has that id any more. */
  user: Pick<UserRecord, "tokenVersion" | "disabled"> | null;
}

/** Sessions and their refresh tokens. */
export interface SessionStore {
  /** Inserts a new session; its id is random, so it never meets an existing one. */
  createSession(session: SessionRecord): Promise<void>;
  /** The session with this id, revoked or expired ones included (callers check both), or null. */
  findSession(id: string): Promise<SessionRecord | null>;
  /**
   * Optional: the session with this id (revoked or expired ones included) and its user's token
   * version and disabled flag, in one read (one statement on SQL), or null for an unknown session.
   * What every protected request asks when `tokenStateCacheSeconds` does not answer it. A store
   * without it is served by {@link findSession} and {@link UserStore.findById}, sent together.
   */
  findTokenState?(sessionId: string): Promise<TokenState | null>;
  /**
   * Marks a session revoked, by one conditional write; returns false if it was unknown or already
   * revoked. Of N concurrent calls on one live session exactly one gets true: a re-authentication
   * goes on only when its call ended the session (STUP-2, ASVS 7.2.4).
   */
  revokeSession(id: string, now: number): Promise<boolean>;
  /**
   * Moves a live session to the user's new token version: the session a directory user is
   * refreshing carries on when the refresh changed their roles and raised the version. Returns
   * false, changing nothing, when the session is unknown or revoked.
   */
  setTokenVersion(id: string, tokenVersion: number): Promise<boolean>;
  /**
   * Revokes every session of a user not yet revoked, but the one with the id `exceptSessionId`
   * when given (SE-2: the session that made a change goes on), in one atomic write; returns how
   * many it revoked. Of concurrent calls each session is revoked by one, so their counts add up
   * to the sessions there were (SE-3). An `exceptSessionId` that is not this user's keeps nothing.
   */
  revokeUserSessions(userId: string, now: number, exceptSessionId?: string): Promise<number>;
  /**
   * Revokes every live session of every user (not revoked, `expiresAt` after `now`) at `now`, the
   * incident response of STUP-6; returns how many it revoked. Each session is revoked by one
   * conditional write (`revoked_at IS NULL`), so the counts of concurrent calls add up to the
   * sessions there were. On a large store it must stay bounded: writes of a bounded number of
   * sessions each (the SQL store: 10,000 ids of the primary key at a time), never one statement
   * that holds every row's lock for as long as the table takes. Sessions that begin while it runs
   * may be left live: they are sign-ins after the call.
   */
  revokeAll(now: number): Promise<number>;
  /**
   * The user's live sessions (not revoked, `expiresAt` after `now`), newest first by `createdAt`,
   * at most `limit`. Sessions that began in the same millisecond come in one fixed order (by id),
   * the same on every call, so a shorter `limit` reads the start of a longer one: the cap on
   * sessions per account relies on it under concurrent sign-ins (STUP-8).
   */
  listByUser(userId: string, now: number, limit: number): Promise<SessionRecord[]>;
  /**
   * A refresh's one write, one conditional UPDATE of the session by its id (RT-3): only when the
   * session holds `hash` as its current refresh token, is not revoked, has not expired
   * (`expiresAt`) nor has its token (`refreshExpiresAt`), and its user exists, is not disabled and
   * has the session's token version (TV-2), the session takes `nextHash` as its token, at
   * `nextGeneration`, idle-valid until `now + idleMs` but never past `expiresAt` (RT-4), and records
   * `use` at `now` as where it was last used. Of N concurrent calls with one `hash` at most one
   * rotates; the others, and any call whose condition fails, write nothing and answer `refused`.
   */
  rotateRefresh(rotation: RefreshRotation): Promise<RotationResult>;
  /**
   * Optional, for a store whose earlier releases kept refresh tokens in a table of their own: the token
   * with this hash there, spent or not, or null. A store that never had such tokens leaves it out.
   */
  findLegacyRefreshToken?(hash: string): Promise<LegacyRefreshToken | null>;
}

/** What a one-time challenge is for. */
export type ChallengeKind =
  | "totp_login"
  | "oauth_state"
  | "webauthn_login"
  | "webauthn_register"
  /** A passkey assertion that re-authenticates a signed-in session (STUP-2). */
  | "webauthn_reauthenticate"
  /** The token of a reset link, and the record naming each user's newest one. */
  | "password_reset"
  | "password_reset_newest"
  /** The token of an address's verification link, and the record naming each user's newest one. */
  | "email_verification"
  | "email_verification_newest"
  /** The temporary token of a sign-in that must enrol a second factor first (40105; STUP-4). */
  | "second_factor_enrolment";

/** A short-lived, single-use item: a temporary token, an OAuth state, a WebAuthn challenge. */
export interface ChallengeRecord {
  /** The SHA-256 of the value the client holds, never the value itself. */
  id: string;
  kind: ChallengeKind;
  userId: string | null;
  /** Flow-specific state; never a plaintext secret. */
  data: Record<string, unknown>;
  /** Attempts taken with {@link ChallengeStore.takeAttempt}. */
  attempts: number;
  createdAt: number;
  expiresAt: number;
}

/** Single-use challenges (ST-1). */
export interface ChallengeStore {
  /** Stores a challenge, replacing one with the same id. */
  put(challenge: ChallengeRecord): Promise<void>;
  /** The live challenge with this id and kind (both must match; ST-2), or null. */
  find(id: string, kind: ChallengeKind, now: number): Promise<ChallengeRecord | null>;
  /**
   * Atomically removes and returns the live challenge with this id and kind. Exactly one of
   * N concurrent callers receives it; expired ones are returned to nobody.
   */
  consume(id: string, kind: ChallengeKind, now: number): Promise<ChallengeRecord | null>;
  /**
   * Atomically counts one attempt against the live challenge with this id and kind, unless it
   * already holds `limit` attempts, and returns it with the new count; returns null, counting
   * nothing, when there is no such live challenge or its attempts are used up. Taken before the
   * attempt is evaluated, so of N concurrent attempts at most `limit` are evaluated (TMP-4).
   * A challenge whose attempts are used up can still be consumed by an attempt that took one.
   */
  takeAttempt(id: string, kind: ChallengeKind, limit: number, now: number): Promise<ChallengeRecord | null>;
  /**
   * Deletes at most `limit` expired challenges (`expiresAt <= now`), and may prune the store's
   * other expired rows here too, at most `limit` of each kind: throttling windows that ended,
   * sessions past their expiry and an earlier release's refresh tokens (the SQL storage and `memoryStorage` do).
   * Returns how many rows it deleted, all kinds together. Each call must be short, one bounded
   * statement per kind: core's sweep (`sweepExpired`, run by the auth instance's timer) calls it
   * again while it returns `limit` or more.
   */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** The state of one throttling counter after a hit. */
export interface CounterHit {
  /** Hits in the current window, this one included when `allowed`. */
  count: number;
  /** False when the window already held `limit` hits: this one was not counted. */
  allowed: boolean;
  /** When the current window ends. */
  resetAt: number;
}

/** Throttling counters, shared by every instance that shares the storage (RL-1, RL-4). */
export interface CounterStore {
  /**
   * Atomically counts one hit against `key` unless the window already holds `limit`. A
   * window starts at the first hit and lasts `windowMs`. Of N concurrent hits on a fresh
   * key, exactly `limit` are allowed.
   */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<CounterHit>;
  /** The hits counted in the live window, 0 if none. */
  peek(key: string, now: number): Promise<number>;
  /** Deletes the counter, so its next hit starts a new window: a success clears its failures. */
  reset(key: string): Promise<void>;
}

/** A registered passkey or security key (WebAuthn). */
export interface PasskeyRecord {
  /** base64url credential id. */
  id: string;
  userId: string;
  /** base64url COSE public key. */
  publicKey: string;
  counter: number;
  transports: string[];
  label: string;
  backupEligible: boolean;
  backupState: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** Passkeys. */
export interface PasskeyStore {
  /** Inserts; false, storing nothing, when the credential id is registered to anyone (WA-6). */
  create(passkey: PasskeyRecord): Promise<boolean>;
  /** The passkey with this credential id, whoever it belongs to, or null. */
  findById(id: string): Promise<PasskeyRecord | null>;
  /** Every passkey of the user, in no particular order. */
  listByUser(userId: string): Promise<PasskeyRecord[]>;
  /**
   * Atomically sets the counter and use time if the stored counter still equals
   * `expectedCounter` (WA-5); returns whether it did.
   */
  updateCounter(id: string, expectedCounter: number, counter: number, backupState: boolean, now: number): Promise<boolean>;
  /** Sets the label of the user's passkey with this id (both must match); returns whether it did. */
  rename(userId: string, id: string, label: string): Promise<boolean>;
  /** Deletes the user's passkey with this id (both must match); returns whether it did. */
  delete(userId: string, id: string): Promise<boolean>;
  /**
   * Atomically deletes the user's passkey with this id only if the user has another passkey:
   * for an account whose passkeys are its only way to sign in. Of concurrent calls on a user's
   * last two passkeys exactly one deletes. `"last"` deletes nothing; `"not_found"` when the
   * user has no passkey with this id.
   */
  deleteUnlessLast(userId: string, id: string): Promise<"deleted" | "last" | "not_found">;
}

/** A link between an account and an external identity: (provider, subject) is unique (OA-7). */
export interface IdentityRecord {
  provider: string;
  subject: string;
  userId: string;
  /** The email the provider gave, lower-cased; null when it gave none. */
  email: string | null;
  emailVerified: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** External identities (OAuth/OIDC). */
export interface IdentityStore {
  /** Inserts; false, storing nothing, when (provider, subject) is already linked. */
  link(identity: IdentityRecord): Promise<boolean>;
  /** The link of this provider's subject, or null: how a returning provider sign-in finds its account. */
  find(provider: string, subject: string): Promise<IdentityRecord | null>;
  /** Every identity linked to the user, in no particular order. */
  listByUser(userId: string): Promise<IdentityRecord[]>;
  /**
   * The identities whose `emailVerified` is true and whose `email` equals `email` exactly, code
   * point for code point (no case or accent folding: the flows store and ask lower-cased
   * addresses). For linking by verified email, where a provider is set to (OA-7).
   */
  findByVerifiedEmail(email: string): Promise<IdentityRecord[]>;
  /** Deletes the link of (provider, subject) if it is this user's; returns whether it did. */
  unlink(userId: string, provider: string, subject: string): Promise<boolean>;
}

/** Saved configuration that operators change at run time (the directory policy). */
export interface SettingsStore {
  /** The value saved under this key, as JSON gives it back, or undefined when none is. */
  get(key: string): Promise<unknown>;
  /** Saves a JSON-serialisable value under this key, replacing the one before. */
  set(key: string, value: unknown, now: number): Promise<void>;
}

/** Everything Portcullis stores. `memoryStorage()` and `@portcullis/kysely` implement it. */
export interface Storage {
  users: UserStore;
  totp: TotpStore;
  recoveryCodes: RecoveryCodeStore;
  sessions: SessionStore;
  challenges: ChallengeStore;
  counters: CounterStore;
  passkeys: PasskeyStore;
  identities: IdentityStore;
  settings: SettingsStore;
}
