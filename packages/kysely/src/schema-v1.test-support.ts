/**
 * A database as release 0.1 (schema version 1, before issue 21), the release before issue 24
 * (schema version 2), the one before issue 37 (schema version 3), the one before issue 39
 * (schema version 4), the one before issue 40 (schema version 5), the one before issue 41 (schema
 * version 6), the one before its service accounts (schema version 7) or the one before passkeys'
 * user handles (schema version 8) made and filled it, for the
 * migration tests: accounts made by the real flows on memory storage (an argon2id password, a
 * sealed TOTP secret and recovery codes, a passkey of a software authenticator, sessions, a linked
 * identity, a setting), written into the older tables
 * with the columns that schema has, and the sessions' refresh tokens as those releases made and
 * kept them (43 base64url characters, a row each in refresh_tokens, one spent by a refresh).
 * Not a test file; excluded from the build.
 */
import { randomBytes } from "node:crypto";
import {
  type ApiKeyRecord,
  type Auth,
  type IdentityRecord,
  type LegacyRefreshToken,
  type PasskeyRecord,
  type ServiceAccountCredentialRecord,
  type ServiceAccountRecord,
  type SessionRecord,
  type TokenSet,
  type TotpRecord,
  type UserRecord,
  login,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import type { SoftwareAuthenticator } from "@portcullis/testing";
import { sql } from "kysely";
import {
  type TestAuth,
  type TotpTestUser,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  testPassword,
} from "../../../test/fixtures/auth.js";
import { sha256 } from "../../core/src/crypto/random.js";
import { hashRecoveryCode, normalizeRecoveryCode } from "../../core/src/totp/recovery-codes.js";
import { insertLegacyRefreshToken } from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { migrateSchema } from "./migrations.js";
import { apiKeyStore } from "./stores/api-keys.js";
import { challengeStore } from "./stores/challenges.js";
import { storeContext } from "./stores/context.js";
import { counterStore } from "./stores/counters.js";
import { identityStore } from "./stores/identities.js";
import { organizationStore } from "./stores/organizations.js";
import { toPasskeyRow } from "./stores/passkeys.js";
import { recoveryCodeStore } from "./stores/recovery-codes.js";
import { serviceAccountStore } from "./stores/service-accounts.js";
import { toSessionRow } from "./stores/sessions.js";
import { settingsStore } from "./stores/settings.js";
import { totpStore } from "./stores/totp.js";
import { toUserRow } from "./stores/users.js";

/** What an old database holds, as records, and what its users hold to sign in with. */
export interface OldAccounts {
  testAuth: TestAuth;
  secrets: { signing: string; encryption: string };
  alice: TotpTestUser;
  bob: UserRecord;
  carol: UserRecord;
  bobAuthenticator: SoftwareAuthenticator;
  /**
   * Bob's two password sign-ins, each with the refresh token its session holds unspent: the first
   * session's replacement of its first token (spent by a refresh), the second's first token.
   */
  bobSignIns: TokenSet[];
  /** The first session's first refresh token, spent by that refresh. */
  spentRefreshToken: string;
  /** Every session's unspent refresh token, as its holder keeps it. */
  outstandingRefreshTokens: { sessionId: string; refreshToken: string }[];
  users: UserRecord[];
  totp: TotpRecord[];
  recoveryCodeHashes: string[];
  /** The sessions as the memory store holds them (its refresh columns are not written into older versions). */
  sessions: SessionRecord[];
  /** Every session's refresh tokens, as refresh_tokens held them: one unspent each, and Bob's spent one. */
  refreshTokens: LegacyRefreshToken[];
  passkeys: PasskeyRecord[];
  identities: IdentityRecord[];
  settings: { key: string; value: unknown }[];
}

const tokensOf = async (auth: Auth, username: string) => {
  const result = await login(auth, { username, password: testPassword });
  if (result.status !== "authenticated") throw new Error(`setup: ${username} did not sign in`);
  return result.tokens;
};

/** Makes the accounts through the flows on memory storage, and reads back every record they wrote. */
export async function makeOldAccounts(): Promise<OldAccounts> {
  const secrets = { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") };
  const testAuth = makeTestAuth({ secrets, throttle: generousThrottle });
  const { auth } = testAuth;
  const alice = await createTotpUser(auth, "Alice");
  const bobUser = await createTestUser(auth, "bob", ["user", "admin"]);
  const carolUser = await createTestUser(auth, "Carol Ünal");
  await auth.storage.users.update(carolUser.id, { disabled: true }, auth.now());

  const bobAuthenticator = makeTestAuthenticator();
  const ceremony = await webauthnRegisterBegin(auth, { userId: bobUser.id, label: "Bob's key", password: testPassword });
  await webauthnRegisterFinish(auth, {
    userId: bobUser.id,
    ceremonyId: ceremony.ceremonyId,
    response: bobAuthenticator.register(ceremony.options),
  });
  await auth.storage.identities.link({
    provider: "github",
    subject: "bob-on-github",
    userId: bobUser.id,
    email: "bob@example.com",
    emailVerified: true,
    createdAt: auth.now(),
    lastUsedAt: null,
  });
  await auth.storage.settings.set("kept-setting", { across: ["the", "upgrade"] }, auth.now());

  // The releases before issue 39 gave each session a random token of 43 characters, stored by its
  // hash; a refresh spent it and stored its replacement.
  const legacyToken = (session: SessionRecord, createdAt: number, spentAt: number | null) => {
    const value = randomBytes(32).toString("base64url");
    const expiresAt = Math.min(createdAt + auth.config.ttl.refreshIdle * 1000, session.expiresAt);
    const record = { hash: sha256(value), sessionId: session.id, userId: session.userId, createdAt, expiresAt, spentAt };
    return { value, record };
  };
  testAuth.clock.advance(1000);
  const first = await tokensOf(auth, "bob");
  testAuth.clock.advance(1000);
  const second = await tokensOf(auth, "bob");
  testAuth.clock.advance(1000);
  const found = async <T>(read: Promise<T | null | undefined>): Promise<T> => {
    const record = await read;
    if (record === null || record === undefined) throw new Error("setup: a record the flows wrote is missing");
    return record;
  };
  const userIds = [alice.id, bobUser.id, carolUser.id];
  const users = await Promise.all(userIds.map((id) => found(auth.storage.users.findById(id))));
  const sessions = (await Promise.all(userIds.map((id) => auth.storage.sessions.listByUser(id, auth.now(), 100)))).flat();
  const sessionOf = (tokens: TokenSet) =>
    sessions.find((session) => session.id === sessionIdOf(tokens.accessToken)) as SessionRecord;
  const spent = legacyToken(sessionOf(first), sessionOf(first).createdAt, auth.now());
  const replacement = legacyToken(sessionOf(first), auth.now(), null);
  const others = sessions
    .filter((session) => session !== sessionOf(first))
    .map((session) => legacyToken(session, session.createdAt, null));
  const secondToken = others.find(({ record }) => record.sessionId === sessionOf(second).id);
  if (secondToken === undefined) throw new Error("setup: bob's second session is missing");
  const refreshTokens = [spent, replacement, ...others].map(({ record }) => record);
  return {
    testAuth,
    secrets,
    alice,
    bob: users[1] as UserRecord,
    carol: users[2] as UserRecord,
    bobAuthenticator,
    bobSignIns: [
      { ...first, refreshToken: replacement.value },
      { ...second, refreshToken: secondToken.value },
    ],
    spentRefreshToken: spent.value,
    outstandingRefreshTokens: [replacement, ...others].map(({ value, record }) => ({
      sessionId: record.sessionId,
      refreshToken: value,
    })),
    users,
    totp: [await found(auth.storage.totp.get(alice.id))],
    recoveryCodeHashes: alice.recoveryCodes.map((code) => hashRecoveryCode(alice.id, normalizeRecoveryCode(code) as string)),
    // As SQL reads them back: no impersonator (migration 8) is null, whatever the flows left out.
    sessions: sessions.map((session) => ({ ...session, impersonatorId: session.impersonatorId ?? null })),
    refreshTokens,
    passkeys: await auth.storage.passkeys.listByUser(bobUser.id),
    identities: await auth.storage.identities.listByUser(bobUser.id),
    settings: [{ key: "kept-setting", value: await auth.storage.settings.get("kept-setting") }],
  };
}

/** The session id an access token names, read without verifying it. */
export const sessionIdOf = (accessToken: string): string =>
  JSON.parse(Buffer.from(accessToken.split(".")[1] as string, "base64url").toString()).sid as string;

/**
 * A session of `accounts` as migration 5 leaves it: holding its newest unspent refresh token of
 * refresh_tokens as its current one, at generation 0, with that token's expiry; none when it had none.
 */
export function migratedSession(accounts: OldAccounts, session: SessionRecord): SessionRecord {
  const current = accounts.refreshTokens
    .filter((token) => token.sessionId === session.id && token.spentAt === null)
    .sort((a, b) => b.createdAt - a.createdAt)[0];
  return {
    ...session,
    refreshHash: current?.hash ?? null,
    refreshGeneration: 0,
    refreshExpiresAt: current?.expiresAt ?? session.createdAt,
    activeOrgId: null,
  };
}

/**
 * Brings an empty database to schema version `version` (1, release 0.1's; 2, the release before
 * issue 24's; 3, the release before issue 37's; 4, the release before issue 39's; 5, the release
 * before issue 40's; 6, the release before issue 41's, with an organization of Bob's, Alice a
 * member, an invitation and a domain, active in the session of Bob's first sign-in; 7, the
 * release before service accounts, with that organization and an API key of Bob's; or 8, the
 * release before passkeys' user handles, with a service account of Bob's and its secret too) and writes
 * `accounts` into it as that release's storage did: the users, the sessions, the refresh
 * tokens and the passkeys by SQL with the columns that schema has; the tables later migrations
 * leave as they were through their stores, whose statements are still those versions' (a store
 * that one day writes a column the old version lacks fails here, and this file then writes that
 * table by SQL too). A throttling window and a pending challenge as well, which the upgrade must keep.
 */
export async function writeOldVersion(
  storage: KyselyStorage,
  accounts: OldAccounts,
  version: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8,
): Promise<void> {
  const { db, dialect, tables: t } = storage;
  const { to } = await migrateSchema(db, dialect, t, 1, version);
  if (to !== version) throw new Error(`setup: the schema went to version ${to}, not ${version}`);
  const context = storeContext(db, dialect, t);
  // Versions 1 and 2 have no address columns (migration 3 adds them).
  const oldUsers = accounts.users.map((user) => {
    const { email: _, email_verified: __, verified_email_key: ___, ...row } = toUserRow(user);
    return version >= 3 ? toUserRow(user) : row;
  });
  await db.insertInto(t.users).values(oldUsers).execute();
  for (const totp of accounts.totp) {
    await totpStore(context).putPending(totp);
    if (totp.enabled) await totpStore(context).enable(totp.userId);
  }
  const { alice } = accounts;
  await recoveryCodeStore(context).replace(alice.id, accounts.recoveryCodeHashes, 1);
  // Version 1's sessions have no last_used_at, user_agent or address (migration 2 adds them), no
  // version before 4 has auth_time (migration 4 adds it), none before 5 the refresh columns,
  // none before 6 the active organization, none before 8 the impersonator.
  const sessionRows = accounts.sessions.map((session) => {
    const { impersonator_id: _impersonator, ...beforeEight } = toSessionRow(session);
    const { active_org_id: _active, ...beforeSix } = beforeEight;
    const { refresh_hash: _, refresh_generation: __, refresh_expires_at: ___, ...beforeFive } = beforeSix;
    const { auth_time: ____, ...beforeFour } = beforeFive;
    const { last_used_at: _____, user_agent: ______, address: _______, ...versionOne } = beforeFour;
    return version === 1 ? versionOne : version < 4 ? beforeFour : version === 4 ? beforeFive : beforeSix;
  });
  await db.insertInto(t.sessions).values(sessionRows).execute();
  if (version >= 6) await writeOrganization(storage, accounts);
  if (version >= 7) await apiKeyStore(context).createApiKey(oldApiKey(accounts));
  if (version === 8) {
    const serviceAccounts = serviceAccountStore(context);
    await serviceAccounts.createServiceAccount(oldServiceAccount(accounts));
    if ((await serviceAccounts.addServiceAccountCredential(oldServiceAccountSecret, 1, 1)) !== "added")
      throw new Error("setup: no service account secret");
  }
  for (const token of accounts.refreshTokens) await insertLegacyRefreshToken(storage, token);
  // No version before 9 has the passkeys' user_handle (migration 9 adds it).
  const passkeyRows = accounts.passkeys.map((passkey) => {
    const { user_handle: _, ...beforeNine } = toPasskeyRow(passkey);
    return beforeNine;
  });
  await db.insertInto(t.passkeys).values(passkeyRows).execute();
  for (const identity of accounts.identities) await identityStore(context).link(identity);
  for (const { key, value } of accounts.settings) await settingsStore(context).set(key, value, 1);
  await counterStore(context).hit("account:kept", 5, 4_000_000_000_000, 1);
  await challengeStore(context).put({
    id: "kept-challenge",
    kind: "totp_login",
    userId: null,
    data: {},
    attempts: 0,
    createdAt: 1,
    expiresAt: 4_000_000_000_000,
  });
}

/** The organization version 6 holds: Bob's, Alice a member, an invitation, a domain; active in the session of Bob's first sign-in. */
export const oldOrganization = {
  id: "org-old",
  slug: "old-org",
  name: "Bob's old organization",
  rules: { requireSecondFactor: false, signInMethods: null },
  createdAt: 1,
  updatedAt: 1,
};

async function writeOrganization(storage: KyselyStorage, accounts: OldAccounts): Promise<void> {
  const { db, dialect, tables: t } = storage;
  const organizations = organizationStore(storeContext(db, dialect, t));
  const { bob, alice } = accounts;
  const member = (userId: string, roles: string[]) => ({
    orgId: oldOrganization.id,
    userId,
    roles,
    createdAt: 1,
    lastActiveAt: null,
  });
  if (!(await organizations.createOrganization(oldOrganization, member(bob.id, ["owner"]))))
    throw new Error("setup: no organization");
  await organizations.addMember(member(alice.id, ["member"]));
  await organizations.createInvitation({
    id: "invitation-old",
    orgId: oldOrganization.id,
    email: "carol@example.com",
    roles: ["member"],
    tokenHash: sha256("invitation-old"),
    invitedBy: bob.id,
    createdAt: 1,
    expiresAt: 4_000_000_000_000,
    acceptedAt: null,
    acceptedBy: null,
    revokedAt: null,
  });
  await organizations.addDomain({
    orgId: oldOrganization.id,
    domain: "old.example",
    verificationValue: "portcullis-verification=old",
    createdAt: 1,
    verifiedAt: null,
  });
  const sessionId = sessionIdOf((accounts.bobSignIns[0] as TokenSet).accessToken);
  if (!(await organizations.setActiveOrganization(sessionId, bob.id, oldOrganization.id, 2))) {
    throw new Error("setup: the organization is not active in Bob's session");
  }
}

/** The API key version 7 holds: Bob's, for his organization, used once. */
export function oldApiKey({ bob }: OldAccounts): ApiKeyRecord {
  return {
    id: "key-old",
    userId: bob.id,
    hash: sha256("pc_live_old"),
    start: "pc_live_old",
    name: "Bob's old key",
    scopes: ["deploy"],
    tokenVersion: bob.tokenVersion,
    orgId: oldOrganization.id,
    createdAt: 1,
    expiresAt: 4_000_000_000_000,
    lastUsedAt: 2,
    revokedAt: null,
  };
}

/** The service account version 8 holds: made by Bob. */
export function oldServiceAccount({ bob }: OldAccounts): ServiceAccountRecord {
  return {
    id: "sa-old",
    name: "Old nightly",
    roles: ["reports"],
    scopes: ["reports:read"],
    disabled: false,
    tokenVersion: 0,
    createdAt: 1,
    createdBy: bob.id,
  };
}

/** The secret of {@link oldServiceAccount}. */
export const oldServiceAccountSecret: ServiceAccountCredentialRecord = {
  id: "cred-old",
  serviceAccountId: "sa-old",
  kind: "secret",
  secretHash: sha256("pcs_live_old"),
  start: "pcs_live_old",
  createdAt: 1,
  expiresAt: null,
  lastUsedAt: null,
};

/** The tables migration 6 added, which no older version has: {@link rowCounts} leaves them out. */
export const organizationTables = [
  "organizations",
  "organizationMembers",
  "organizationInvitations",
  "organizationDomains",
] as const;

/** The table migration 7 added, which no older version has: {@link rowCounts} leaves it out. */
export const apiKeyTables = ["apiKeys"] as const;

/** The tables migration 8 added, which no older version has: {@link rowCounts} leaves them out. */
export const serviceAccountTables = ["serviceAccounts", "serviceAccountCredentials"] as const;

/** How many rows each table of the storage that schema `version` (5 unless given) has holds. */
export async function rowCounts(storage: KyselyStorage, version = 5): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const skipped = new Set<string>([
    "schema",
    ...(version < 6 ? organizationTables : []),
    ...(version < 7 ? apiKeyTables : []),
    ...(version < 8 ? serviceAccountTables : []),
  ]);
  for (const [role, table] of Object.entries(storage.tables)) {
    if (skipped.has(role)) continue;
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(table)}`.execute(storage.db);
    counts[role] = Number(rows[0]?.count);
  }
  return counts;
}
