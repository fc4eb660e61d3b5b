/**
 * A database as release 0.1 (schema version 1, before issue 21), the release before issue 24
 * (schema version 2) or the one before issue 37 (schema version 3) made and filled it, for the migration tests: accounts made by the real flows on memory storage (an argon2id password, a
 * sealed TOTP secret and recovery codes, a passkey of a software authenticator, sessions with
 * live and spent refresh tokens, a linked identity, a setting), written into the version 1 tables
 * with the columns that schema has. Not a test file; excluded from the build.
 */
import { randomBytes } from "node:crypto";
import {
  type Auth,
  type IdentityRecord,
  type PasskeyRecord,
  type RefreshTokenRecord,
  type SessionRecord,
  type TokenSet,
  type TotpRecord,
  type UserRecord,
  login,
  refresh,
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
import type { KyselyStorage } from "./kysely-storage.js";
import { migrateSchema } from "./migrations.js";
import { challengeStore } from "./stores/challenges.js";
import { storeContext } from "./stores/context.js";
import { counterStore } from "./stores/counters.js";
import { identityStore } from "./stores/identities.js";
import { passkeyStore } from "./stores/passkeys.js";
import { recoveryCodeStore } from "./stores/recovery-codes.js";
import { sessionStore, toSessionRow } from "./stores/sessions.js";
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
  /** Bob's two password sign-ins; the first refreshed once, so its first refresh token is spent. */
  bobSignIns: TokenSet[];
  spentRefreshToken: string;
  users: UserRecord[];
  totp: TotpRecord[];
  recoveryCodeHashes: string[];
  sessions: SessionRecord[];
  refreshTokens: RefreshTokenRecord[];
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

  testAuth.clock.advance(1000);
  const first = await tokensOf(auth, "bob");
  testAuth.clock.advance(1000);
  const second = await tokensOf(auth, "bob");
  testAuth.clock.advance(1000);
  const refreshed = await refresh(auth, { refreshToken: first.refreshToken });

  const found = async <T>(read: Promise<T | null | undefined>): Promise<T> => {
    const record = await read;
    if (record === null || record === undefined) throw new Error("setup: a record the flows wrote is missing");
    return record;
  };
  const userIds = [alice.id, bobUser.id, carolUser.id];
  const users = await Promise.all(userIds.map((id) => found(auth.storage.users.findById(id))));
  const sessions = (await Promise.all(userIds.map((id) => auth.storage.sessions.listByUser(id, auth.now(), 100)))).flat();
  const refreshTokens = await Promise.all(
    [first, second, refreshed].map((tokens) => found(auth.storage.sessions.findRefreshToken(sha256(tokens.refreshToken)))),
  );
  return {
    testAuth,
    secrets,
    alice,
    bob: users[1] as UserRecord,
    carol: users[2] as UserRecord,
    bobAuthenticator,
    bobSignIns: [refreshed, second],
    spentRefreshToken: first.refreshToken,
    users,
    totp: [await found(auth.storage.totp.get(alice.id))],
    recoveryCodeHashes: alice.recoveryCodes.map((code) => hashRecoveryCode(alice.id, normalizeRecoveryCode(code) as string)),
    sessions,
    refreshTokens,
    passkeys: await auth.storage.passkeys.listByUser(bobUser.id),
    identities: await auth.storage.identities.listByUser(bobUser.id),
    settings: [{ key: "kept-setting", value: await auth.storage.settings.get("kept-setting") }],
  };
}

/**
 * Brings an empty database to schema version `version` (1, release 0.1's; 2, the release before
 * issue 24's; or 3, the release before issue 37's) and writes `accounts` into it as that release's storage did: the users, and at
 * version 1 the sessions, by SQL with the columns that schema has; the tables later migrations
 * leave as they were through their stores, whose statements are still those versions' (a store
 * that one day writes a column the old version lacks fails here, and this file then writes that
 * table by SQL too). A throttling window and a pending challenge as well, which the upgrade must keep.
 */
export async function writeOldVersion(storage: KyselyStorage, accounts: OldAccounts, version: 1 | 2 | 3): Promise<void> {
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
  // Version 1's sessions have no last_used_at, user_agent or address (migration 2 adds them), and
  // no version before 4 has auth_time (migration 4 adds it).
  const sessionRows = accounts.sessions.map((session) => {
    const { auth_time: _, ...beforeFour } = toSessionRow(session);
    const { last_used_at: __, user_agent: ___, address: ____, ...versionOne } = beforeFour;
    return version === 1 ? versionOne : beforeFour;
  });
  await db.insertInto(t.sessions).values(sessionRows).execute();
  for (const token of accounts.refreshTokens) await sessionStore(context).insertRefreshToken(token);
  for (const passkey of accounts.passkeys) await passkeyStore(context).create(passkey);
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

/** How many rows each table of the storage holds. */
export async function rowCounts(storage: KyselyStorage): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [role, table] of Object.entries(storage.tables)) {
    if (role === "schema") continue;
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(table)}`.execute(storage.db);
    counts[role] = Number(rows[0]?.count);
  }
  return counts;
}
