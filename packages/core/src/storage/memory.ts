import type { FieldValue } from "../user-fields/field.js";
import { emailKeyOf } from "../users/email.js";
import { compareCodePoints } from "./code-point-order.js";
import { mayRotate, rotatedSession } from "./refresh-rotation.js";
import type {
  ChallengeKind,
  ChallengeRecord,
  ChallengeStore,
  CounterStore,
  IdentityRecord,
  IdentityStore,
  NewAccount,
  PasskeyRecord,
  PasskeyStore,
  RecoveryCodeStore,
  SessionRecord,
  SessionStore,
  SettingsStore,
  Storage,
  TotpRecord,
  TotpStore,
  UserPatch,
  UserRecord,
  UserStore,
} from "./types.js";

/** How many entries a {@link memoryStorage} holds, per table. */
export interface MemoryStorageSizes {
  users: number;
  sessions: number;
  challenges: number;
  counters: number;
}

/** {@link Storage} held in memory, which also tells how much it holds. */
export interface MemoryStorage extends Storage {
  /** The entries each table holds now, expired ones not yet pruned included. */
  sizes(): MemoryStorageSizes;
}

/**
 * Storage held in this process's memory: for tests, demos and single-instance services that
 * accept losing every session at restart. Each operation runs without yielding between its
 * read and its write, which makes it atomic within the process.
 *
 * Records are copied in, so a caller that mutates an argument changes nothing stored. Users,
 * and sessions are kept frozen and handed out as they are, with no copy, which
 * makes the check of a token's state on every request two map lookups; a write replaces the
 * record. Other records are copied out. Either way, mutating a result changes nothing stored. Expired counter windows, challenges and sessions are pruned as new entries arrive, so a stream of distinct keys holds memory in
 * proportion to the keys live at once, not to every key ever seen, and by
 * `challenges.deleteExpired`, which the auth instance's sweep calls.
 *
 * @example
 * ```ts
 * const auth = createAuth({ storage: memoryStorage(), … });
 * ```
 */
export function memoryStorage(): MemoryStorage {
  const totp = memoryTotp();
  const recoveryCodes = memoryRecoveryCodes();
  const passkeys = memoryPasskeys();
  const identities = memoryIdentities();
  const users = memoryUsers({ totp, recoveryCodes, passkeys, identities });
  const sessions = memorySessions({ user: users.byId, totpEnabled: totp.enabled });
  const counters = memoryCounters();
  const challenges = memoryChallenges([sessions.deleteExpired, counters.deleteExpired]);
  return {
    users: users.store,
    totp: totp.store,
    recoveryCodes: recoveryCodes.store,
    sessions: sessions.store,
    challenges: challenges.store,
    counters: counters.store,
    passkeys: passkeys.store,
    identities: identities.store,
    settings: memorySettings(),
    sizes: () => ({
      users: users.size(),
      sessions: sessions.sessionCount(),
      challenges: challenges.size(),
      counters: counters.size(),
    }),
  };
}

const copy = <T>(value: T): T => structuredClone(value);

/**
 * A frozen copy of a user, session or refresh-token record, whose members are plain values or
 * arrays of them: stored once, then handed to every read as it is.
 */
function frozenCopy<T extends object>(record: T): T {
  const copied = { ...record } as Record<string, unknown>;
  for (const [name, value] of Object.entries(copied)) {
    if (Array.isArray(value)) copied[name] = Object.freeze([...value]);
  }
  return Object.freeze(copied) as T;
}

/** A user's additional fields copied and frozen, arrays too: nothing a caller holds reaches what is stored. */
function frozenFields(fields: Record<string, FieldValue> | undefined): Record<string, FieldValue> | undefined {
  return fields === undefined ? undefined : frozenCopy(fields);
}

/** A user record copied and frozen, its additional fields too. */
function frozenUser(user: UserRecord): UserRecord {
  const copied = frozenCopy(user);
  return user.fields === undefined ? copied : Object.freeze({ ...copied, fields: frozenFields(user.fields) });
}

