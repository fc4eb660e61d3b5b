import { createHash } from "node:crypto";
import {
  type AcceptanceResult,
  type ApiKeyRecord,
  type ApiKeyState,
  type ApiKeyStore,
  type ChallengeKind,
  type ChallengeRecord,
  type ChallengeStore,
  type CounterStore,
  type CredentialAddition,
  type DomainRecord,
  type IdentityRecord,
  type IdentityStore,
  type InvitationRecord,
  type MembershipChange,
  type MembershipRecord,
  type NewAccount,
  type OrganizationRecord,
  type OrganizationStore,
  type PasskeyRecord,
  type PasskeyStore,
  type RecoveryCodeStore,
  type RotationResult,
  type ServiceAccountCredentialRecord,
  type ServiceAccountRecord,
  type ServiceAccountStore,
  type SessionRecord,
  type SessionStore,
  type SettingsStore,
  type Storage,
  type TokenState,
  type TotpRecord,
  type TotpStore,
  type UserListQuery,
  type UserRecord,
  type UserStore,
  compareCodePoints,
  emailKeyOf,
  prefixUpperBound,
  storageUnavailable,
} from "@portcullis/core";
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ErrorReply,
  ReconnectStrategyError,
  type RedisClientType,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
} from "redis";

/** Options of {@link redisStorage}. */
export interface RedisStorageOptions {
  /** A connected client from `createClient()` of the `redis` package (node-redis). */
  client: RedisClientType;
  /** Put before every key, so that several applications can share one Redis. Default `"portcullis"`. */
  prefix?: string;
}

/**
 * Portcullis {@link Storage} over Redis: an example of writing your own adapter, proven with
 * `runStorageConformance` from `@portcullis/core/testing` (see `redis-storage.test.ts`).
 *
 * Each record is a hash whose fields hold the record's fields as JSON text. Every write that
 * depends on what is stored (consume a challenge, rotate a session's refresh token,
 * compare-and-set a counter) is one Lua script, which Redis runs with nothing in between (ST-1); writes that
 * depend on nothing are one `MULTI` transaction; reads are plain commands. Scripts never
 * decode JSON: Lua's cjson turns `[]` into `{}` and rounds numbers to 14 digits, so a script
 * only compares and sets the scalar fields it needs.
 *
 * Keys are `<prefix>:<type>:<ref>`, where the ref is the JSON text of the record's id (for an
 * identity, of `[provider, subject]`): a script builds an index key from a stored field
 * without decoding it, and no id can make one key type look like another.
 *
 * When Redis cannot be reached, a method throws `storageUnavailable(cause)` from
 * `@portcullis/core`: the request answers 50300 and may be retried. Any other error is a bug
 * and answers 50000.
 *
 * Written for one Redis server (or a primary with replicas). For Redis Cluster, put a hash tag
 * in the prefix (`"{portcullis}"`): a few scripts reach keys they find in an index, which
 * Cluster allows only within one slot.
 *
 * @example
 * ```ts
 * import { createClient } from "redis";
 * const client = createClient({ url: process.env.REDIS_URL });
 * client.on("error", (error) => console.error("redis", error));
 * await client.connect();
 * const auth = createAuth({ storage: redisStorage({ client }), … });
 * ```
 */
export function redisStorage({ client, prefix = "portcullis" }: RedisStorageOptions): Storage {
  const redis = { client, prefix, run: scriptRunner(client) };
  return {
    users: unavailableWhenUnreachable(redisUsers(redis)),
    totp: unavailableWhenUnreachable(redisTotp(redis)),
    recoveryCodes: unavailableWhenUnreachable(redisRecoveryCodes(redis)),
    sessions: unavailableWhenUnreachable(redisSessions(redis)),
    challenges: unavailableWhenUnreachable(redisChallenges(redis)),
    counters: unavailableWhenUnreachable(redisCounters(redis)),
    passkeys: unavailableWhenUnreachable(redisPasskeys(redis)),
    identities: unavailableWhenUnreachable(redisIdentities(redis)),
    settings: unavailableWhenUnreachable(redisSettings(redis)),
    organizations: unavailableWhenUnreachable(redisOrganizations(redis)),
    apiKeys: unavailableWhenUnreachable(redisApiKeys(redis)),
    serviceAccounts: unavailableWhenUnreachable(redisServiceAccounts(redis)),
  };
}

/**
 * Adds the users stored before `users.list` existed (this example's first version) to the
 * `username-order` index that `list` pages through; run it once after upgrading. Each user is
 * added by one script from the key it holds then, so it is safe while the service runs, and
 * running it again adds nothing. Returns how many users it added.
 *
 * @example
 * ```ts
 * await indexUsernames({ client, prefix: "portcullis" }); // 0 the second time
 * ```
 */
export async function indexUsernames({ client, prefix = "portcullis" }: RedisStorageOptions): Promise<number> {
  const run = scriptRunner(client);
  const usersPrefix = `${prefix}:users:`;
  let added = 0;
  for await (const keys of client.scanIterator({ MATCH: `${escapeGlob(usersPrefix)}*`, COUNT: 500 })) {
    for (const key of keys) {
      added += await run<number>(indexUsernameScript, [key, `${prefix}:username-order`], [key.slice(usersPrefix.length)]);
    }
  }
  return added;
}

/** Replies of a server that is there but cannot serve now: loading, a replica, a script running too long. */
const unavailableReplies = /^(LOADING|READONLY|MASTERDOWN|BUSY|NOREPLICAS|TRYAGAIN|CLUSTERDOWN)\b/;

const connectionErrors = [
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  // While Redis is down, node-redis queues commands and fails them after `commandTimeout` (5 s).
  TimeoutError,
];

/** Whether `error` says Redis could not be reached, rather than that a command was wrong. */
function isUnreachable(error: unknown): boolean {
  if (error instanceof ErrorReply) return unavailableReplies.test(error.message);
  return connectionErrors.some((kind) => error instanceof kind);
}

/** `store` with each method throwing `storageUnavailable(cause)` when Redis could not be reached. */
function unavailableWhenUnreachable<T extends object>(store: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await (method as (...args: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        throw isUnreachable(error) ? storageUnavailable(error) : error;
      }
    };
  }
  return wrapped as T;
}

interface Redis {
  client: RedisClientType;
  prefix: string;
  /** Runs a Lua script atomically (EVALSHA, or EVAL when Redis does not have it cached yet). */
  run: <T>(script: string, keys: string[], args: (string | number)[]) => Promise<T>;
}

/**
 * Redis deletes expiring records this long after their lifetime (`expiresAt - createdAt`).
 * A TTL counts the server's clock from the write, while whether a record is live is decided by
 * comparing its `expiresAt` with the `now` each call passes: the TTL only reclaims memory.
 */
const expiryGraceMs = 60_000;

const ttlOf = (record: { createdAt: number; expiresAt: number }) =>
  Math.ceil(Math.max(record.expiresAt - record.createdAt, 0) + expiryGraceMs);

/** A value as JSON text: how fields are stored, and how scripts get what they compare or set. */
const json = (value: unknown) => JSON.stringify(value);

/** The JSON text that names a record: in its key, in index sets, and as stored in fields that point at it. */
const ref = (...parts: string[]) => json(parts.length === 1 ? parts[0] : parts);

/** A record as hash fields, each holding its value as JSON text. */
function toFields(record: object): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record)
      .filter(([, value]) => value !== undefined)
      .map(([field, value]) => [field, json(value)]),
  );
}

/** A record as `field, value, …` script arguments. */
const toArgs = (record: object) => Object.entries(toFields(record)).flat();

/** The record stored as `fields` (HGETALL), or null when there is none. */
function fromFields<T>(fields: Record<string, string>): T | null {
  const entries = Object.entries(fields);
  if (entries.length === 0) return null;
  return Object.fromEntries(entries.map(([field, value]) => [field, JSON.parse(value)])) as T;
}

/** The record a script returned as HGETALL's `field, value, …` list, or null for an empty one. */
function fromPairs<T>(pairs: string[]): T | null {
  const fields: Record<string, string> = {};
  for (let index = 0; index + 1 < pairs.length; index += 2) fields[pairs[index] as string] = pairs[index + 1] as string;
  return fromFields<T>(fields);
}

function scriptRunner(client: RedisClientType): Redis["run"] {
  return async <T>(script: string, keys: string[], args: (string | number)[]) => {
    const options = { keys, arguments: args.map(String) };
    try {
      return (await client.evalSha(createHash("sha1").update(script).digest("hex"), options)) as T;
    } catch (error) {
      // Not cached yet (or flushed, or a failover): EVAL sends the source and caches it.
      if (!(error instanceof Error && error.message.startsWith("NOSCRIPT"))) throw error;
      return (await client.eval(script, options)) as T;
    }
  };
}

/** Reads the records whose refs are `refs` (members of an index set), skipping gone ones. */
async function readAll<T>({ client, prefix }: Redis, type: string, refs: string[]): Promise<T[]> {
  const records = await Promise.all(
    refs.map(async (member) => fromFields<T>(await client.hGetAll(`${prefix}:${type}:${member}`))),
  );
  return records.filter((record) => record !== null);
}

// Users: `users:<id>` hashes, `usernames:<usernameKey>` holding the user's ref, one set of
// user refs per source for incrementTokenVersionsBySource, and `username-order`, a sorted set
// whose members are `<usernameKey>\0<user ref>` (all with score 0, so Redis orders them by their
// bytes, which is code point order): `list` reads a page of it with ZRANGEBYLEX. Usernames hold no
// NUL (core refuses control characters), so the first NUL of a member ends its key.
// A verified address (EV-1): `verified-emails:<emailKeyOf(email)>` holding the user's ref, and
// `verified-email-of:<user ref>` naming that key, so a change of address frees the old one.

/**
 * The keys of what a user owns besides the user record: its TOTP factor, its recovery codes, its
 * passkeys and links with their indexes. The stores below and `users.createAccount` share them.
 */
function ownedKeys(prefix: string) {
  return {
    totp: (userId: string) => `${prefix}:totp:${ref(userId)}`,
    recoveryCodes: (userId: string) => `${prefix}:recovery-codes:${ref(userId)}`,
    passkey: (id: string) => `${prefix}:passkeys:${ref(id)}`,
    userPasskeys: (userId: string) => `${prefix}:user-passkeys:${ref(userId)}`,
    identity: (identityRef: string) => `${prefix}:identities:${identityRef}`,
    userIdentities: (userId: string) => `${prefix}:user-identities:${ref(userId)}`,
    identityEmail: (email: string) => `${prefix}:identity-emails:${ref(email)}`,
  };
}

