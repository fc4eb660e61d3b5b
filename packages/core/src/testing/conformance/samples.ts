import { randomUUID } from "node:crypto";
import type {
  ChallengeRecord,
  IdentityRecord,
  LegacyRefreshToken,
  PasskeyRecord,
  SessionRecord,
  Storage,
  TotpRecord,
  UserRecord,
} from "../../storage/types.js";
import { type FieldValue, type UserFieldDefinitions, field } from "../../user-fields/field.js";

/**
 * The additional user fields the conformance kit stores, one of each kind: a store under test
 * must be made able to hold them (`memoryStorage()` holds any; `@portcullis/kysely` with
 * `userFields: conformanceUserFields` and their columns added). Every sample user carries them.
 *
 * @example
 * ```ts
 * const storage = await pgliteStorage({ dataDir: "memory://", userFields: conformanceUserFields });
 * runStorageConformance({ name: "PGlite", makeStorage: () => storage, test });
 * ```
 */
export const conformanceUserFields: UserFieldDefinitions = {
  company: field.string({ maxLength: 100 }),
  bio: field.string({ maxLength: 5000 }),
  seats: field.integer(),
  score: field.number(),
  beta: field.boolean(),
  plan: field.enum(["free", "pro"]),
  tags: field.stringArray(),
};

/** Values of every {@link conformanceUserFields} field: an awkward one of each kind, and nulls. */
export function sampleFieldValues(overrides: Record<string, FieldValue> = {}): Record<string, FieldValue> {
  return {
    company: "Zoë & Søn \u{1F600} 'quoted' \"double\" \\ %_",
    bio: null,
    seats: 9_007_199_254_740_991,
    score: -0.125,
    beta: false,
    plan: "pro",
    tags: [],
    ...overrides,
  };
}

/** A fixed "now" for the suites: every time in the storage interfaces is passed in as epoch ms. */
export const BASE_TIME = 1_700_000_000_000;

const HOUR = 3_600_000;

/** A fresh identifier, so tests never collide in a database that is not wiped between runs. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** Where {@link sampleUser} takes a new user's id: `user-<uuid>` unless the run gave `userIds`. */
let newUserId: () => string = () => uniqueId("user");

/**
 * Makes {@link sampleUser} take new users' ids from `make` (a store that keeps integer or UUID
 * ids needs ids of that form), or `user-<uuid>` when it is undefined. The kit calls it as each
 * test asks for its storage, so each run's tests use that run's ids.
 */
export function useUserIds(make: (() => string) | undefined): void {
  newUserId = make ?? (() => uniqueId("user"));
}

/** A 64-hex-digit stand-in for a SHA-256, distinct per call. */
export function uniqueHash(): string {
  return `${randomUUID()}${randomUUID()}`.replaceAll("-", "");
}

/** A local user with a unique id and usernameKey, token version 0; `overrides` replace any field. */
export function sampleUser(overrides: Partial<UserRecord> = {}): UserRecord {
  const id = overrides.id ?? newUserId();
  return {
    id,
    username: `Name-${id}`,
    usernameKey: `name-${id}`,
    passwordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
    roles: ["member"],
    disabled: false,
    tokenVersion: 0,
    source: "local",
    email: null,
    emailVerified: false,
    createdAt: BASE_TIME,
    updatedAt: BASE_TIME,
    fields: sampleFieldValues(),
    ...overrides,
  };
}

/** Stores a new user (so adapters with foreign keys accept rows that point at it) and returns its id. */
export async function createUser(storage: Storage, overrides: Partial<UserRecord> = {}): Promise<string> {
  const user = sampleUser(overrides);
  if (!(await storage.users.create(user))) throw new Error(`conformance setup: could not create user ${user.id}`);
  return user.id;
}

/** A pending TOTP factor for `userId` with a never-used step (-1). */
export function sampleTotp(userId: string, overrides: Partial<TotpRecord> = {}): TotpRecord {
  return {
    userId,
    secret: { keyId: "key-1", sealed: uniqueHash() },
    enabled: false,
    lastUsedStep: -1,
    createdAt: BASE_TIME,
    ...overrides,
  };
}

/**
 * A live session of `userId`, valid for a day from {@link BASE_TIME}, holding a fresh refresh
 * token hash at generation 0, idle-valid for an hour (or until the session ends, if sooner: RT-4),
 * with no active organization and no impersonator.
 */
export function sampleSession(userId: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  const expiresAt = overrides.expiresAt ?? BASE_TIME + 24 * HOUR;
  return {
    id: uniqueId("session"),
    userId,
    tokenVersion: 0,
    amr: ["pwd", "otp"],
    authTime: BASE_TIME + 7,
    createdAt: BASE_TIME,
    expiresAt,
    revokedAt: null,
    lastUsedAt: BASE_TIME,
    userAgent: null,
    address: null,
    refreshHash: uniqueHash(),
    refreshGeneration: 0,
    refreshExpiresAt: Math.min(BASE_TIME + HOUR, expiresAt),
    activeOrgId: null,
    impersonatorId: null,
    ...overrides,
  };
}

/**
 * An unspent refresh token of an earlier release, of `session`, with a unique hash, idle-valid for
 * an hour: what a store's `findLegacyRefreshToken` reads from that release's table.
 */
export function sampleLegacyRefreshToken(
  session: SessionRecord,
  overrides: Partial<LegacyRefreshToken> = {},
): LegacyRefreshToken {
  return {
    hash: uniqueHash(),
    sessionId: session.id,
    userId: session.userId,
    createdAt: BASE_TIME,
    expiresAt: BASE_TIME + HOUR,
    spentAt: null,
    ...overrides,
  };
}

/** A live `totp_login` challenge with a unique id, valid for five minutes from {@link BASE_TIME}. */
export function sampleChallenge(overrides: Partial<ChallengeRecord> = {}): ChallengeRecord {
  return {
    id: uniqueHash(),
    kind: "totp_login",
    userId: null,
    data: { step: "second_factor", nested: { attempts: [1, 2] } },
    attempts: 0,
    createdAt: BASE_TIME,
    expiresAt: BASE_TIME + 5 * 60_000,
    ...overrides,
  };
}

/** A passkey of `userId` with a unique credential id and counter 0. */
export function samplePasskey(userId: string, overrides: Partial<PasskeyRecord> = {}): PasskeyRecord {
  return {
    id: uniqueId("credential"),
    userId,
    publicKey: `pk-${uniqueHash()}`,
    counter: 0,
    transports: ["internal", "hybrid"],
    label: "Laptop",
    backupEligible: true,
    backupState: false,
    createdAt: BASE_TIME,
    lastUsedAt: null,
    userHandle: null,
    ...overrides,
  };
}

/** A GitHub identity of `userId` with a unique subject. */
export function sampleIdentity(userId: string, overrides: Partial<IdentityRecord> = {}): IdentityRecord {
  return {
    provider: "github",
    subject: uniqueId("subject"),
    userId,
    email: "someone@example.com",
    emailVerified: true,
    createdAt: BASE_TIME,
    lastUsedAt: null,
    ...overrides,
  };
}