/** A frozen record like `record` with `changes`: what a write of a frozen record stores in its place. */
const frozenWith = <T>(record: T, changes: Partial<T>): T => Object.freeze({ ...record, ...changes });

/** Below this many entries a table is never swept. */
const minimumSweepSize = 1024;

/**
 * Keys by the expiry their value had when stored: a binary min-heap in two parallel arrays, so
 * the expired ones are found without reading the live ones. A key stored again is pushed again;
 * the record it leaves behind is recognised when it comes up (its key is gone, or its value
 * expires later) and passed over.
 */
function expiryHeap() {
  const times: number[] = [];
  const keys: string[] = [];
  const swap = (a: number, b: number) => {
    [times[a], times[b]] = [times[b] as number, times[a] as number];
    [keys[a], keys[b]] = [keys[b] as string, keys[a] as string];
  };
  return {
    get size(): number {
      return times.length;
    },
    push(time: number, key: string): void {
      let index = times.push(time) - 1;
      keys.push(key);
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if ((times[parent] as number) <= time) return;
        swap(index, parent);
        index = parent;
      }
    },
    /** The key of the earliest record if it is due by `now` (removed from the heap), else undefined. */
    popDue(now: number): string | undefined {
      if (times.length === 0 || (times[0] as number) > now) return undefined;
      const key = keys[0];
      const last = times.length - 1;
      swap(0, last);
      times.pop();
      keys.pop();
      for (let index = 0; ; ) {
        const left = 2 * index + 1;
        const smallest = left + 1 < last && (times[left + 1] as number) < (times[left] as number) ? left + 1 : left;
        if (smallest >= last || (times[index] as number) <= (times[smallest] as number)) break;
        swap(index, smallest);
        index = smallest;
      }
      return key;
    },
  };
}

/**
 * A map whose expired entries are dropped whenever its heap of expiries has doubled since the
 * last sweep, and by `deleteExpired`: the work is amortised O(log n) per insert, the map holds at most about twice
 * its live entries, and a sweep reads only what has expired. A value's expiry may change only
 * through `set` (writes straight to `entries` replace a value with one of the same expiry).
 * `dropped` hears of each entry pruned, so an index over the map can forget it too.
 */
export function expiringMap<V>(expiresAt: (value: V) => number, dropped: (key: string, value: V) => void = () => {}) {
  const entries = new Map<string, V>();
  const heap = expiryHeap();
  let sweepAtSize = minimumSweepSize;
  /** Deletes at most `limit` entries expired by `now`; returns how many. */
  const deleteExpired = (now: number, limit: number): number => {
    let deleted = 0;
    while (deleted < limit) {
      const key = heap.popDue(now);
      if (key === undefined) break;
      const entry = entries.get(key);
      if (entry === undefined || expiresAt(entry) > now) continue;
      entries.delete(key);
      dropped(key, entry);
      deleted += 1;
    }
    return deleted;
  };
  return {
    entries,
    deleteExpired,
    /** Records in the heap: one per `set`, kept until due even when the key was deleted meanwhile. */
    get queued(): number {
      return heap.size;
    },
    /**
     * Stores an entry, first sweeping expired ones if the heap (never smaller than the map) has
     * grown enough: records of keys deleted early (a consumed challenge) leave with them.
     */
    set(key: string, value: V, now: number): void {
      if (heap.size >= sweepAtSize) {
        deleteExpired(now, Number.POSITIVE_INFINITY);
        sweepAtSize = Math.max(minimumSweepSize, heap.size * 2);
      }
      entries.set(key, value);
      heap.push(expiresAt(value), key);
    },
  };
}

const patchableUserFields = [
  "username",
  "usernameKey",
  "passwordHash",
  "roles",
  "disabled",
] as const satisfies (keyof UserPatch)[];

/** The fields of a user with those of a patch written over them: a patch names only the fields it changes. */
const patchedFields = (user: UserRecord, patch: UserPatch): Pick<UserRecord, "fields"> =>
  patch.fields === undefined ? {} : { fields: { ...user.fields, ...patch.fields } };