/** The member of `username-order` for a user. */
const orderMember = (usernameKey: string, userRef: string) => `${usernameKey}\0${userRef}`;

const createUserScript = `
-- KEYS: the user, its username index, its source index, username-order, its verified-address
-- record, and its address's index when the address is verified.
-- ARGV: the user's ref, its username-order member, then field, value pairs.
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return 0 end
if KEYS[6] and redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[2])
if KEYS[6] then
  redis.call('SET', KEYS[6], ARGV[1])
  redis.call('SET', KEYS[5], KEYS[6])
end
return 1`;

const createAccountScript = `
-- KEYS: the user, its username index, its source index, username-order, its verified-address
-- record, its TOTP factor, its recovery codes, its passkey index, its identity index, then each
-- passkey, each identity, the verified-email sets of the identities that need one, and last the
-- address's index when the user's address is verified.
-- ARGV: the user's ref, its username-order member, the number of passkeys, of identities, '1' when
-- the address is verified; then the user's fields, the TOTP factor's (none: no factor) and the
-- code hashes, each list as its length and its items; then per passkey its ref and fields; then
-- per identity its ref, the KEYS index of its verified-email set (0: none) and its fields.
-- Every check, then every write: 0 and nothing written when a key is taken or repeated.
local passkeys, identities = tonumber(ARGV[3]), tonumber(ARGV[4])
local emailIndex = nil
if ARGV[5] == '1' then emailIndex = KEYS[#KEYS] end
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return 0 end
if emailIndex and redis.call('EXISTS', emailIndex) == 1 then return 0 end
local seen = {}
for index = 10, 9 + passkeys + identities do
  if seen[KEYS[index]] or redis.call('EXISTS', KEYS[index]) == 1 then return 0 end
  seen[KEYS[index]] = true
end
local at = 6
local function list()
  local length = tonumber(ARGV[at])
  local items = {unpack(ARGV, at + 1, at + length)}
  at = at + length + 1
  return items
end
redis.call('HSET', KEYS[1], unpack(list()))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[4], 0, ARGV[2])
if emailIndex then
  redis.call('SET', emailIndex, ARGV[1])
  redis.call('SET', KEYS[5], emailIndex)
end
local totp = list()
if #totp > 0 then redis.call('HSET', KEYS[6], unpack(totp)) end
local codes = list()
if #codes > 0 then redis.call('SADD', KEYS[7], unpack(codes)) end
for index = 1, passkeys do
  local passkey = ARGV[at]
  at = at + 1
  redis.call('HSET', KEYS[9 + index], unpack(list()))
  redis.call('SADD', KEYS[8], passkey)
end
for index = 1, identities do
  local identity, emailSet = ARGV[at], tonumber(ARGV[at + 1])
  at = at + 2
  redis.call('HSET', KEYS[9 + passkeys + index], unpack(list()))
  redis.call('SADD', KEYS[9], identity)
  if emailSet > 0 then redis.call('SADD', KEYS[emailSet], identity) end
end
return 1`;

/** A list as script arguments: its length, then its items. */
const listArgs = (items: string[]) => [items.length, ...items];

const setEmailScript = `
-- KEYS: the user, its verified-address record, and the new address's index when it is verified.
-- ARGV: the user's ref, then field, value pairs (email, emailVerified, updatedAt).
-- Returns 1 set, 0 no such user, -1 another user holds the address verified.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if KEYS[3] then
  local holder = redis.call('GET', KEYS[3])
  if holder and holder ~= ARGV[1] then return -1 end
end
local old = redis.call('GET', KEYS[2])
if old then redis.call('DEL', old) end
if KEYS[3] then
  redis.call('SET', KEYS[3], ARGV[1])
  redis.call('SET', KEYS[2], KEYS[3])
else
  redis.call('DEL', KEYS[2])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1`;

const updateUserScript = `
-- KEYS: the user, username-order, and the new username index when the patch has a usernameKey.
-- ARGV: prefix, the user's ref, the new username-order member (or ''), then field, value pairs (updatedAt included).
local current = redis.call('HGET', KEYS[1], 'usernameKey')
if not current then return {} end
if KEYS[3] then
  local old = ARGV[1] .. ':usernames:' .. current
  if KEYS[3] ~= old then
    if redis.call('EXISTS', KEYS[3]) == 1 then return {} end
    redis.call('DEL', old)
    redis.call('SET', KEYS[3], ARGV[2])
    -- The stored field is the key's JSON text; a JSON string decodes exactly (unlike arrays and numbers).
    redis.call('ZREM', KEYS[2], cjson.decode(current) .. '\\0' .. ARGV[2])
    redis.call('ZADD', KEYS[2], 0, ARGV[3])
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
return redis.call('HGETALL', KEYS[1])`;

const listUsersScript = `
-- KEYS: username-order. ARGV: prefix, ZRANGEBYLEX min and max, the limit.
-- Returns the users of the page, each as HGETALL's field, value list, read with the page at once.
local users = {}
for _, member in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))) do
  local user = redis.call('HGETALL', ARGV[1] .. ':users:' .. string.match(member, '%z(.*)$'))
  if #user > 0 then users[#users + 1] = user end
end
return users`;

const indexUsernameScript = `
-- KEYS: the user, username-order. ARGV: the user's ref. Adds the user's member if the user exists.
local key = redis.call('HGET', KEYS[1], 'usernameKey')
if not key then return 0 end
return redis.call('ZADD', KEYS[2], 0, cjson.decode(key) .. '\\0' .. ARGV[1])`;

/**
 * The ZRANGEBYLEX bounds of a page of `username-order`: members whose key starts with the
 * prefix (from the prefix to its {@link prefixUpperBound}), and is after `afterUsernameKey`
 * (every member of that key is below `<key>\u0001`, every later key's at or above it).
 */
function usernameOrderRange({ afterUsernameKey, usernameKeyPrefix }: UserListQuery): [string, string] {
  const starts = [usernameKeyPrefix || undefined, afterUsernameKey === undefined ? undefined : `${afterUsernameKey}\u0001`];
  const start = starts
    .filter((bound) => bound !== undefined)
    .sort(compareCodePoints)
    .at(-1);
  const upper = usernameKeyPrefix ? prefixUpperBound(usernameKeyPrefix) : null;
  return [start === undefined ? "-" : `[${start}`, upper === null ? "+" : `(${upper}`];
}

const replacePasswordHashScript = `
-- KEYS: the user. ARGV: the expected hash, the next hash, updatedAt (each as JSON text).
if redis.call('HGET', KEYS[1], 'passwordHash') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'passwordHash', ARGV[2], 'updatedAt', ARGV[3])
return 1`;

const incrementTokenVersionScript = `
-- KEYS: the user. ARGV: updatedAt.
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'updatedAt', ARGV[1])
return redis.call('HINCRBY', KEYS[1], 'tokenVersion', 1)`;

const incrementTokenVersionsBySourceScript = `
-- KEYS: the source's index. ARGV: prefix, updatedAt.
local raised = 0
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local user = ARGV[1] .. ':users:' .. ref
  if redis.call('EXISTS', user) == 1 then
    redis.call('HINCRBY', user, 'tokenVersion', 1)
    redis.call('HSET', user, 'updatedAt', ARGV[2])
    raised = raised + 1
  end
end
return raised`;

const patchableUserFields = ["username", "usernameKey", "passwordHash", "roles", "disabled"] as const;

/** Each additional user field as a hash field of its own, `field:<name>`: an update sets the ones it names and no other. */
const fieldPrefix = "field:";
const asHashFields = (fields: UserRecord["fields"]) =>
  Object.fromEntries(Object.entries(fields ?? {}).map(([name, value]) => [`${fieldPrefix}${name}`, value]));

/** A user as hash fields: its additional fields one hash field each. */
function userHashFields(user: UserRecord): object {
  const { fields, ...rest } = user;
  return { ...rest, ...asHashFields(fields) };
}

/** A stored user as core reads it: users stored before addresses existed have none; `field:*` hash fields are its `fields`. */
function withAddress(stored: UserRecord | null): UserRecord | null {
  if (!stored) return null;
  const user: Record<string, unknown> = {};
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (name.startsWith(fieldPrefix)) fields[name.slice(fieldPrefix.length)] = value;
    else user[name] = value;
  }
  const read = { ...(user as unknown as UserRecord), email: stored.email ?? null, emailVerified: stored.emailVerified === true };
  return Object.keys(fields).length === 0 ? read : { ...read, fields: fields as UserRecord["fields"] };
}

const pick = <T extends object, K extends keyof T>(record: T, fields: readonly K[]) =>
  Object.fromEntries(fields.filter((field) => record[field] !== undefined).map((field) => [field, record[field]]));