/** The key of a user's address when it is verified (EV-1's unique key), else null. */
const verifiedEmailKeyOf = (user: Pick<UserRecord, "email" | "emailVerified">) =>
  user.emailVerified && user.email !== null ? emailKeyOf(user.email) : null;

/** The writes of the other tables that {@link UserStore.createAccount} makes in the same step as the user's. */
interface OwnedTables {
  totp: { put(record: TotpRecord): void };
  recoveryCodes: { set(userId: string, hashes: string[]): void };
  passkeys: { has(id: string): boolean; insert(passkey: PasskeyRecord): void };
  identities: { has(identity: Pick<IdentityRecord, "provider" | "subject">): boolean; insert(identity: IdentityRecord): void };
}

/** Whether `keys` holds one key twice. */
const repeats = (keys: string[]) => new Set(keys).size !== keys.length;

function memoryUsers(owned: OwnedTables) {
  const byId = new Map<string, UserRecord>();
  const idByKey = new Map<string, string>();
  const idByVerifiedEmail = new Map<string, string>();
  /** Stores the user unless its id, username key or verified address is taken; whether it did. */
  const insert = (user: UserRecord) => {
    const emailKey = verifiedEmailKeyOf(user);
    if (byId.has(user.id) || idByKey.has(user.usernameKey)) return false;
    if (emailKey !== null && idByVerifiedEmail.has(emailKey)) return false;
    byId.set(user.id, frozenUser({ ...user, emailVerified: emailKey !== null }));
    idByKey.set(user.usernameKey, user.id);
    if (emailKey !== null) idByVerifiedEmail.set(emailKey, user.id);
    return true;
  };
  const store: UserStore = {
    async create(user) {
      return insert(user);
    },
    // Every check, then every write, with no await between: atomic within the process.
    async createAccount({ user, totp, recoveryCodeHashes, passkeys, identities }: NewAccount) {
      const passkeyIds = passkeys.map((passkey) => passkey.id);
      if (repeats(passkeyIds) || passkeyIds.some(owned.passkeys.has)) return false;
      if (repeats(identities.map(identityKey)) || identities.some(owned.identities.has)) return false;
      if (!insert(user)) return false;
      const userId = user.id;
      if (totp !== null) owned.totp.put({ ...totp, userId });
      owned.recoveryCodes.set(userId, recoveryCodeHashes);
      for (const passkey of passkeys) owned.passkeys.insert({ ...passkey, userId });
      for (const identity of identities) owned.identities.insert({ ...identity, userId });
      return true;
    },
    async findByVerifiedEmail(emailKey) {
      const id = idByVerifiedEmail.get(emailKey);
      return (id === undefined ? undefined : byId.get(id)) ?? null;
    },
    async setEmail(id, setting, now) {
      const user = byId.get(id);
      if (!user) return { outcome: "unknown" };
      const fields = { email: setting?.email ?? null, emailVerified: setting?.verified === true };
      const emailKey = verifiedEmailKeyOf(fields);
      const holder = emailKey === null ? undefined : idByVerifiedEmail.get(emailKey);
      if (holder !== undefined && holder !== id) return { outcome: "taken" };
      const previousKey = verifiedEmailKeyOf(user);
      if (previousKey !== null) idByVerifiedEmail.delete(previousKey);
      if (emailKey !== null) idByVerifiedEmail.set(emailKey, id);
      const updated = frozenWith(user, { ...fields, updatedAt: now });
      byId.set(id, updated);
      return { outcome: "set", user: updated };
    },
    async findById(id) {
      return byId.get(id) ?? null;
    },
    async findByUsernameKey(usernameKey) {
      const id = idByKey.get(usernameKey);
      return (id === undefined ? undefined : byId.get(id)) ?? null;
    },
    async update(id, patch, now) {
      const user = byId.get(id);
      if (!user) return null;
      const changes: UserPatch = Object.fromEntries(
        patchableUserFields.filter((field) => patch[field] !== undefined).map((field) => [field, copy(patch[field])]),
      );
      if (changes.usernameKey !== undefined && changes.usernameKey !== user.usernameKey) {
        if (idByKey.has(changes.usernameKey)) return null;
        idByKey.delete(user.usernameKey);
        idByKey.set(changes.usernameKey, id);
      }
      const updated = frozenUser({ ...user, ...changes, ...patchedFields(user, patch), updatedAt: now });
      byId.set(id, updated);
      return updated;
    },
    async replacePasswordHash(id, expected, next, now) {
      const user = byId.get(id);
      if (!user || user.passwordHash !== expected) return false;
      byId.set(id, frozenWith(user, { passwordHash: next, updatedAt: now }));
      return true;
    },
    async incrementTokenVersion(id, now) {
      const user = byId.get(id);
      if (!user) return null;
      byId.set(id, frozenWith(user, { tokenVersion: user.tokenVersion + 1, updatedAt: now }));
      return user.tokenVersion + 1;
    },
    async incrementTokenVersionsBySource(source, now) {
      let raised = 0;
      for (const user of byId.values()) {
        if (user.source !== source) continue;
        byId.set(user.id, frozenWith(user, { tokenVersion: user.tokenVersion + 1, updatedAt: now }));
        raised += 1;
      }
      return raised;
    },
    async list({ limit, afterUsernameKey, usernameKeyPrefix = "" }) {
      const keys = [...idByKey.keys()]
        .filter(
          (key) =>
            key.startsWith(usernameKeyPrefix) && (afterUsernameKey === undefined || compareCodePoints(key, afterUsernameKey) > 0),
        )
        .sort(compareCodePoints)
        .slice(0, limit);
      return keys.map((key) => byId.get(idByKey.get(key) as string) as UserRecord);
    },
  };
  return { store, size: () => byId.size, byId: (id: string) => byId.get(id) ?? null };
}