function redisUsers(redis: Redis): UserStore {
  const { client, prefix, run } = redis;
  const userKey = (id: string) => `${prefix}:users:${ref(id)}`;
  const usernameKey = (key: string) => `${prefix}:usernames:${ref(key)}`;
  const sourceKey = (source: string) => `${prefix}:users-by-source:${ref(source)}`;
  const orderKey = `${prefix}:username-order`;
  const addressOfKey = (id: string) => `${prefix}:verified-email-of:${ref(id)}`;
  const verifiedEmailKey = (emailKey: string) => `${prefix}:verified-emails:${ref(emailKey)}`;
  /** The index key of an address when it is verified (EV-1), else none. */
  const verifiedIndex = (email: string | null, verified: boolean) =>
    verified && email !== null ? [verifiedEmailKey(emailKeyOf(email))] : [];
  const findById = async (id: string) => withAddress(fromFields<UserRecord>(await client.hGetAll(userKey(id))));
  const owned = ownedKeys(prefix);
  return {
    async createAccount({ user, totp, recoveryCodeHashes, passkeys, identities }: NewAccount) {
      const userId = user.id;
      const index = verifiedIndex(user.email, user.emailVerified);
      const identityRefs = identities.map((identity) => ref(identity.provider, identity.subject));
      const keys = [
        userKey(userId),
        usernameKey(user.usernameKey),
        sourceKey(user.source),
        orderKey,
        addressOfKey(userId),
        owned.totp(userId),
        owned.recoveryCodes(userId),
        owned.userPasskeys(userId),
        owned.userIdentities(userId),
        ...passkeys.map((passkey) => owned.passkey(passkey.id)),
        ...identityRefs.map(owned.identity),
      ];
      const identityArgs = identities.flatMap((identity, at) => {
        const emailSet = identity.emailVerified && identity.email !== null ? keys.push(owned.identityEmail(identity.email)) : 0;
        return [identityRefs[at] as string, emailSet, ...listArgs(toArgs({ ...identity, userId }))];
      });
      keys.push(...index);
      const args = [
        ref(userId),
        orderMember(user.usernameKey, ref(userId)),
        passkeys.length,
        identities.length,
        index.length > 0 ? "1" : "0",
        ...listArgs(toArgs({ ...userHashFields(user), emailVerified: index.length > 0 })),
        ...listArgs(totp === null ? [] : toArgs({ ...totp, userId })),
        ...listArgs(recoveryCodeHashes),
        ...passkeys.flatMap((passkey) => [ref(passkey.id), ...listArgs(toArgs({ ...passkey, userId }))]),
        ...identityArgs,
      ];
      return (await run<number>(createAccountScript, keys, args)) === 1;
    },
    async create(user) {
      const index = verifiedIndex(user.email, user.emailVerified);
      const keys = [
        userKey(user.id),
        usernameKey(user.usernameKey),
        sourceKey(user.source),
        orderKey,
        addressOfKey(user.id),
        ...index,
      ];
      const stored = { ...userHashFields(user), emailVerified: index.length > 0 };
      const args = [ref(user.id), orderMember(user.usernameKey, ref(user.id)), ...toArgs(stored)];
      return (await run<number>(createUserScript, keys, args)) === 1;
    },
    findById,
    async findByVerifiedEmail(emailKey) {
      const userRef = await client.get(verifiedEmailKey(emailKey));
      if (userRef === null) return null;
      const user = withAddress(fromFields<UserRecord>(await client.hGetAll(`${prefix}:users:${userRef}`)));
      // A change of address may have come between the two reads: match the key asked for.
      return user?.emailVerified && user.email !== null && emailKeyOf(user.email) === emailKey ? user : null;
    },
    async setEmail(id, setting, now) {
      const email = setting?.email ?? null;
      const index = verifiedIndex(email, setting?.verified === true);
      const fields = { email, emailVerified: index.length > 0, updatedAt: now };
      const outcome = await run<number>(setEmailScript, [userKey(id), addressOfKey(id), ...index], [ref(id), ...toArgs(fields)]);
      if (outcome === -1) return { outcome: "taken" };
      const user = outcome === 1 ? await findById(id) : null;
      return user ? { outcome: "set", user } : { outcome: "unknown" };
    },
    async findByUsernameKey(key) {
      const userRef = await client.get(usernameKey(key));
      if (userRef === null) return null;
      const user = withAddress(fromFields<UserRecord>(await client.hGetAll(`${prefix}:users:${userRef}`)));
      // A rename may have come between the two reads: match the key asked for (ST-2).
      return user?.usernameKey === key ? user : null;
    },
    async update(id, patch, now) {
      // Only the patchable fields, whatever else the object holds: never the id or token version.
      const changes = { ...pick(patch, patchableUserFields), ...asHashFields(patch.fields), updatedAt: now };
      const renamed = patch.usernameKey !== undefined;
      const keys = [userKey(id), orderKey, ...(renamed ? [usernameKey(patch.usernameKey as string)] : [])];
      const member = renamed ? orderMember(patch.usernameKey as string, ref(id)) : "";
      return withAddress(fromPairs<UserRecord>(await run(updateUserScript, keys, [prefix, ref(id), member, ...toArgs(changes)])));
    },
    async replacePasswordHash(id, expected, next, now) {
      return (await run<number>(replacePasswordHashScript, [userKey(id)], [json(expected), json(next), json(now)])) === 1;
    },
    async incrementTokenVersion(id, now) {
      const version = await run<number>(incrementTokenVersionScript, [userKey(id)], [json(now)]);
      return version === -1 ? null : version;
    },
    incrementTokenVersionsBySource: (source, now) =>
      run<number>(incrementTokenVersionsBySourceScript, [sourceKey(source)], [prefix, json(now)]),
    async list(query) {
      const [min, max] = usernameOrderRange(query);
      const pages = await run<string[][]>(listUsersScript, [orderKey], [prefix, min, max, query.limit]);
      return pages.map((pairs) => withAddress(fromPairs<UserRecord>(pairs)) as UserRecord);
    },
  };
}

// TOTP factors: `totp:<userId>` hashes.

const putPendingScript = `
-- KEYS: the factor. ARGV: field, value pairs of the pending factor.
if redis.call('HGET', KEYS[1], 'enabled') == 'true' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

const enableScript = `
-- KEYS: the factor.
if redis.call('HGET', KEYS[1], 'enabled') ~= 'false' then return 0 end
redis.call('HSET', KEYS[1], 'enabled', 'true')
return 1`;

const advanceStepScript = `
-- KEYS: the factor. ARGV: the step (TOTP-4: accepted only above the last used one).
local last = redis.call('HGET', KEYS[1], 'lastUsedStep')
if not last or tonumber(ARGV[1]) <= tonumber(last) then return 0 end
redis.call('HSET', KEYS[1], 'lastUsedStep', ARGV[1])
return 1`;

const replaceSecretScript = `
-- KEYS: the factor. ARGV: the secret expected and the next one, as JSON text (KR-2: only while it is still the one read).
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'secret', ARGV[2])
return 1`;

/** A sealed secret as the JSON text a factor's `secret` field holds: `keyId` first, as the secret box makes it. */
const secretText = ({ keyId, sealed }: TotpRecord["secret"]) => json({ keyId, sealed });

function redisTotp({ client, prefix, run }: Redis): TotpStore {
  const totpKey = ownedKeys(prefix).totp;
  return {
    get: async (userId) => fromFields<TotpRecord>(await client.hGetAll(totpKey(userId))),
    putPending: async (record) =>
      (await run<number>(putPendingScript, [totpKey(record.userId)], toArgs({ ...record, enabled: false }))) === 1,
    enable: async (userId) => (await run<number>(enableScript, [totpKey(userId)], [])) === 1,
    remove: async (userId) => (await client.del(totpKey(userId))) === 1,
    advanceStep: async (userId, step) => (await run<number>(advanceStepScript, [totpKey(userId)], [json(step)])) === 1,
    replaceSecret: async (userId, expected, next) =>
      (await run<number>(replaceSecretScript, [totpKey(userId)], [secretText(expected), secretText(next)])) === 1,
  };
}

// Recovery codes: one set of hashes per user. SREM answers 1 to exactly one caller (RC-3).

function redisRecoveryCodes({ client, prefix }: Redis): RecoveryCodeStore {
  const codesKey = ownedKeys(prefix).recoveryCodes;
  return {
    async replace(userId, hashes) {
      const transaction = client.multi().del(codesKey(userId));
      if (hashes.length > 0) transaction.sAdd(codesKey(userId), hashes);
      await transaction.exec();
    },
    has: async (userId, hash) => (await client.sIsMember(codesKey(userId), hash)) === 1,
    consume: async (userId, hash) => (await client.sRem(codesKey(userId), hash)) === 1,
    count: (userId) => client.sCard(codesKey(userId)),
    async removeAll(userId) {
      await client.del(codesKey(userId));
    },
  };
}

// Sessions: `sessions:<id>` hashes, holding their current refresh token's hash, their active
// organization's ref (or null) and their impersonator's id (or null), and a sorted set of each user's session refs by expiry. Sessions
// expire in Redis after their lifetime. A session made with an organization active joins that
// organization's `org-sessions` set (see Organizations below).

const updateLiveSessionScript = `
-- KEYS: the session. ARGV: field, value pairs. Changes the session only while it is not revoked.
if redis.call('HGET', KEYS[1], 'revokedAt') ~= 'null' then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

const revokeUserSessionsScript = `
-- KEYS: the user's session index. ARGV: prefix, revokedAt, the ref of the session kept (or '').
local revoked = 0
for _, ref in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local revokedAt = redis.call('HGET', ARGV[1] .. ':sessions:' .. ref, 'revokedAt')
  if not revokedAt then
    redis.call('ZREM', KEYS[1], ref)
  elseif revokedAt == 'null' and ref ~= ARGV[3] then
    redis.call('HSET', ARGV[1] .. ':sessions:' .. ref, 'revokedAt', ARGV[2])
    revoked = revoked + 1
  end
end
return revoked`;

const revokeLiveSessionsScript = `
-- KEYS: sessions. ARGV: now. Revokes those not revoked that end after now (STUP-6); returns how many.
local revoked = 0
for _, key in ipairs(KEYS) do
  local expiresAt = redis.call('HGET', key, 'expiresAt')
  if redis.call('HGET', key, 'revokedAt') == 'null' and expiresAt and tonumber(expiresAt) > tonumber(ARGV[1]) then
    redis.call('HSET', key, 'revokedAt', ARGV[1])
    revoked = revoked + 1
  end
end
return revoked`;

const rotateRefreshScript = `
-- KEYS: the session. ARGV: prefix, the presented hash, now, now + idleMs, then field, value pairs
-- (refreshHash, refreshGeneration, lastUsedAt, userAgent, address), each as JSON text.
-- One refresh's one write (RT-3): only while the session holds the presented hash, is not revoked,
-- and neither it nor its token has expired (RT-4), and its user is there, enabled, at the
-- session's token version (TV-2). Returns {} when it writes nothing, else the session and the user
-- as they were before the write (field, value lists) and 1 when the user's TOTP is enabled, else 0.
local session = redis.call('HGETALL', KEYS[1])
local s = redis.call('HMGET', KEYS[1], 'userId', 'refreshHash', 'revokedAt', 'expiresAt', 'refreshExpiresAt', 'tokenVersion')
if not s[1] or s[2] ~= ARGV[2] or s[3] ~= 'null' then return {} end
local now = tonumber(ARGV[3])
if tonumber(s[4]) <= now or not s[5] or tonumber(s[5]) <= now then return {} end
local userKey = ARGV[1] .. ':users:' .. s[1]
local u = redis.call('HMGET', userKey, 'disabled', 'tokenVersion')
if u[1] ~= 'false' or u[2] ~= s[6] then return {} end
-- The idle expiry never passes the absolute one (RT-4); both are kept as the text they came as.
local refreshExpiresAt = ARGV[4]
if tonumber(s[4]) < tonumber(ARGV[4]) then refreshExpiresAt = s[4] end
redis.call('HSET', KEYS[1], 'refreshExpiresAt', refreshExpiresAt, unpack(ARGV, 5))
local totpEnabled = 0
if redis.call('HGET', ARGV[1] .. ':totp:' .. s[1], 'enabled') == 'true' then totpEnabled = 1 end
return {session, redis.call('HGETALL', userKey), totpEnabled}`;