function memoryTotp() {
  const records = new Map<string, TotpRecord>();
  const store: TotpStore = {
    async get(userId) {
      const record = records.get(userId);
      return record ? copy(record) : null;
    },
    async putPending(record) {
      if (records.get(record.userId)?.enabled) return false;
      records.set(record.userId, copy({ ...record, enabled: false }));
      return true;
    },
    async enable(userId) {
      const record = records.get(userId);
      if (!record || record.enabled) return false;
      record.enabled = true;
      return true;
    },
    async remove(userId) {
      return records.delete(userId);
    },
    async advanceStep(userId, step) {
      const record = records.get(userId);
      if (!record || step <= record.lastUsedStep) return false;
      record.lastUsedStep = step;
      return true;
    },
  };
  return {
    store,
    enabled: (userId: string) => records.get(userId)?.enabled === true,
    put: (record: TotpRecord) => void records.set(record.userId, copy(record)),
  };
}

function memoryRecoveryCodes() {
  const sets = new Map<string, Set<string>>();
  const set = (userId: string, hashes: string[]) => void sets.set(userId, new Set(hashes));
  const store: RecoveryCodeStore = {
    async replace(userId, hashes) {
      set(userId, hashes);
    },
    async has(userId, hash) {
      return sets.get(userId)?.has(hash) ?? false;
    },
    async consume(userId, hash) {
      return sets.get(userId)?.delete(hash) ?? false;
    },
    async count(userId) {
      return sets.get(userId)?.size ?? 0;
    },
    async removeAll(userId) {
      sets.delete(userId);
    },
  };
  return { store, set };
}

/** What the session store reads of the other tables to rotate a session's refresh token, or find a token's state, in one step. */
interface RotationReads {
  user(id: string): UserRecord | null;
  totpEnabled(userId: string): boolean;
}