/**
 * A session as stored, with the fields sessions stored before they existed lack: last used, and
 * its methods proven, when it began, from nowhere known; and no refresh token (an earlier version
 * of this example kept them apart: such a session cannot be refreshed, so its user signs in again);
 * no active organization, and no impersonator.
 */
function withUseFields(session: SessionRecord | null): SessionRecord | null {
  if (session === null) return null;
  return {
    ...session,
    authTime: session.authTime ?? session.createdAt,
    lastUsedAt: session.lastUsedAt ?? session.createdAt,
    userAgent: session.userAgent ?? null,
    address: session.address ?? null,
    refreshHash: session.refreshHash ?? null,
    refreshGeneration: session.refreshGeneration ?? 0,
    refreshExpiresAt: session.refreshExpiresAt ?? session.createdAt,
    activeOrgId: session.activeOrgId ?? null,
    impersonatorId: session.impersonatorId ?? null,
  };
}

const tokenStateScript = `
-- KEYS: the session. ARGV: prefix. The session's user, revokedAt, expiresAt and active
-- organization, its user's tokenVersion and disabled, and the user's roles in that organization
-- (false for each that is not there), in one read; {} for an unknown session.
local s = redis.call('HMGET', KEYS[1], 'userId', 'revokedAt', 'expiresAt', 'activeOrgId')
if not s[1] then return {} end
local u = redis.call('HMGET', ARGV[1] .. ':users:' .. s[1], 'tokenVersion', 'disabled')
local roles = false
if s[4] and s[4] ~= 'null' then roles = redis.call('HGET', ARGV[1] .. ':memberships:' .. s[4] .. ':' .. s[1], 'roles') end
return {s[1], s[2], s[3], s[4] or 'null', u[1] or false, u[2] or false, roles}`;

/** What {@link tokenStateScript} answered, as a {@link TokenState}. */
function toTokenState(reply: (string | null)[]): TokenState | null {
  if (reply.length === 0) return null;
  const [userId, revokedAt, expiresAt, activeOrgId, tokenVersion, disabled, roles] = reply.map((field) =>
    field === null || field === undefined ? null : JSON.parse(field),
  );
  return {
    session: { userId, revokedAt, expiresAt, activeOrgId },
    user: tokenVersion === null ? null : { tokenVersion, disabled: disabled === true },
    orgRoles: roles,
  };
}

function redisSessions(redis: Redis): SessionStore {
  const { client, prefix, run } = redis;
  const sessionKey = (id: string) => `${prefix}:sessions:${ref(id)}`;
  const userSessionsKey = (userId: string) => `${prefix}:user-sessions:${ref(userId)}`;
  return {
    async createSession(session) {
      const key = sessionKey(session.id);
      const index = userSessionsKey(session.userId);
      const transaction = client
        .multi()
        .del(key)
        .hSet(
          key,
          toFields({ ...session, activeOrgId: session.activeOrgId ?? null, impersonatorId: session.impersonatorId ?? null }),
        )
        .pExpire(key, ttlOf(session))
        // Drops the refs of sessions that had expired by the time this one began.
        .zRemRangeByScore(index, "-inf", session.createdAt)
        .zAdd(index, { score: session.expiresAt, value: ref(session.id) });
      const { activeOrgId } = session;
      if (activeOrgId != null) transaction.sAdd(`${prefix}:org-sessions:${ref(activeOrgId)}`, ref(session.id));
      await transaction.exec();
    },
    findSession: async (id) => withUseFields(fromFields<SessionRecord>(await client.hGetAll(sessionKey(id)))),
    findTokenState: async (id) => toTokenState(await run<(string | null)[]>(tokenStateScript, [sessionKey(id)], [prefix])),
    revokeSession: async (id, now) =>
      (await run<number>(updateLiveSessionScript, [sessionKey(id)], ["revokedAt", json(now)])) === 1,
    setTokenVersion: async (id, tokenVersion) =>
      (await run<number>(updateLiveSessionScript, [sessionKey(id)], ["tokenVersion", json(tokenVersion)])) === 1,
    revokeUserSessions: (userId, now, exceptSessionId) =>
      run<number>(
        revokeUserSessionsScript,
        [userSessionsKey(userId)],
        [prefix, json(now), exceptSessionId === undefined ? "" : ref(exceptSessionId)],
      ),
    // Every session key, a page of SCAN at a time, each page one script: no script runs long on a
    // large store. A key SCAN returns twice is revoked once: the script checks revokedAt.
    async revokeAll(now) {
      let revoked = 0;
      for await (const keys of client.scanIterator({ MATCH: `${escapeGlob(prefix)}:sessions:*`, COUNT: 1000 })) {
        if (keys.length > 0) revoked += await run<number>(revokeLiveSessionsScript, keys, [json(now)]);
      }
      return revoked;
    },
    async listByUser(userId, now, limit) {
      // The index is scored by expiry: only sessions that end after now are read.
      const refs = await client.zRangeByScore(userSessionsKey(userId), `(${now}`, "+inf");
      const sessions = (await readAll<SessionRecord>(redis, "sessions", refs)).map(
        (session) => withUseFields(session) as SessionRecord,
      );
      return sessions
        .filter((session) => session.userId === userId && session.revokedAt === null && session.expiresAt > now)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id))
        .slice(0, limit);
    },
    async rotateRefresh({ sessionId, hash, now, nextHash, nextGeneration, idleMs, use }): Promise<RotationResult> {
      const next = { refreshHash: nextHash, refreshGeneration: nextGeneration, lastUsedAt: now, ...use };
      const args = [prefix, json(hash), json(now), json(now + idleMs), ...toArgs(next)];
      const reply = await run<[string[], string[], number] | []>(rotateRefreshScript, [sessionKey(sessionId)], args);
      if (reply.length === 0) return { outcome: "refused" };
      const [session, user, totpEnabled] = reply;
      return {
        outcome: "rotated",
        session: withUseFields(fromPairs<SessionRecord>(session)) as SessionRecord,
        user: withAddress(fromPairs<UserRecord>(user)) as UserRecord,
        totpEnabled: totpEnabled === 1,
      };
    },
  };
}

// Challenges: `challenges:<id>` hashes, expiring in Redis after their lifetime. A challenge is
// live for a call when its kind matches (ST-2) and its expiresAt is after the call's `now`.

const liveChallenge = `
-- KEYS: the challenge. ARGV: its kind, now, then what the script adds.
local live = redis.call('HGET', KEYS[1], 'kind') == ARGV[1]
  and tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) > tonumber(ARGV[2])
if not live then return {} end`;

const consumeChallengeScript = `${liveChallenge}
local challenge = redis.call('HGETALL', KEYS[1])
redis.call('DEL', KEYS[1])
return challenge`;

const takeAttemptScript = `${liveChallenge}
-- ARGV[3]: the limit of attempts.
if tonumber(redis.call('HGET', KEYS[1], 'attempts')) >= tonumber(ARGV[3]) then return {} end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
return redis.call('HGETALL', KEYS[1])`;

const deleteExpiredChallengesScript = `
-- KEYS: challenges. ARGV: now, the most to delete. Deletes those expired at now and returns how many.
local deleted = 0
for _, challenge in ipairs(KEYS) do
  if deleted >= tonumber(ARGV[2]) then break end
  local expiresAt = redis.call('HGET', challenge, 'expiresAt')
  if expiresAt and tonumber(expiresAt) <= tonumber(ARGV[1]) then
    redis.call('DEL', challenge)
    deleted = deleted + 1
  end
end
return deleted`;

/** `text` with the characters that mean something in a SCAN MATCH pattern escaped. */
export const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, "\\$&");

function redisChallenges({ client, prefix, run }: Redis): ChallengeStore {
  const challengeKey = (id: string) => `${prefix}:challenges:${ref(id)}`;
  const isLive = (challenge: ChallengeRecord | null, kind: ChallengeKind, now: number) =>
    challenge !== null && challenge.kind === kind && challenge.expiresAt > now;
  return {
    async put(challenge) {
      const key = challengeKey(challenge.id);
      await client.multi().del(key).hSet(key, toFields(challenge)).pExpire(key, ttlOf(challenge)).exec();
    },
    async find(id, kind, now) {
      const challenge = fromFields<ChallengeRecord>(await client.hGetAll(challengeKey(id)));
      return isLive(challenge, kind, now) ? challenge : null;
    },
    consume: async (id, kind, now) =>
      fromPairs<ChallengeRecord>(await run(consumeChallengeScript, [challengeKey(id)], [json(kind), json(now)])),
    takeAttempt: async (id, kind, limit, now) =>
      fromPairs<ChallengeRecord>(await run(takeAttemptScript, [challengeKey(id)], [json(kind), json(now), json(limit)])),
    // Redis's own expiry removes challenges in time; this is for the callers that sweep.
    async deleteExpired(now, limit) {
      let deleted = 0;
      for await (const keys of client.scanIterator({ MATCH: `${escapeGlob(prefix)}:challenges:*`, COUNT: 100 })) {
        if (keys.length > 0)
          deleted += await run<number>(deleteExpiredChallengesScript, keys, [json(now), json(limit - deleted)]);
        if (deleted >= limit) break;
      }
      return deleted;
    },
  };
}

// Throttling counters: `counters:<key>` hashes of count and resetAt, expiring with their window.

const hitScript = `
-- KEYS: the counter. ARGV: now, limit, resetAt of a window starting now, its TTL.
-- Returns the count, 1 if this hit was counted (else 0), and resetAt.
local resetAt = redis.call('HGET', KEYS[1], 'resetAt')
if not resetAt or tonumber(resetAt) <= tonumber(ARGV[1]) then
  resetAt = ARGV[3]
  redis.call('HSET', KEYS[1], 'count', 0, 'resetAt', resetAt)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if count >= tonumber(ARGV[2]) then return {count, 0, resetAt} end
return {redis.call('HINCRBY', KEYS[1], 'count', 1), 1, resetAt}`;

function redisCounters({ client, prefix, run }: Redis): CounterStore {
  const counterKey = (key: string) => `${prefix}:counters:${ref(key)}`;
  return {
    async hit(key, limit, windowMs, now) {
      const args = [now, limit, now + windowMs, windowMs + expiryGraceMs];
      const [count, allowed, resetAt] = await run<[number, number, string]>(hitScript, [counterKey(key)], args);
      return { count, allowed: allowed === 1, resetAt: Number(resetAt) };
    },
    async peek(key, now) {
      const [count, resetAt] = await client.hmGet(counterKey(key), ["count", "resetAt"]);
      return count != null && resetAt != null && Number(resetAt) > now ? Number(count) : 0;
    },
    async reset(key) {
      await client.del(counterKey(key));
    },
  };
}

// Passkeys: `passkeys:<id>` hashes and a set of each user's passkey refs.

const insertIndexedScript = `
-- KEYS: the record, then the sets that index it. ARGV: its ref, then field, value pairs.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
for index = 2, #KEYS do redis.call('SADD', KEYS[index], ARGV[1]) end
return 1`;

const updateCounterScript = `
-- KEYS: the passkey. ARGV: the expected counter, the new counter, backupState, lastUsedAt (WA-5).
if redis.call('HGET', KEYS[1], 'counter') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'counter', ARGV[2], 'backupState', ARGV[3], 'lastUsedAt', ARGV[4])
return 1`;

const renamePasskeyScript = `
-- KEYS: the passkey. ARGV: its owner, the label.
if redis.call('HGET', KEYS[1], 'userId') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'label', ARGV[2])
return 1`;

const deletePasskeyScript = `
-- KEYS: the passkey, the owner's passkey index. ARGV: its owner, its ref, 'keep-last' or ''.
if redis.call('HGET', KEYS[1], 'userId') ~= ARGV[1] then return 'not_found' end
if ARGV[3] == 'keep-last' and redis.call('SCARD', KEYS[2]) < 2 then return 'last' end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 'deleted'`;

/** A stored passkey as the store hands it out: without a user handle (as stored before there was one), null. */
const withUserHandle = (passkey: PasskeyRecord): PasskeyRecord => ({ ...passkey, userHandle: passkey.userHandle ?? null });

function redisPasskeys(redis: Redis): PasskeyStore {
  const { client, prefix, run } = redis;
  const { passkey: passkeyKey, userPasskeys: userPasskeysKey } = ownedKeys(prefix);
  const remove = (userId: string, id: string, mode: "keep-last" | "") =>
    run<"deleted" | "last" | "not_found">(
      deletePasskeyScript,
      [passkeyKey(id), userPasskeysKey(userId)],
      [ref(userId), ref(id), mode],
    );
  return {
    create: async (passkey) =>
      (await run<number>(
        insertIndexedScript,
        [passkeyKey(passkey.id), userPasskeysKey(passkey.userId)],
        [ref(passkey.id), ...toArgs(passkey)],
      )) === 1,
    async findById(id) {
      const passkey = fromFields<PasskeyRecord>(await client.hGetAll(passkeyKey(id)));
      return passkey === null ? null : withUserHandle(passkey);
    },
    async listByUser(userId) {
      const passkeys = await readAll<PasskeyRecord>(redis, "passkeys", await client.sMembers(userPasskeysKey(userId)));
      return passkeys.filter((passkey) => passkey.userId === userId).map(withUserHandle);
    },
    updateCounter: async (id, expectedCounter, counter, backupState, now) =>
      (await run<number>(
        updateCounterScript,
        [passkeyKey(id)],
        [json(expectedCounter), json(counter), json(backupState), json(now)],
      )) === 1,
    rename: async (userId, id, label) =>
      (await run<number>(renamePasskeyScript, [passkeyKey(id)], [ref(userId), json(label)])) === 1,
    delete: async (userId, id) => (await remove(userId, id, "")) === "deleted",
    deleteUnlessLast: (userId, id) => remove(userId, id, "keep-last"),
  };
}

// Identities: `identities:["<provider>","<subject>"]` hashes, a set of each user's identity
// refs, and a set per verified email.

const unlinkScript = `
-- KEYS: the identity, the owner's identity index. ARGV: prefix, its owner, its ref.
if redis.call('HGET', KEYS[1], 'userId') ~= ARGV[2] then return 0 end
redis.call('SREM', ARGV[1] .. ':identity-emails:' .. redis.call('HGET', KEYS[1], 'email'), ARGV[3])
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[3])
return 1`;

function redisIdentities(redis: Redis): IdentityStore {
  const { client, prefix, run } = redis;
  const { identity: identityKey, userIdentities: userIdentitiesKey, identityEmail: verifiedEmailKey } = ownedKeys(prefix);
  return {
    async link(identity) {
      const identityRef = ref(identity.provider, identity.subject);
      const keys = [identityKey(identityRef), userIdentitiesKey(identity.userId)];
      if (identity.emailVerified && identity.email !== null) keys.push(verifiedEmailKey(identity.email));
      return (await run<number>(insertIndexedScript, keys, [identityRef, ...toArgs(identity)])) === 1;
    },
    find: async (provider, subject) => fromFields<IdentityRecord>(await client.hGetAll(identityKey(ref(provider, subject)))),
    async listByUser(userId) {
      const identities = await readAll<IdentityRecord>(redis, "identities", await client.sMembers(userIdentitiesKey(userId)));
      return identities.filter((identity) => identity.userId === userId);
    },
    async findByVerifiedEmail(email) {
      const identities = await readAll<IdentityRecord>(redis, "identities", await client.sMembers(verifiedEmailKey(email)));
      return identities.filter((identity) => identity.emailVerified && identity.email === email);
    },
    async unlink(userId, provider, subject) {
      const identityRef = ref(provider, subject);
      const keys = [identityKey(identityRef), userIdentitiesKey(userId)];
      return (await run<number>(unlinkScript, keys, [prefix, ref(userId), identityRef])) === 1;
    },
  };
}

// Settings: `settings:<key>` strings holding the value as JSON.

const replaceSettingScript = `
-- KEYS: the setting. ARGV: the value expected and the next one, as JSON text (KR-2).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

function redisSettings({ client, prefix, run }: Redis): SettingsStore {
  const settingKey = (key: string) => `${prefix}:settings:${ref(key)}`;
  return {
    async get(key) {
      const value = await client.get(settingKey(key));
      return value === null ? undefined : JSON.parse(value);
    },
    async set(key, value) {
      if (value === undefined) await client.del(settingKey(key));
      else await client.set(settingKey(key), JSON.stringify(value));
    },
    replace: async (key, expected, value) =>
      (await run<number>(replaceSettingScript, [settingKey(key)], [json(expected), json(value)])) === 1,
  };
}

// Organizations: `orgs:<id>` hashes, `org-slugs:<slug>` holding the organization's ref, and
// `org-order`, a sorted set of the ids (score 0: Redis orders them by their bytes, code point
// order) that `listOrganizations` pages through. A membership is `memberships:<org ref>:<user ref>`,
// indexed by `org-members:<org ref>` (a set of user refs, which the scripts read), by
// `org-member-order:<org ref>` (the user ids, for `listMembers`) and by `user-orgs:<user ref>`
// (a set of organization refs). Invitations: `invitations:<id>` hashes, `invitation-tokens:<hash>`
// holding the ref of the invitation whose current secret it is, and a set per organization.
// Domains: `org-domains:<org ref>:<domain ref>` hashes, a set of each organization's domain refs,
// and `verified-domains:<domain ref>` holding the ref of the one organization that has it verified
// (OR-11). `org-sessions:<org ref>` holds the refs of the sessions it was made active in, which
// the scripts that clear it check one by one (a session that changed since keeps its own).
//
// A member's roles are a JSON array of strings; a script tells whether they hold the owner role
// by looking for `,"<role>",` in `,<the array's items>,`, which no other item can hold (a quote
// inside an item is escaped).

/** Lua: whether the JSON array of role strings `roles` holds the role whose JSON text is `quoted`. */
const holdsRole = `
local function holds(roles, quoted)
  return roles ~= false and roles ~= nil and string.find(',' .. string.sub(roles, 2, -2) .. ',', ',' .. quoted .. ',', 1, true) ~= nil
end`;

/** Lua: clears the organization `orgRef` from the sessions whose refs are `refs` that still have it; how many. */
const clearSessions = `
local function clearSessions(prefix, refs, orgRef)
  local cleared = 0
  for _, sessionRef in ipairs(refs) do
    local key = prefix .. ':sessions:' .. sessionRef
    if redis.call('HGET', key, 'activeOrgId') == orgRef then
      redis.call('HSET', key, 'activeOrgId', 'null')
      cleared = cleared + 1
    end
  end
  return cleared
end`;

const createOrganizationScript = `
-- KEYS: the organization, its slug's index, org-order, the owner's membership, the organization's
-- member set, its member order, the owner's organizations. ARGV: the organization's id, its ref,
-- the owner's id, its ref, the number of the organization's field, value items, then those items,
-- then the membership's.
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return 0 end
local split = 5 + tonumber(ARGV[5])
redis.call('HSET', KEYS[1], unpack(ARGV, 6, split))
redis.call('SET', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
redis.call('HSET', KEYS[4], unpack(ARGV, split + 1))
redis.call('SADD', KEYS[5], ARGV[4])
redis.call('ZADD', KEYS[6], 0, ARGV[3])
redis.call('SADD', KEYS[7], ARGV[2])
return 1`;

const updateOrganizationScript = `
-- KEYS: the organization. ARGV: prefix, its ref, the new slug's JSON text (or ''), then field, value
-- pairs. Returns the organization after the change, 'slug_taken' with nothing written, or {}.
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local old = redis.call('HGET', KEYS[1], 'slug')
if ARGV[3] ~= '' and ARGV[3] ~= old then
  local slugKey = ARGV[1] .. ':org-slugs:' .. ARGV[3]
  if redis.call('EXISTS', slugKey) == 1 then return 'slug_taken' end
  redis.call('DEL', ARGV[1] .. ':org-slugs:' .. old)
  redis.call('SET', slugKey, ARGV[2])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
return redis.call('HGETALL', KEYS[1])`;