function memorySessions(reads: RotationReads) {
  const expiresAt = (record: { expiresAt: number }) => record.expiresAt;
  /** The ids of each user's sessions held in the session map: a session pruned from the map leaves it too. */
  const sessionIdsByUser = new Map<string, Set<string>>();
  const unindex = (id: string, session: SessionRecord) => {
    const ids = sessionIdsByUser.get(session.userId);
    ids?.delete(id);
    if (ids?.size === 0) sessionIdsByUser.delete(session.userId);
  };
  const sessionMap = expiringMap<SessionRecord>(expiresAt, unindex);
  const { entries: sessions, set: setSession } = sessionMap;
  const sessionsOf = (userId: string) => [...(sessionIdsByUser.get(userId) ?? [])].map((id) => sessions.get(id) as SessionRecord);
  const store: SessionStore = {
    async createSession(session) {
      const replaced = sessions.get(session.id);
      if (replaced) unindex(session.id, replaced);
      setSession(session.id, frozenCopy(session), session.createdAt);
      const ids = sessionIdsByUser.get(session.userId) ?? new Set<string>();
      ids.add(session.id);
      sessionIdsByUser.set(session.userId, ids);
    },
    async findSession(id) {
      return sessions.get(id) ?? null;
    },
    async findTokenState(id) {
      const session = sessions.get(id);
      return session === undefined ? null : { session, user: reads.user(session.userId) };
    },
    async revokeSession(id, now) {
      const session = sessions.get(id);
      if (!session || session.revokedAt !== null) return false;
      sessions.set(id, frozenWith(session, { revokedAt: now }));
      return true;
    },
    async setTokenVersion(id, tokenVersion) {
      const session = sessions.get(id);
      if (!session || session.revokedAt !== null) return false;
      sessions.set(id, frozenWith(session, { tokenVersion }));
      return true;
    },
    async revokeUserSessions(userId, now, exceptSessionId) {
      let revoked = 0;
      for (const session of sessionsOf(userId)) {
        if (session.revokedAt === null && session.id !== exceptSessionId) {
          sessions.set(session.id, frozenWith(session, { revokedAt: now }));
          revoked += 1;
        }
      }
      return revoked;
    },
    async revokeAll(now) {
      let revoked = 0;
      for (const [id, session] of sessions) {
        if (session.revokedAt === null && session.expiresAt > now) {
          sessions.set(id, frozenWith(session, { revokedAt: now }));
          revoked += 1;
        }
      }
      return revoked;
    },
    async listByUser(userId, now, limit) {
      return sessionsOf(userId)
        .filter((session) => session.revokedAt === null && session.expiresAt > now)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id))
        .slice(0, limit);
    },
    async rotateRefresh(rotation) {
      const session = sessions.get(rotation.sessionId);
      if (session === undefined) return { outcome: "refused" };
      const user = reads.user(session.userId);
      if (!mayRotate(session, user, rotation)) return { outcome: "refused" };
      sessions.set(session.id, Object.freeze(rotatedSession(session, rotation)));
      return { outcome: "rotated", session, user, totpEnabled: reads.totpEnabled(user.id) };
    },
  };
  return {
    store,
    sessionCount: () => sessions.size,
    deleteExpired: (now: number, limit: number) => sessionMap.deleteExpired(now, limit),
  };
}

/** Challenges; `deleteExpired` also prunes what `others` delete (sessions and tokens, counter windows), each as bounded. */
function memoryChallenges(others: ((now: number, limit: number) => number)[]) {
  const challengeMap = expiringMap<ChallengeRecord>((challenge) => challenge.expiresAt);
  const { entries: challenges, set } = challengeMap;
  const live = (id: string, kind: ChallengeKind, now: number) => {
    const challenge = challenges.get(id);
    return challenge && challenge.kind === kind && challenge.expiresAt > now ? challenge : undefined;
  };
  const store: ChallengeStore = {
    async put(challenge) {
      set(challenge.id, copy(challenge), challenge.createdAt);
    },
    async find(id, kind, now) {
      const challenge = live(id, kind, now);
      return challenge ? copy(challenge) : null;
    },
    async consume(id, kind, now) {
      const challenge = live(id, kind, now);
      if (!challenge) return null;
      challenges.delete(id);
      return challenge;
    },
    async takeAttempt(id, kind, limit, now) {
      const challenge = live(id, kind, now);
      if (!challenge || challenge.attempts >= limit) return null;
      challenge.attempts += 1;
      return copy(challenge);
    },
    async deleteExpired(now, limit) {
      return others.reduce((deleted, prune) => deleted + prune(now, limit), challengeMap.deleteExpired(now, limit));
    },
  };
  return { store, size: () => challenges.size };
}