const deleteOrganizationScript = `${clearSessions}
-- KEYS: the organization. ARGV: prefix, its ref, its id. Deletes it with its memberships,
-- invitations and domains, and clears it from the sessions that have it active: one script.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local prefix, orgRef = ARGV[1], ARGV[2]
redis.call('DEL', prefix .. ':org-slugs:' .. redis.call('HGET', KEYS[1], 'slug'))
redis.call('ZREM', prefix .. ':org-order', ARGV[3])
for _, userRef in ipairs(redis.call('SMEMBERS', prefix .. ':org-members:' .. orgRef)) do
  redis.call('DEL', prefix .. ':memberships:' .. orgRef .. ':' .. userRef)
  redis.call('SREM', prefix .. ':user-orgs:' .. userRef, orgRef)
end
for _, invitationRef in ipairs(redis.call('SMEMBERS', prefix .. ':org-invitations:' .. orgRef)) do
  local key = prefix .. ':invitations:' .. invitationRef
  local tokenKey = prefix .. ':invitation-tokens:' .. (redis.call('HGET', key, 'tokenHash') or '')
  if redis.call('GET', tokenKey) == invitationRef then redis.call('DEL', tokenKey) end
  redis.call('DEL', key)
end
for _, domainRef in ipairs(redis.call('SMEMBERS', prefix .. ':org-domain-set:' .. orgRef)) do
  local verifiedKey = prefix .. ':verified-domains:' .. domainRef
  if redis.call('GET', verifiedKey) == orgRef then redis.call('DEL', verifiedKey) end
  redis.call('DEL', prefix .. ':org-domains:' .. orgRef .. ':' .. domainRef)
end
clearSessions(prefix, redis.call('SMEMBERS', prefix .. ':org-sessions:' .. orgRef), orgRef)
redis.call('DEL', KEYS[1], prefix .. ':org-members:' .. orgRef, prefix .. ':org-member-order:' .. orgRef,
  prefix .. ':org-invitations:' .. orgRef, prefix .. ':org-domain-set:' .. orgRef, prefix .. ':org-sessions:' .. orgRef)
return 1`;

const addMemberScript = `
-- KEYS: the organization, the membership, the organization's member set, its member order, the
-- user's organizations. ARGV: the organization's ref, the user's ref, the user's id, then field,
-- value pairs.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('ZADD', KEYS[4], 0, ARGV[3])
redis.call('SADD', KEYS[5], ARGV[1])
return 1`;

const changeMembershipScript = `${holdsRole}
${clearSessions}
-- KEYS: the organization, the membership, the organization's member set, its member order, the
-- user's organizations, the user's session index. ARGV: prefix, the organization's ref, the user's
-- ref, the user's id, the owner role's JSON text, 'remove' or the new roles' JSON text.
-- The last-owner rule (OR-3): the owners are counted and the membership changed by one script.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return 'not_found' end
local prefix, orgRef, userRef, owner = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
local removing = ARGV[6] == 'remove'
if holds(redis.call('HGET', KEYS[2], 'roles'), owner) and (removing or not holds(ARGV[6], owner)) then
  local others = 0
  for _, memberRef in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    if memberRef ~= userRef and holds(redis.call('HGET', prefix .. ':memberships:' .. orgRef .. ':' .. memberRef, 'roles'), owner) then
      others = others + 1
      break
    end
  end
  if others == 0 then return 'last_owner' end
end
if not removing then
  redis.call('HSET', KEYS[2], 'roles', ARGV[6])
  return 'done'
end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], userRef)
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('SREM', KEYS[5], orgRef)
clearSessions(prefix, redis.call('ZRANGE', KEYS[6], 0, -1), orgRef)
return 'done'`;

const setActiveOrganizationScript = `
-- KEYS: the session, then (for an organization, not none) the membership and the organization's
-- session set. ARGV: the user's ref, the organization's ref or 'null', now, the session's ref.
local s = redis.call('HMGET', KEYS[1], 'userId', 'revokedAt')
if s[1] ~= ARGV[1] or s[2] ~= 'null' then return 0 end
if ARGV[2] ~= 'null' then
  if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
  redis.call('HSET', KEYS[2], 'lastActiveAt', ARGV[3])
  redis.call('SADD', KEYS[3], ARGV[4])
end
redis.call('HSET', KEYS[1], 'activeOrgId', ARGV[2])
return 1`;

const clearActiveOrganizationScript = `${clearSessions}
-- KEYS: the organization's session set. ARGV: prefix, the organization's ref.
local cleared = clearSessions(ARGV[1], redis.call('SMEMBERS', KEYS[1]), ARGV[2])
redis.call('DEL', KEYS[1])
return cleared`;

/** Lua: whether the invitation at `key` is pending at `now` (a number). */
const pendingInvitation = `
local function pending(key, now)
  local i = redis.call('HMGET', key, 'acceptedAt', 'revokedAt', 'expiresAt')
  return i[1] == 'null' and i[2] == 'null' and i[3] and tonumber(i[3]) > now
end`;

const createInvitationScript = `${pendingInvitation}
-- KEYS: the invitation, the organization's invitation set, its secret's index. ARGV: prefix, its
-- ref, its address's JSON text, its createdAt, then field, value pairs. Revokes the pending
-- invitations of the same organization and address at its createdAt.
local createdAt = tonumber(ARGV[4])
for _, invitationRef in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local key = ARGV[1] .. ':invitations:' .. invitationRef
  if redis.call('HGET', key, 'email') == ARGV[3] and pending(key, createdAt) then
    redis.call('HSET', key, 'revokedAt', ARGV[4])
  end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], ARGV[2])
return 1`;

const replaceInvitationTokenScript = `${pendingInvitation}
-- KEYS: the invitation, its new secret's index. ARGV: prefix, its ref, the organization's ref, the
-- new hash's JSON text, the new expiresAt, now. The old secret's index goes: a resend voids it.
if redis.call('HGET', KEYS[1], 'orgId') ~= ARGV[3] or not pending(KEYS[1], tonumber(ARGV[6])) then return 0 end
local oldKey = ARGV[1] .. ':invitation-tokens:' .. redis.call('HGET', KEYS[1], 'tokenHash')
if redis.call('GET', oldKey) == ARGV[2] then redis.call('DEL', oldKey) end
redis.call('HSET', KEYS[1], 'tokenHash', ARGV[4], 'expiresAt', ARGV[5])
redis.call('SET', KEYS[2], ARGV[2])
return 1`;

const revokeInvitationScript = `${pendingInvitation}
-- KEYS: the invitation. ARGV: the organization's ref, now.
if redis.call('HGET', KEYS[1], 'orgId') ~= ARGV[1] or not pending(KEYS[1], tonumber(ARGV[2])) then return 0 end
redis.call('HSET', KEYS[1], 'revokedAt', ARGV[2])
return 1`;

const acceptInvitationScript = `${pendingInvitation}
-- KEYS: the secret's index. ARGV: prefix, the hash's JSON text, the user's ref, the user's id, the
-- address's JSON text, now. Spends a pending, unexpired invitation for the address that holds this
-- secret and adds the membership, or finds it there: one script, so one of concurrent calls
-- spends it (OR-6). Returns {} when it writes nothing, else the outcome, the invitation and the
-- membership (field, value lists).
local prefix, userRef, now = ARGV[1], ARGV[3], ARGV[6]
local invitationRef = redis.call('GET', KEYS[1])
if not invitationRef then return {} end
local key = prefix .. ':invitations:' .. invitationRef
local i = redis.call('HMGET', key, 'tokenHash', 'email', 'orgId', 'roles')
if i[1] ~= ARGV[2] or i[2] ~= ARGV[5] or not pending(key, tonumber(now)) then return {} end
local orgRef = i[3]
if redis.call('EXISTS', prefix .. ':orgs:' .. orgRef) == 0 then return {} end
redis.call('HSET', key, 'acceptedAt', now, 'acceptedBy', userRef)
local membershipKey = prefix .. ':memberships:' .. orgRef .. ':' .. userRef
local outcome = 'already_member'
if redis.call('EXISTS', membershipKey) == 0 then
  outcome = 'accepted'
  redis.call('HSET', membershipKey, 'orgId', orgRef, 'userId', userRef, 'roles', i[4], 'createdAt', now, 'lastActiveAt', 'null')
  redis.call('SADD', prefix .. ':org-members:' .. orgRef, userRef)
  redis.call('ZADD', prefix .. ':org-member-order:' .. orgRef, 0, ARGV[4])
  redis.call('SADD', prefix .. ':user-orgs:' .. userRef, orgRef)
end
return {outcome, redis.call('HGETALL', key), redis.call('HGETALL', membershipKey)}`;