function memoryCounters() {
  const windowMap = expiringMap<{ count: number; resetAt: number }>((window) => window.resetAt);
  const { entries: windows, set } = windowMap;
  const store: CounterStore = {
    async hit(key, limit, windowMs, now) {
      let window = windows.get(key);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + windowMs };
        set(key, window, now);
      }
      if (window.count >= limit) return { count: window.count, allowed: false, resetAt: window.resetAt };
      window.count += 1;
      return { count: window.count, allowed: true, resetAt: window.resetAt };
    },
    async peek(key, now) {
      const window = windows.get(key);
      return window && window.resetAt > now ? window.count : 0;
    },
    async reset(key) {
      windows.delete(key);
    },
  };
  return { store, size: () => windows.size, deleteExpired: windowMap.deleteExpired };
}

function memoryPasskeys() {
  const passkeys = new Map<string, PasskeyRecord>();
  const owned = (userId: string, id: string) => {
    const passkey = passkeys.get(id);
    return passkey?.userId === userId ? passkey : undefined;
  };
  const has = (id: string) => passkeys.has(id);
  const insert = (passkey: PasskeyRecord) => void passkeys.set(passkey.id, copy(passkey));
  const store: PasskeyStore = {
    async create(passkey) {
      if (has(passkey.id)) return false;
      insert(passkey);
      return true;
    },
    async findById(id) {
      const passkey = passkeys.get(id);
      return passkey ? copy(passkey) : null;
    },
    async listByUser(userId) {
      return [...passkeys.values()].filter((passkey) => passkey.userId === userId).map(copy);
    },
    async updateCounter(id, expectedCounter, counter, backupState, now) {
      const passkey = passkeys.get(id);
      if (!passkey || passkey.counter !== expectedCounter) return false;
      Object.assign(passkey, { counter, backupState, lastUsedAt: now });
      return true;
    },
    async rename(userId, id, label) {
      const passkey = owned(userId, id);
      if (!passkey) return false;
      passkey.label = label;
      return true;
    },
    async delete(userId, id) {
      return owned(userId, id) ? passkeys.delete(id) : false;
    },
    async deleteUnlessLast(userId, id) {
      if (!owned(userId, id)) return "not_found";
      const count = [...passkeys.values()].filter((passkey) => passkey.userId === userId).length;
      if (count < 2) return "last";
      passkeys.delete(id);
      return "deleted";
    },
  };
  return { store, has, insert };
}

/** The key of a link: its provider and subject, which no two links share (OA-7). */
const identityKey = ({ provider, subject }: Pick<IdentityRecord, "provider" | "subject">) => JSON.stringify([provider, subject]);

function memoryIdentities() {
  const identities = new Map<string, IdentityRecord>();
  const has = (identity: Pick<IdentityRecord, "provider" | "subject">) => identities.has(identityKey(identity));
  const insert = (identity: IdentityRecord) => void identities.set(identityKey(identity), copy(identity));
  const store: IdentityStore = {
    async link(identity) {
      if (has(identity)) return false;
      insert(identity);
      return true;
    },
    async find(provider, subject) {
      const identity = identities.get(identityKey({ provider, subject }));
      return identity ? copy(identity) : null;
    },
    async listByUser(userId) {
      return [...identities.values()].filter((identity) => identity.userId === userId).map(copy);
    },
    async findByVerifiedEmail(email) {
      return [...identities.values()].filter((identity) => identity.emailVerified && identity.email === email).map(copy);
    },
    async unlink(userId, provider, subject) {
      const key = identityKey({ provider, subject });
      return identities.get(key)?.userId === userId ? identities.delete(key) : false;
    },
  };
  return { store, has, insert };
}

function memorySettings(): SettingsStore {
  const values = new Map<string, unknown>();
  return {
    async get(key) {
      return values.has(key) ? copy(values.get(key)) : undefined;
    },
    async set(key, value) {
      values.set(key, copy(value));
    },
  };
}