const addDomainScript = `
-- KEYS: the organization, the domain, the organization's domain set. ARGV: the domain's ref, then
-- field, value pairs.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

const markDomainVerifiedScript = `
-- KEYS: the domain, its verified index. ARGV: the organization's ref, now. A domain is verified for
-- one organization at most (OR-11): the index names it.
if redis.call('EXISTS', KEYS[1]) == 0 then return 'not_found' end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return 'taken' end
if redis.call('HGET', KEYS[1], 'verifiedAt') == 'null' then redis.call('HSET', KEYS[1], 'verifiedAt', ARGV[2]) end
redis.call('SET', KEYS[2], ARGV[1])
return 'verified'`;

const removeDomainScript = `
-- KEYS: the domain, the organization's domain set, its verified index. ARGV: the organization's
-- ref, the domain's ref.
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('SREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
return 1`;

/** The `ZRANGEBYLEX` bounds of the ids after `cursor` (all of them without one). */
const afterCursor = (cursor: string | undefined) => (cursor === undefined ? "-" : `(${cursor}`);

function redisOrganizations(redis: Redis): OrganizationStore {
  const { client, prefix, run } = redis;
  const orgKey = (id: string) => `${prefix}:orgs:${ref(id)}`;
  const slugKey = (slug: string) => `${prefix}:org-slugs:${ref(slug)}`;
  const orderKey = `${prefix}:org-order`;
  const membershipKey = (orgId: string, userId: string) => `${prefix}:memberships:${ref(orgId)}:${ref(userId)}`;
  const membersKey = (orgId: string) => `${prefix}:org-members:${ref(orgId)}`;
  const memberOrderKey = (orgId: string) => `${prefix}:org-member-order:${ref(orgId)}`;
  const userOrgsKey = (userId: string) => `${prefix}:user-orgs:${ref(userId)}`;
  const invitationKey = (id: string) => `${prefix}:invitations:${ref(id)}`;
  const tokenKey = (tokenHash: string) => `${prefix}:invitation-tokens:${ref(tokenHash)}`;
  const domainKey = (orgId: string, domain: string) => `${prefix}:org-domains:${ref(orgId)}:${ref(domain)}`;
  const domainSetKey = (orgId: string) => `${prefix}:org-domain-set:${ref(orgId)}`;
  const verifiedKey = (domain: string) => `${prefix}:verified-domains:${ref(domain)}`;
  const sessionsOfKey = (orgId: string) => `${prefix}:org-sessions:${ref(orgId)}`;
  const userSessionsKey = (userId: string) => `${prefix}:user-sessions:${ref(userId)}`;
  const sessionKey = (id: string) => `${prefix}:sessions:${ref(id)}`;

  const findOrganization = async (id: string) => fromFields<OrganizationRecord>(await client.hGetAll(orgKey(id)));
  const findMembership = async (orgId: string, userId: string) =>
    fromFields<MembershipRecord>(await client.hGetAll(membershipKey(orgId, userId)));
  const findInvitation = async (id: string) => fromFields<InvitationRecord>(await client.hGetAll(invitationKey(id)));
  /** A page of the ids of `orderKey` after `cursor`, read with the one after it, which says there is a next page. */
  const pageOfIds = async (key: string, cursor: string | undefined, limit: number) => {
    const ids = await client.zRangeByLex(key, afterCursor(cursor), "+", { LIMIT: { offset: 0, count: limit + 1 } });
    const items = ids.slice(0, limit);
    return { items, nextCursor: ids.length > limit ? (items.at(-1) ?? null) : null };
  };
  const changeMembership = (orgId: string, userId: string, ownerRole: string, change: string) =>
    run<MembershipChange>(
      changeMembershipScript,
      [
        orgKey(orgId),
        membershipKey(orgId, userId),
        membersKey(orgId),
        memberOrderKey(orgId),
        userOrgsKey(userId),
        userSessionsKey(userId),
      ],
      [prefix, ref(orgId), ref(userId), userId, json(ownerRole), change],
    );

  return {
    async createOrganization(organization, owner) {
      const { id } = organization;
      const fields = toArgs(organization);
      const keys = [
        orgKey(id),
        slugKey(organization.slug),
        orderKey,
        membershipKey(id, owner.userId),
        membersKey(id),
        memberOrderKey(id),
        userOrgsKey(owner.userId),
      ];
      const args = [id, ref(id), owner.userId, ref(owner.userId), fields.length, ...fields, ...toArgs(owner)];
      return (await run<number>(createOrganizationScript, keys, args)) === 1;
    },
    findOrganization,
    async findOrganizationBySlug(slug) {
      const orgRef = await client.get(slugKey(slug));
      return orgRef === null ? null : fromFields<OrganizationRecord>(await client.hGetAll(`${prefix}:orgs:${orgRef}`));
    },
    async updateOrganization(id, changes) {
      const slug = changes.slug === undefined ? "" : json(changes.slug);
      const reply = await run<string[] | "slug_taken">(
        updateOrganizationScript,
        [orgKey(id)],
        [prefix, ref(id), slug, ...toArgs(changes)],
      );
      return reply === "slug_taken" ? reply : fromPairs<OrganizationRecord>(reply);
    },
    deleteOrganization: async (id) => (await run<number>(deleteOrganizationScript, [orgKey(id)], [prefix, ref(id), id])) === 1,
    async listOrganizations({ cursor, limit }) {
      const { items, nextCursor } = await pageOfIds(orderKey, cursor, limit);
      return {
        items: await readAll<OrganizationRecord>(
          redis,
          "orgs",
          items.map((id) => ref(id)),
        ),
        nextCursor,
      };
    },
    findMembership,
    async listMembers(orgId, { cursor, limit }) {
      const { items, nextCursor } = await pageOfIds(memberOrderKey(orgId), cursor, limit);
      const memberships = await readAll<MembershipRecord>(
        redis,
        `memberships:${ref(orgId)}`,
        items.map((id) => ref(id)),
      );
      return { items: memberships, nextCursor };
    },
    async listUserOrganizations(userId) {
      const orgRefs = await client.sMembers(userOrgsKey(userId));
      const found = await Promise.all(
        orgRefs.map(async (orgRef) => {
          const organization = fromFields<OrganizationRecord>(await client.hGetAll(`${prefix}:orgs:${orgRef}`));
          const membership = organization && (await findMembership(organization.id, userId));
          return organization && membership ? [{ organization, membership }] : [];
        }),
      );
      return found.flat().sort((a, b) => compareCodePoints(a.organization.id, b.organization.id));
    },
    addMember: async (membership) =>
      (await run<number>(
        addMemberScript,
        [
          orgKey(membership.orgId),
          membershipKey(membership.orgId, membership.userId),
          membersKey(membership.orgId),
          memberOrderKey(membership.orgId),
          userOrgsKey(membership.userId),
        ],
        [ref(membership.orgId), ref(membership.userId), membership.userId, ...toArgs(membership)],
      )) === 1,
    changeMemberRoles: (orgId, userId, roles, ownerRole) => changeMembership(orgId, userId, ownerRole, json(roles)),
    removeMember: (orgId, userId, ownerRole) => changeMembership(orgId, userId, ownerRole, "remove"),
    async setActiveOrganization(sessionId, userId, orgId, now) {
      const keys =
        orgId === null ? [sessionKey(sessionId)] : [sessionKey(sessionId), membershipKey(orgId, userId), sessionsOfKey(orgId)];
      const args = [ref(userId), orgId === null ? "null" : ref(orgId), json(now), ref(sessionId)];
      return (await run<number>(setActiveOrganizationScript, keys, args)) === 1;
    },
    clearActiveOrganization: (orgId) => run<number>(clearActiveOrganizationScript, [sessionsOfKey(orgId)], [prefix, ref(orgId)]),
    async createInvitation(invitation) {
      const keys = [
        invitationKey(invitation.id),
        `${prefix}:org-invitations:${ref(invitation.orgId)}`,
        tokenKey(invitation.tokenHash),
      ];
      const args = [prefix, ref(invitation.id), json(invitation.email), json(invitation.createdAt), ...toArgs(invitation)];
      await run<number>(createInvitationScript, keys, args);
    },
    async findInvitation(orgId, id) {
      const invitation = await findInvitation(id);
      return invitation?.orgId === orgId ? invitation : null;
    },
    async listInvitations(orgId, now) {
      const refs = await client.sMembers(`${prefix}:org-invitations:${ref(orgId)}`);
      return (await readAll<InvitationRecord>(redis, "invitations", refs))
        .filter((invitation) => invitation.acceptedAt === null && invitation.revokedAt === null && invitation.expiresAt > now)
        .sort((a, b) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id));
    },
    replaceInvitationToken: async (orgId, id, tokenHash, expiresAt, now) =>
      (await run<number>(
        replaceInvitationTokenScript,
        [invitationKey(id), tokenKey(tokenHash)],
        [prefix, ref(id), ref(orgId), json(tokenHash), json(expiresAt), json(now)],
      )) === 1,
    revokeInvitation: async (orgId, id, now) =>
      (await run<number>(revokeInvitationScript, [invitationKey(id)], [ref(orgId), json(now)])) === 1,
    async acceptInvitation({ tokenHash, userId, email, now }): Promise<AcceptanceResult> {
      const args = [prefix, json(tokenHash), ref(userId), userId, json(email), json(now)];
      const reply = await run<[AcceptanceResult["outcome"], string[], string[]] | []>(
        acceptInvitationScript,
        [tokenKey(tokenHash)],
        args,
      );
      if (reply.length === 0) return { outcome: "refused" };
      const [outcome, invitation, membership] = reply;
      return {
        outcome: outcome as "accepted" | "already_member",
        invitation: fromPairs<InvitationRecord>(invitation) as InvitationRecord,
        membership: fromPairs<MembershipRecord>(membership) as MembershipRecord,
      };
    },
    addDomain: async (domain) =>
      (await run<number>(
        addDomainScript,
        [orgKey(domain.orgId), domainKey(domain.orgId, domain.domain), domainSetKey(domain.orgId)],
        [ref(domain.domain), ...toArgs(domain)],
      )) === 1,
    async listDomains(orgId) {
      const refs = await client.sMembers(domainSetKey(orgId));
      const domains = await readAll<DomainRecord>(redis, `org-domains:${ref(orgId)}`, refs);
      return domains.sort((a, b) => compareCodePoints(a.domain, b.domain));
    },
    markDomainVerified: (orgId, domain, now) =>
      run<"verified" | "taken" | "not_found">(
        markDomainVerifiedScript,
        [domainKey(orgId, domain), verifiedKey(domain)],
        [ref(orgId), json(now)],
      ),
    removeDomain: async (orgId, domain) =>
      (await run<number>(
        removeDomainScript,
        [domainKey(orgId, domain), domainSetKey(orgId), verifiedKey(domain)],
        [ref(orgId), ref(domain)],
      )) === 1,
    async findOrganizationByDomain(domain) {
      const orgRef = await client.get(verifiedKey(domain));
      return orgRef === null ? null : fromFields<OrganizationRecord>(await client.hGetAll(`${prefix}:orgs:${orgRef}`));
    },
  };
}

// API keys: `api-keys:<hash ref>` hashes (a presented key is found by the SHA-256 of the whole key),
// `api-key-hashes:<id ref>` holding the hash's ref (renames, revocations and uses name a key by its
// id), and `user-api-keys:<user ref>`, a set of each user's hash refs. Keys never expire in Redis:
// expired and revoked ones are listed until their owner's service deletes them.

const apiKeyStateScript = `
-- KEYS: the key. ARGV: prefix. The key, and its user's tokenVersion, disabled and roles (false for
-- each when there is no such user), in one read; {} for an unknown key.
local key = redis.call('HGETALL', KEYS[1])
if #key == 0 then return {} end
local u = redis.call('HMGET', ARGV[1] .. ':users:' .. redis.call('HGET', KEYS[1], 'userId'), 'tokenVersion', 'disabled', 'roles')
return {key, u[1] or false, u[2] or false, u[3] or false}`;

/** Lua: the key `KEYS[1]` (its id's hash ref) names, or false when it names none. */
const apiKeyById = `
local hash = redis.call('GET', KEYS[1])
if not hash then return false end
local key = ARGV[1] .. ':api-keys:' .. hash
if redis.call('EXISTS', key) == 0 then return false end`;

const renameApiKeyScript = `
-- KEYS: the key's id. ARGV: prefix, its owner's ref, the name. Renames it while it is not revoked.
${apiKeyById}
local k = redis.call('HMGET', key, 'userId', 'revokedAt')
if k[1] ~= ARGV[2] or k[2] ~= 'null' then return 0 end
redis.call('HSET', key, 'name', ARGV[3])
return 1`;

const revokeApiKeyScript = `
-- KEYS: the key's id. ARGV: prefix, its owner's ref ('' for any owner: an administrator), now.
-- Revokes it once (AK-2): the key as revoked, or {} when it is unknown, another's or revoked already.
local found = (function()
  ${apiKeyById}
  local k = redis.call('HMGET', key, 'userId', 'revokedAt')
  if (ARGV[2] ~= '' and k[1] ~= ARGV[2]) or k[2] ~= 'null' then return false end
  redis.call('HSET', key, 'revokedAt', ARGV[3])
  return redis.call('HGETALL', key)
end)()
return found or {}`;

const recordApiKeyUseScript = `
-- KEYS: the keys' ids. ARGV: prefix, the interval, then each key's use time in KEYS' order.
-- Sets a key's lastUsedAt to its use where it is null or at least the interval older (AK-4).
local interval = tonumber(ARGV[2])
for index, idKey in ipairs(KEYS) do
  local hash = redis.call('GET', idKey)
  if hash then
    local key = ARGV[1] .. ':api-keys:' .. hash
    local last = redis.call('HGET', key, 'lastUsedAt')
    local at = ARGV[index + 2]
    if last and (last == 'null' or tonumber(last) <= tonumber(at) - interval) then
      redis.call('HSET', key, 'lastUsedAt', at)
    end
  end
end
return 1`;

/** What {@link apiKeyStateScript} answered, as an {@link ApiKeyState}. */
function toApiKeyState(reply: [string[], string | null, string | null, string | null] | []): ApiKeyState | null {
  if (reply.length === 0) return null;
  const [key, tokenVersion, disabled, roles] = reply;
  return {
    key: fromPairs<ApiKeyRecord>(key) as ApiKeyRecord,
    user:
      tokenVersion === null
        ? null
        : { tokenVersion: JSON.parse(tokenVersion), disabled: disabled === "true", roles: JSON.parse(roles ?? "[]") },
  };
}

function redisApiKeys(redis: Redis): ApiKeyStore {
  const { client, prefix, run } = redis;
  const apiKeyKey = (hash: string) => `${prefix}:api-keys:${ref(hash)}`;
  const idKey = (id: string) => `${prefix}:api-key-hashes:${ref(id)}`;
  const userKeysKey = (userId: string) => `${prefix}:user-api-keys:${ref(userId)}`;
  const organizationKeysKey = (orgId: string) => `${prefix}:org-api-keys:${ref(orgId)}`;
  const newestFirst = (a: ApiKeyRecord, b: ApiKeyRecord) => b.createdAt - a.createdAt || compareCodePoints(b.id, a.id);
  return {
    async createApiKey(key) {
      const write = client
        .multi()
        .hSet(apiKeyKey(key.hash), toFields(key))
        .set(idKey(key.id), ref(key.hash))
        .sAdd(userKeysKey(key.userId), ref(key.hash));
      if (key.orgId !== null) write.sAdd(organizationKeysKey(key.orgId), ref(key.hash));
      await write.exec();
    },
    findApiKeyByHash: async (hash) => toApiKeyState(await run(apiKeyStateScript, [apiKeyKey(hash)], [prefix])),
    async listApiKeys(userId) {
      const keys = await readAll<ApiKeyRecord>(redis, "api-keys", await client.sMembers(userKeysKey(userId)));
      return keys.filter((key) => key.userId === userId).sort(newestFirst);
    },
    async listOrganizationApiKeys(orgId) {
      const keys = await readAll<ApiKeyRecord>(redis, "api-keys", await client.sMembers(organizationKeysKey(orgId)));
      return keys.filter((key) => key.orgId === orgId).sort(newestFirst);
    },
    renameApiKey: async (userId, id, name) =>
      (await run<number>(renameApiKeyScript, [idKey(id)], [prefix, ref(userId), json(name)])) === 1,
    async revokeApiKey(userId, id, now) {
      const owner = userId === null ? "" : ref(userId);
      return fromPairs<ApiKeyRecord>(await run<string[]>(revokeApiKeyScript, [idKey(id)], [prefix, owner, json(now)]));
    },
    async recordApiKeyUse(uses, minIntervalMs) {
      if (uses.length === 0) return;
      await run(
        recordApiKeyUseScript,
        uses.map(({ id }) => idKey(id)),
        [prefix, minIntervalMs, ...uses.map(({ at }) => json(at))],
      );
    },
  };
}

// Service accounts: `service-accounts:<id ref>` hashes and the `service-account-ids` set of their
// refs (the listing); `service-account-credentials:<credential ref>` hashes (a use names a
// credential by its id) and `service-account-credential-refs:<account ref>`, each account's set of
// its credentials' refs. Nothing here expires in Redis: expired credentials are kept until removed.

const serviceAccountClientScript = `
-- KEYS: the account, its set of credential refs. ARGV: prefix. The account and each of its
-- credentials (field, value lists), in one read; {} for an unknown account.
local account = redis.call('HGETALL', KEYS[1])
if #account == 0 then return {} end
local reply = {account}
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local credential = redis.call('HGETALL', ARGV[1] .. ':service-account-credentials:' .. ref)
  if #credential > 0 then reply[#reply + 1] = credential end
end
return reply`;

const updateServiceAccountScript = `
-- KEYS: the account. ARGV: 1 to raise its tokenVersion by one (else 0), then field, value pairs.
-- The account as changed, or {} for an unknown one.
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
if #ARGV > 1 then redis.call('HSET', KEYS[1], unpack(ARGV, 2)) end
if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[1], 'tokenVersion', 1) end
return redis.call('HGETALL', KEYS[1])`;

const deleteServiceAccountScript = `
-- KEYS: the account, its set of credential refs, the set of every account's ref. ARGV: prefix,
-- the account's ref. Deletes the account with its credentials; 0 for an unknown one.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  redis.call('DEL', ARGV[1] .. ':service-account-credentials:' .. ref)
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[2])
return 1`;

const addServiceAccountCredentialScript = `
-- KEYS: the account, its set of credential refs, the new credential. ARGV: prefix, the kind (as
-- JSON text), now, maxOfKind, the credential's ref, then its field, value pairs. Adds it unless
-- the account holds maxOfKind credentials of the kind that have not expired at now (SA-2).
if redis.call('EXISTS', KEYS[1]) == 0 then return 'unknown_account' end
local now = tonumber(ARGV[3])
local live = 0
for _, ref in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local c = redis.call('HMGET', ARGV[1] .. ':service-account-credentials:' .. ref, 'kind', 'expiresAt')
  if c[1] == ARGV[2] and (c[2] == 'null' or tonumber(c[2]) > now) then live = live + 1 end
end
if live >= tonumber(ARGV[4]) then return 'limit' end
redis.call('HSET', KEYS[3], unpack(ARGV, 6))
redis.call('SADD', KEYS[2], ARGV[5])
return 'added'`;

const removeServiceAccountCredentialScript = `
-- KEYS: the credential, its account's set of credential refs. ARGV: the account's ref (JSON
-- text), the credential's ref. Removes it when it is that account's; 0 otherwise.
if redis.call('HGET', KEYS[1], 'serviceAccountId') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
return 1`;

const recordServiceAccountCredentialUseScript = `
-- KEYS: the credential. ARGV: the use's time, the interval. Sets lastUsedAt to the use where it is
-- null or at least the interval older; an unknown credential is passed over.
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
if last and (last == 'null' or tonumber(last) <= tonumber(ARGV[1]) - tonumber(ARGV[2])) then
  redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
end
return 1`;

function redisServiceAccounts(redis: Redis): ServiceAccountStore {
  const { client, prefix, run } = redis;
  const accountKey = (id: string) => `${prefix}:service-accounts:${ref(id)}`;
  const accountIdsKey = `${prefix}:service-account-ids`;
  const credentialKey = (id: string) => `${prefix}:service-account-credentials:${ref(id)}`;
  const credentialRefsKey = (accountId: string) => `${prefix}:service-account-credential-refs:${ref(accountId)}`;
  return {
    async createServiceAccount(account) {
      await client
        .multi()
        .del(accountKey(account.id))
        .hSet(accountKey(account.id), toFields(account))
        .sAdd(accountIdsKey, ref(account.id))
        .exec();
    },
    findServiceAccount: async (id) => fromFields<ServiceAccountRecord>(await client.hGetAll(accountKey(id))),
    async findServiceAccountClient(id) {
      const reply = await run<string[][]>(serviceAccountClientScript, [accountKey(id), credentialRefsKey(id)], [prefix]);
      const [account, ...credentials] = reply;
      if (account === undefined) return null;
      return {
        account: fromPairs<ServiceAccountRecord>(account) as ServiceAccountRecord,
        credentials: credentials.map(
          (pairs) => fromPairs<ServiceAccountCredentialRecord>(pairs) as ServiceAccountCredentialRecord,
        ),
      };
    },
    async listServiceAccounts() {
      const accounts = await readAll<ServiceAccountRecord>(redis, "service-accounts", await client.sMembers(accountIdsKey));
      return accounts.sort((a, b) => a.createdAt - b.createdAt || compareCodePoints(a.id, b.id));
    },
    async updateServiceAccount(id, { raiseTokenVersion, ...fields }) {
      const args = [raiseTokenVersion === true ? "1" : "0", ...toArgs(fields)];
      return fromPairs<ServiceAccountRecord>(await run<string[]>(updateServiceAccountScript, [accountKey(id)], args));
    },
    deleteServiceAccount: async (id) =>
      (await run<number>(
        deleteServiceAccountScript,
        [accountKey(id), credentialRefsKey(id), accountIdsKey],
        [prefix, ref(id)],
      )) === 1,
    addServiceAccountCredential: (credential, maxOfKind, now) =>
      run<CredentialAddition>(
        addServiceAccountCredentialScript,
        [accountKey(credential.serviceAccountId), credentialRefsKey(credential.serviceAccountId), credentialKey(credential.id)],
        [prefix, json(credential.kind), now, maxOfKind, ref(credential.id), ...toArgs(credential)],
      ),
    removeServiceAccountCredential: async (serviceAccountId, credentialId) =>
      (await run<number>(
        removeServiceAccountCredentialScript,
        [credentialKey(credentialId), credentialRefsKey(serviceAccountId)],
        [ref(serviceAccountId), ref(credentialId)],
      )) === 1,
    async recordServiceAccountCredentialUse(credentialId, at, minIntervalMs) {
      await run(recordServiceAccountCredentialUseScript, [credentialKey(credentialId)], [json(at), minIntervalMs]);
    },
  };
}
