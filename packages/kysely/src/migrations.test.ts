// Migrations and the schema-version check, on PGlite, PostgreSQL and MariaDB.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ErrorCode,
  type PasskeyRecord,
  type SessionRecord,
  type TokenSet,
  isAuthError,
  listIdentities,
  listPasskeys,
  login,
  reauthenticate,
  refresh,
  verifyAccessToken,
  verifyTotp,
  webauthnBegin,
  webauthnFinish,
} from "@portcullis/core";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { generousThrottle, makeTestAuth, testPassword, totpCodeAt } from "../../../test/fixtures/auth.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { sha256 } from "../../core/src/crypto/random.js";
import { main } from "./cli.js";
import {
  mariadbScratch,
  mariadbUrl,
  postgresScratch,
  postgresUrl,
  scratchName,
  serverMissing,
} from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { checkSchema, latestSchemaVersion, migrate } from "./migrate.js";
import { migrateSchema, schemaVersionOf } from "./migrations.js";
import { pgliteStorage } from "./pglite.js";
import { tablesWithPrefix } from "./schema.js";
import { existingTables } from "./schema-hints.js";
import {
  makeOldAccounts,
  migratedSession,
  oldApiKey,
  oldOrganization,
  oldServiceAccount,
  oldServiceAccountSecret,
  organizationTables,
  rowCounts,
  sessionIdOf,
  writeOldVersion,
} from "./schema-v1.test-support.js";

/** The checks every database gets, on a storage whose database has no Portcullis tables yet. */
function migrationChecks(fresh: (prefix: string) => Promise<{ storage: KyselyStorage; drop(): Promise<void> }>) {
  const dropped: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of dropped) await drop();
  });
  const open = async (prefix = "") => {
    const database = await fresh(prefix);
    dropped.push(database.drop);
    return database.storage;
  };

  /**
   * A database an older release made and filled (schema `version`), which every operation refuses
   * until it is migrated; migrated, it holds as many rows of each table as before.
   */
  const migratedFrom = async (version: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8) => {
    const accounts = await makeOldAccounts();
    const storage = await open("app_");
    await writeOldVersion(storage, accounts, version);
    const before = await rowCounts(storage, version);
    expect(Object.values(before).every((count) => count > 0)).toBe(true);
    await expect(storage.users.findById(accounts.bob.id)).rejects.toThrow(`at version ${version}, older than this code`);
    expect(await migrate(storage)).toEqual({ from: version, to: latestSchemaVersion });
    expect(await rowCounts(storage, version)).toEqual(before);
    return { accounts, storage };
  };

  it("an empty database: every operation says to migrate; migrate brings it to the newest version, once", async () => {
    const storage = await open();
    await expect(storage.users.findById("anyone")).rejects.toThrow(
      /^@portcullis\/kysely: no Portcullis tables without a prefix in the (schema|database) "\w+" \(there is no table portcullis_schema\); create them first: run `await migrate\(storage\)` or `npx portcullis migrate --url <database URL>`$/,
    );
    await expect(checkSchema(storage)).rejects.toThrow("no Portcullis tables");
    expect(await migrate(storage)).toEqual({ from: 0, to: latestSchemaVersion });
    expect(await migrate(storage)).toEqual({ from: latestSchemaVersion, to: latestSchemaVersion });
    await checkSchema(storage);
    expect(await storage.users.findById("anyone")).toBeNull();
  });

  it("a database newer than the code is refused, and never migrated down", async () => {
    const storage = await open();
    await migrate(storage);
    await storage.db
      .updateTable(storage.tables.schema)
      .set({ version: latestSchemaVersion + 1 })
      .execute();
    const newer = `the database schema is at version ${latestSchemaVersion + 1}, newer than this code (${latestSchemaVersion}); upgrade @portcullis/kysely, it never migrates down`;
    await expect(checkSchema(storage)).rejects.toThrow(newer);
    await expect(migrate(storage)).rejects.toThrow(newer);
    await expect(storage.sessions.findSession("any")).rejects.toThrow(newer);
  });

  it("two prefixes keep two sets of tables apart in one database", async () => {
    const first = await open("app_one_");
    const second = await open("app_two_");
    await migrate(first);
    await migrate(second);
    await first.settings.set("k", { which: 1 }, 1);
    await second.settings.set("k", { which: 2 }, 1);
    expect(await first.settings.get("k")).toEqual({ which: 1 });
    expect(await second.settings.get("k")).toEqual({ which: 2 });
  });

  it("the longest prefix (31 characters) migrates to the newest version: every name it makes fits MySQL's 64 characters", async () => {
    const longest = await open(`z${"x".repeat(29)}_`);
    expect(await migrate(longest)).toEqual({ from: 0, to: latestSchemaVersion });
    await longest.settings.set("k", { long: true }, 1);
    expect(await longest.settings.get("k")).toEqual({ long: true });
  });

  it("five processes' worth of concurrent migrations apply each step once", async () => {
    const storage = await open();
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(storage)));
    expect(results.filter((result) => result.from === 0)).toHaveLength(1);
    await checkSchema(storage);
  });

  it("SE-1, AD-1 (issue 21): a database made and filled by schema version 1 keeps every row through migration 2, and serves them", async () => {
    const { accounts, storage } = await migratedFrom(1);
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    for (const session of accounts.sessions) {
      // A session of before the upgrade was last used, as far as anyone knows, when it began.
      const upgraded = {
        ...migratedSession(accounts, session),
        lastUsedAt: session.createdAt,
        userAgent: null,
        address: null,
        authTime: session.createdAt,
      };
      expect(await storage.sessions.findSession(session.id)).toEqual(upgraded);
    }
    for (const token of accounts.refreshTokens)
      expect(await storage.sessions.findLegacyRefreshToken?.(token.hash)).toEqual(token);
    expect(await storage.totp.get(accounts.alice.id)).toEqual(accounts.totp[0]);
    expect(await storage.recoveryCodes.count(accounts.alice.id)).toBe(accounts.recoveryCodeHashes.length);
    expect(await storage.passkeys.listByUser(accounts.bob.id)).toEqual(accounts.passkeys);
    expect(await storage.identities.listByUser(accounts.bob.id)).toEqual(accounts.identities);
    expect(await storage.settings.get("kept-setting")).toEqual(accounts.settings[0]?.value);

    // Served by a real auth instance with the keys of the one that wrote them.
    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    expect((await storage.users.list({ limit: 10 })).map((user) => user.usernameKey)).toEqual(["alice", "bob", "carol ünal"]);
    const bobSessions = await storage.sessions.listByUser(accounts.bob.id, auth.now(), 10);
    expect(bobSessions.map((session) => session.id).sort()).toEqual(
      accounts.sessions
        .filter((session) => session.userId === accounts.bob.id)
        .map((session) => session.id)
        .sort(),
    );

    const refreshed = await refresh(auth, { refreshToken: accounts.bobSignIns[0]?.refreshToken as string });
    expect((await verifyAccessToken(auth, { token: refreshed.accessToken })).userId).toBe(accounts.bob.id);
    const reused = await refresh(auth, { refreshToken: accounts.spentRefreshToken }).catch((error: unknown) => error);
    expect(isAuthError(reused, ErrorCode.InvalidToken)).toBe(true);
    const other = await refresh(auth, { refreshToken: accounts.bobSignIns[1]?.refreshToken as string });
    expect(other.user.id).toBe(accounts.bob.id);

    const ceremony = await webauthnBegin(auth, { username: "bob" });
    const withPasskey = await webauthnFinish(auth, {
      ceremonyId: ceremony.ceremonyId,
      response: accounts.bobAuthenticator.authenticate(ceremony.options),
    });
    expect(withPasskey.status === "authenticated" && withPasskey.tokens.user.id).toBe(accounts.bob.id);
    expect((await listPasskeys(auth, { userId: accounts.bob.id })).map((passkey) => passkey.label)).toEqual(["Bob's key"]);
    expect((await listIdentities(auth, { userId: accounts.bob.id })).map((identity) => identity.provider)).toEqual(["github"]);

    const aliceFirst = await login(auth, { username: "alice", password: testPassword });
    if (aliceFirst.status !== "totp_required") throw new Error("alice's TOTP was not asked for");
    clock.advance(30_000);
    const aliceIn = await verifyTotp(auth, {
      tempToken: aliceFirst.tempToken,
      code: await totpCodeAt(auth, accounts.alice.secret),
    });
    expect(aliceIn.user).toMatchObject({ id: accounts.alice.id, totpEnabled: true });
  });

  it("EV-1 (issue 24): a database made and filled by schema version 2 keeps every row through migration 3; its users have no address, and a verified one is then unique", async () => {
    const { accounts, storage } = await migratedFrom(2);
    for (const user of accounts.users) {
      expect(await storage.users.findById(user.id)).toEqual({ ...user, email: null, emailVerified: false });
    }
    for (const session of accounts.sessions) {
      expect(await storage.sessions.findSession(session.id)).toEqual({
        ...migratedSession(accounts, session),
        authTime: session.createdAt,
      });
    }
    for (const token of accounts.refreshTokens)
      expect(await storage.sessions.findLegacyRefreshToken?.(token.hash)).toEqual(token);
    expect(await storage.totp.get(accounts.alice.id)).toEqual(accounts.totp[0]);
    expect(await storage.passkeys.listByUser(accounts.bob.id)).toEqual(accounts.passkeys);
    expect(await storage.identities.listByUser(accounts.bob.id)).toEqual(accounts.identities);

    // The new unique key is in force on the migrated table: one verified holder, unverified copies allowed.
    const address = { email: "Bob@Example.com", verified: true };
    expect((await storage.users.setEmail(accounts.bob.id, address, 2)).outcome).toBe("set");
    expect(await storage.users.setEmail(accounts.carol.id, { ...address, email: "bob@example.COM" }, 2)).toEqual({
      outcome: "taken",
    });
    expect((await storage.users.setEmail(accounts.carol.id, { ...address, verified: false }, 2)).outcome).toBe("set");
    expect((await storage.users.findByVerifiedEmail("bob@example.com"))?.id).toBe(accounts.bob.id);

    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const refreshed = await refresh(auth, { refreshToken: accounts.bobSignIns[0]?.refreshToken as string });
    expect(refreshed.user).toMatchObject({ id: accounts.bob.id, email: "Bob@Example.com", emailVerified: true });
  });

  it("STUP-1, ASVS 10.3.4 (issue 37): a database made and filled by schema version 3 keeps every row through migration 4; each session's auth_time is its sign-in, which refreshed tokens carry", async () => {
    const { accounts, storage } = await migratedFrom(3);
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    expect(accounts.sessions.length).toBeGreaterThan(1);
    for (const session of accounts.sessions) {
      expect(await storage.sessions.findSession(session.id)).toEqual({
        ...migratedSession(accounts, session),
        authTime: session.createdAt,
      });
    }
    for (const token of accounts.refreshTokens)
      expect(await storage.sessions.findLegacyRefreshToken?.(token.hash)).toEqual(token);
    expect(await storage.passkeys.listByUser(accounts.bob.id)).toEqual(accounts.passkeys);

    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const signIn = accounts.bobSignIns[1] as (typeof accounts.bobSignIns)[number];
    const session = accounts.sessions.find((each) => each.id === sessionIdOf(signIn.accessToken));
    clock.advance(3_600_000);
    const refreshed = await refresh(auth, { refreshToken: signIn.refreshToken });
    const access = await verifyAccessToken(auth, { token: refreshed.accessToken });
    expect({ authTime: access.authTime, amr: access.amr }).toEqual({
      authTime: Math.floor((session?.createdAt as number) / 1000),
      amr: ["pwd"],
    });
    // The new column is written and read: a re-authentication begins a session whose sign-in is now.
    clock.advance(60_000);
    const renewed = await reauthenticate(auth, { userId: access.userId, sessionId: access.sessionId, password: testPassword });
    expect(await storage.sessions.findSession(sessionIdOf(renewed.accessToken))).toMatchObject({
      authTime: clock.now,
      amr: ["pwd"],
      expiresAt: session?.expiresAt,
    });
  });

  it("RT-2, RT-3 (issue 39 item 1): a database made and filled by schema version 4 keeps every row through migration 5; each live session's outstanding token refreshes once, its replacement again, the old one presented again is reuse, and so is a token spent before the migration", async () => {
    const { accounts, storage } = await migratedFrom(4);
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    expect(accounts.outstandingRefreshTokens.length).toBe(accounts.sessions.length);
    for (const session of accounts.sessions) {
      const migrated = migratedSession(accounts, session);
      expect(migrated.refreshHash).not.toBeNull();
      expect(await storage.sessions.findSession(session.id)).toEqual(migrated);
    }
    for (const token of accounts.refreshTokens)
      expect(await storage.sessions.findLegacyRefreshToken?.(token.hash)).toEqual(token);

    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const reuses: string[] = [];
    auth.events.on("refresh_token.reused", (event) => {
      reuses.push(event.sessionId);
    });
    const refused = (refreshToken: string) =>
      refresh(auth, { refreshToken }).then(
        () => false,
        (error: unknown) => isAuthError(error, ErrorCode.InvalidToken),
      );
    const refreshTokensRows = async () => (await rowCounts(storage)).refreshTokens;
    const rowsBefore = await refreshTokensRows();
    const [first, second] = accounts.bobSignIns as [(typeof accounts.bobSignIns)[number], (typeof accounts.bobSignIns)[number]];

    // Bob's second session: its token of before the upgrade refreshes once, its replacement (a
    // token of this release, generation 1) again; the old one presented again is reuse (RT-2): the
    // session ends, and with it the newest token.
    clock.advance(60_000);
    const renewed = await refresh(auth, { refreshToken: second.refreshToken });
    const secondId = sessionIdOf(second.accessToken);
    expect(renewed.refreshToken.startsWith(`${secondId}.1.`)).toBe(true);
    expect((await verifyAccessToken(auth, { token: renewed.accessToken })).sessionId).toBe(secondId);
    const again = await refresh(auth, { refreshToken: renewed.refreshToken });
    expect(again.refreshToken.startsWith(`${secondId}.2.`)).toBe(true);
    expect(await refused(second.refreshToken)).toBe(true);
    expect(reuses).toEqual([secondId]);
    expect((await storage.sessions.findSession(secondId))?.revokedAt).toBe(clock.now);
    expect(await refused(again.refreshToken)).toBe(true);

    // Bob's first session: its outstanding token refreshes once; the token a refresh spent before
    // the upgrade is reuse, and ends the session.
    const firstId = sessionIdOf(first.accessToken);
    const firstRenewed = await refresh(auth, { refreshToken: first.refreshToken });
    expect(firstRenewed.refreshToken.startsWith(`${firstId}.1.`)).toBe(true);
    expect(await refused(accounts.spentRefreshToken)).toBe(true);
    expect(reuses).toEqual([secondId, firstId]);
    expect((await storage.sessions.findSession(firstId))?.revokedAt).toBe(clock.now);
    expect(await refused(firstRenewed.refreshToken)).toBe(true);

    // Every other live session's token of before the upgrade refreshes, once.
    const bobs = new Set([firstId, secondId]);
    for (const { sessionId, refreshToken } of accounts.outstandingRefreshTokens.filter(({ sessionId }) => !bobs.has(sessionId))) {
      expect((await refresh(auth, { refreshToken })).refreshToken.startsWith(`${sessionId}.1.`)).toBe(true);
      expect(await refused(refreshToken)).toBe(true);
    }
    // No refresh wrote a row of the old table.
    expect(await refreshTokensRows()).toBe(rowsBefore);
  });

  it("issue 40: a database at version 5 beside another application's organizations table: migrate refuses, naming it, and changes nothing", async () => {
    const storage = await open("app_");
    const { db, dialect, tables: t } = storage;
    await migrateSchema(db, dialect, t, 1, 5);
    await sql.raw(`create table ${t.organizations} (id integer primary key, title varchar(100))`).execute(db);
    await expect(migrate(storage)).rejects.toThrow(
      "@portcullis/kysely: migration 6 (organizations) cannot create its tables: the table app_organizations already exists and is not Portcullis's. Rename it, or move Portcullis's tables under a prefix of their own (docs/storage.md, \"Migrations\"), then run migrate again; nothing was changed, the schema is still at version 5",
    );
    expect(await schemaVersionOf(db, dialect, t)).toBe(5);
    await sql.raw(`alter table ${t.organizations} rename to app_their_organizations`).execute(db);
    expect(await migrate(storage)).toEqual({ from: 5, to: latestSchemaVersion });
  });

  it("OR-7 (issue 40): a database made and filled by schema version 5 keeps every row through migration 6; its sessions have no active organization, its tokens still verify, and organizations then work", async () => {
    const { accounts, storage } = await migratedFrom(5);
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    expect(accounts.sessions.length).toBeGreaterThan(1);
    for (const session of accounts.sessions) {
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, activeOrgId: null });
      expect(await storage.sessions.findTokenState?.(session.id)).toMatchObject({
        session: { userId: session.userId, activeOrgId: null },
        orgRoles: null,
      });
    }
    for (const token of accounts.refreshTokens)
      expect(await storage.sessions.findLegacyRefreshToken?.(token.hash)).toEqual(token);
    for (const table of organizationTables) {
      const { rows } = await sql<{
        count: number | string;
      }>`select count(*) as count from ${sql.table(storage.tables[table])}`.execute(storage.db);
      expect(Number(rows[0]?.count)).toBe(0);
    }

    // An access token of before the upgrade verifies (its check reads the session, the user and the
    // new join of memberships in one statement).
    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const signIn = accounts.bobSignIns[1] as (typeof accounts.bobSignIns)[number];
    const access = await verifyAccessToken(auth, { token: signIn.accessToken });
    expect(access.userId).toBe(accounts.bob.id);

    // The new tables are in force: Bob's organization, active in his session.
    const organizations = storage.organizations;
    if (organizations === undefined) throw new Error("the SQL storage has organizations");
    const organization = {
      id: "org-bob",
      slug: "bobs",
      name: "Bob's",
      rules: { requireSecondFactor: false, signInMethods: null },
      createdAt: clock.now,
      updatedAt: clock.now,
    };
    const owner = { orgId: organization.id, userId: accounts.bob.id, roles: ["owner"], createdAt: clock.now, lastActiveAt: null };
    expect(await organizations.createOrganization(organization, owner)).toBe(true);
    expect(await organizations.setActiveOrganization(access.sessionId, accounts.bob.id, organization.id, clock.now)).toBe(true);
    expect(await storage.sessions.findTokenState?.(access.sessionId)).toMatchObject({
      session: { activeOrgId: organization.id },
      orgRoles: ["owner"],
    });
    expect(await organizations.deleteOrganization(organization.id)).toBe(true);
    expect((await storage.sessions.findSession(access.sessionId))?.activeOrgId).toBeNull();
  });

  it("issue 41: a database at version 6 beside another application's api_keys table: migrate refuses, naming it, and changes nothing", async () => {
    const storage = await open("app_");
    const { db, dialect, tables: t } = storage;
    await migrateSchema(db, dialect, t, 1, 6);
    await sql.raw(`create table ${t.apiKeys} (id integer primary key, secret varchar(100))`).execute(db);
    await expect(migrate(storage)).rejects.toThrow(
      "@portcullis/kysely: migration 7 (API keys) cannot create its tables: the table app_api_keys already exists and is not Portcullis's. Rename it, or move Portcullis's tables under a prefix of their own (docs/storage.md, \"Migrations\"), then run migrate again; nothing was changed, the schema is still at version 6",
    );
    expect(await schemaVersionOf(db, dialect, t)).toBe(6);
    await sql.raw(`alter table ${t.apiKeys} rename to app_their_api_keys`).execute(db);
    expect(await migrate(storage)).toEqual({ from: 6, to: latestSchemaVersion });
  });

  it("issue 41: a database made and filled by schema version 6 keeps every row through migration 7; its organizations and tokens still work, and API keys then do", async () => {
    const { accounts, storage } = await migratedFrom(6);
    const { bob, alice } = accounts;
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    const active = accounts.sessions.find(
      (session) => session.id === sessionIdOf((accounts.bobSignIns[0] as TokenSet).accessToken),
    );
    for (const session of accounts.sessions) {
      const activeOrgId = session === active ? oldOrganization.id : null;
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, activeOrgId });
    }
    const organizations = storage.organizations;
    const apiKeys = storage.apiKeys;
    if (organizations === undefined || apiKeys === undefined) throw new Error("the SQL storage has organizations and API keys");
    expect(await organizations.findOrganization(oldOrganization.id)).toEqual(oldOrganization);
    expect((await organizations.findMembership(oldOrganization.id, alice.id))?.roles).toEqual(["member"]);
    expect(await storage.sessions.findTokenState?.((active as SessionRecord).id)).toMatchObject({
      session: { activeOrgId: oldOrganization.id },
      orgRoles: ["owner"],
    });
    expect(await organizations.listDomains(oldOrganization.id)).toHaveLength(1);
    const { rows } = await sql<{
      count: number | string;
    }>`select count(*) as count from ${sql.table(storage.tables.apiKeys)}`.execute(storage.db);
    expect(Number(rows[0]?.count)).toBe(0);

    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const signIn = accounts.bobSignIns[1] as (typeof accounts.bobSignIns)[number];
    expect((await verifyAccessToken(auth, { token: signIn.accessToken })).userId).toBe(bob.id);

    // The new table is in force: a key of Bob's for his organization, found, used, listed and revoked once.
    const key = {
      id: "key-bob",
      userId: bob.id,
      hash: sha256("pc_live_bob"),
      start: "pc_live_bob",
      name: "Bob's deploys",
      scopes: ["deploy"],
      tokenVersion: bob.tokenVersion,
      orgId: oldOrganization.id,
      createdAt: clock.now,
      expiresAt: clock.now + 86_400_000,
      lastUsedAt: null,
      revokedAt: null,
    };
    await apiKeys.createApiKey(key);
    expect(await apiKeys.findApiKeyByHash(key.hash)).toEqual({
      key,
      user: { tokenVersion: bob.tokenVersion, disabled: bob.disabled, roles: bob.roles },
    });
    await apiKeys.recordApiKeyUse([{ id: key.id, at: clock.now + 1 }], 60_000);
    expect(await apiKeys.listApiKeys(bob.id)).toEqual([{ ...key, lastUsedAt: clock.now + 1 }]);
    expect(await apiKeys.revokeApiKey(alice.id, key.id, clock.now + 2)).toBeNull();
    expect(await apiKeys.revokeApiKey(bob.id, key.id, clock.now + 2)).toEqual({
      ...key,
      lastUsedAt: clock.now + 1,
      revokedAt: clock.now + 2,
    });
    // Deleting the organization leaves its keys (org_id is not a foreign key); the caller decides what they mean.
    expect(await organizations.deleteOrganization(oldOrganization.id)).toBe(true);
    expect((await apiKeys.findApiKeyByHash(key.hash))?.key.orgId).toBe(oldOrganization.id);
  });

  it("issue 41 items 3/4: a database at version 7 beside another application's service_accounts table: migrate refuses, naming it, and changes nothing", async () => {
    const storage = await open("app_");
    const { db, dialect, tables: t } = storage;
    await migrateSchema(db, dialect, t, 1, 7);
    await sql.raw(`create table ${t.serviceAccounts} (id integer primary key, owner varchar(100))`).execute(db);
    await expect(migrate(storage)).rejects.toThrow(
      "@portcullis/kysely: migration 8 (service accounts) cannot create its tables: the table app_service_accounts already exists and is not Portcullis's. Rename it, or move Portcullis's tables under a prefix of their own (docs/storage.md, \"Migrations\"), then run migrate again; nothing was changed, the schema is still at version 7",
    );
    expect(await schemaVersionOf(db, dialect, t)).toBe(7);
    expect(await existingTables(db, dialect, [t.serviceAccountCredentials])).toEqual([]);
    await sql.raw(`alter table ${t.serviceAccounts} rename to app_their_service_accounts`).execute(db);
    expect(await migrate(storage)).toEqual({ from: 7, to: latestSchemaVersion });
  });

  it("SA-2, IMP-3 (issue 41 items 3/4): a database made and filled by schema version 7 keeps every row through migration 8; its sessions, organizations and API keys still work, and the new tables take accounts whose credentials go with them", async () => {
    const { accounts, storage } = await migratedFrom(7);
    const { bob } = accounts;
    const { db, tables: t } = storage;
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    const active = accounts.sessions.find(
      (session) => session.id === sessionIdOf((accounts.bobSignIns[0] as TokenSet).accessToken),
    );
    for (const session of accounts.sessions) {
      const activeOrgId = session === active ? oldOrganization.id : null;
      expect(await storage.sessions.findSession(session.id)).toEqual({ ...session, activeOrgId });
    }
    const { rows: impersonations } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(t.sessions)}
      where impersonator_id is not null`.execute(db);
    expect(Number(impersonations[0]?.count)).toBe(0);
    expect(await storage.apiKeys?.findApiKeyByHash(oldApiKey(accounts).hash)).toEqual({
      key: oldApiKey(accounts),
      user: { tokenVersion: bob.tokenVersion, disabled: bob.disabled, roles: bob.roles },
    });
    expect(await storage.sessions.findTokenState?.((active as SessionRecord).id)).toMatchObject({
      session: { activeOrgId: oldOrganization.id },
      orgRoles: ["owner"],
    });
    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    expect((await verifyAccessToken(auth, { token: (accounts.bobSignIns[1] as TokenSet).accessToken })).userId).toBe(bob.id);

    // The new tables are in force: an account made by Bob with a secret and a key; the secret's hash
    // is unique; deleting the account deletes its credentials.
    const account = { id: "sa-old", name: "Nightly", roles: '["reports"]', scopes: '["reports:read"]', disabled: false };
    await db
      .insertInto(t.serviceAccounts)
      .values({ ...account, token_version: 0, created_at: clock.now, created_by: bob.id })
      .execute();
    const credential = (id: string, values: Record<string, unknown>) => ({
      id,
      service_account_id: account.id,
      created_at: clock.now,
      expires_at: null,
      last_used_at: null,
      secret_hash: null,
      start: null,
      public_jwk: null,
      ...values,
    });
    const jwk = JSON.stringify({ kty: "OKP", crv: "Ed25519", x: "A".repeat(43), kid: "k1", alg: "EdDSA" });
    await db
      .insertInto(t.serviceAccountCredentials)
      .values([
        credential("cred-secret", { kind: "secret", secret_hash: sha256("pcs_live_x"), start: "pcs_live_x" }),
        credential("cred-key", { kind: "jwk", public_jwk: jwk }),
      ])
      .execute();
    await expect(
      db
        .insertInto(t.serviceAccountCredentials)
        .values(credential("cred-again", { kind: "secret", secret_hash: sha256("pcs_live_x"), start: "pcs_live_x" }))
        .execute(),
    ).rejects.toThrow();
    const stored = await db.selectFrom(t.serviceAccountCredentials).select(["id", "public_jwk"]).orderBy("id").execute();
    expect(stored).toEqual([
      { id: "cred-key", public_jwk: jwk },
      { id: "cred-secret", public_jwk: null },
    ]);
    await db.deleteFrom(t.serviceAccounts).where("id", "=", account.id).execute();
    expect(await db.selectFrom(t.serviceAccountCredentials).selectAll().execute()).toEqual([]);

    // Through the stores: an account Bob made, with a secret read back with it, and a session of
    // Alice's in which Bob acts as her (IMP-3).
    const serviceAccounts = storage.serviceAccounts;
    if (serviceAccounts === undefined) throw new Error("the SQL storage has service accounts");
    const made = {
      id: "sa-new",
      name: "Deploys",
      roles: ["deploy"],
      scopes: ["deploy:*"],
      disabled: false,
      tokenVersion: 0,
      createdAt: clock.now,
      createdBy: bob.id,
    };
    await serviceAccounts.createServiceAccount(made);
    const secret = {
      id: "cred-new",
      serviceAccountId: made.id,
      kind: "secret" as const,
      secretHash: sha256("pcs_live_new"),
      start: "pcs_live_new",
      createdAt: clock.now,
      expiresAt: null,
      lastUsedAt: null,
    };
    expect(await serviceAccounts.addServiceAccountCredential(secret, 1, clock.now)).toBe("added");
    expect(await serviceAccounts.findServiceAccountClient(made.id)).toEqual({ account: made, credentials: [secret] });
    const impersonated = {
      ...(active as SessionRecord),
      id: "s-impersonated",
      userId: accounts.alice.id,
      impersonatorId: bob.id,
    };
    await storage.sessions.createSession(impersonated);
    expect(await storage.sessions.findSession(impersonated.id)).toEqual(impersonated);
  });

  it("WA-4, PL-15: a database made and filled by schema version 8 keeps every row through migration 9; its passkeys have the account's user handle (null) and still sign in and list, and a passkey's own handle is then kept", async () => {
    const { accounts, storage } = await migratedFrom(8);
    const { bob } = accounts;
    const { db, tables: t } = storage;
    for (const user of accounts.users) expect(await storage.users.findById(user.id)).toEqual(user);
    expect(accounts.passkeys).toHaveLength(1);
    for (const passkey of accounts.passkeys) {
      expect(passkey.userHandle).toBeNull();
      expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
    }
    expect(await storage.passkeys.listByUser(bob.id)).toEqual(accounts.passkeys);
    const { rows: handles } = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(t.passkeys)}
      where user_handle is not null`.execute(db);
    expect(Number(handles[0]?.count)).toBe(0);
    expect(await storage.serviceAccounts?.findServiceAccountClient(oldServiceAccount(accounts).id)).toEqual({
      account: oldServiceAccount(accounts),
      credentials: [oldServiceAccountSecret],
    });

    // Bob's passkey of before signs in (its authenticator sends his account's handle) and is listed.
    const { clock } = accounts.testAuth;
    const { auth } = makeTestAuth({ secrets: accounts.secrets, storage, throttle: generousThrottle, now: () => clock.now });
    const ceremony = await webauthnBegin(auth, { username: "bob" });
    const withPasskey = await webauthnFinish(auth, {
      ceremonyId: ceremony.ceremonyId,
      response: accounts.bobAuthenticator.authenticate(ceremony.options),
    });
    expect(withPasskey.status === "authenticated" && withPasskey.tokens.user.id).toBe(bob.id);
    expect((await listPasskeys(auth, { userId: bob.id })).map((passkey) => passkey.label)).toEqual(["Bob's key"]);

    // The new column is in force: a passkey made at sign-up keeps its handle (86 characters: 64 bytes).
    const [old] = accounts.passkeys as [PasskeyRecord];
    const signUp = { ...old, id: "credential-made-at-sign-up", label: "Sign-up key", userHandle: "h".repeat(86) };
    expect(await storage.passkeys.create(signUp)).toBe(true);
    expect(await storage.passkeys.findById(signUp.id)).toEqual(signUp);
    expect((await storage.passkeys.listByUser(bob.id)).map((passkey) => [passkey.id, passkey.userHandle]).sort()).toEqual(
      [
        [old.id, null],
        [signUp.id, signUp.userHandle],
      ].sort(),
    );
  });
}

describe("migrations on PGlite", () => {
  migrationChecks(async (prefix) => {
    const storage = await pgliteStorage({ dataDir: "memory://", prefix, migrate: false });
    return { storage, drop: () => storage.close() };
  });

  it("survives a restart: what one process stored, the next reads", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "portcullis-pglite-"));
    try {
      const first = await pgliteStorage({ dataDir });
      await first.settings.set("kept", { across: "restarts" }, 1);
      await first.close();
      const second = await pgliteStorage({ dataDir });
      expect(await second.settings.get("kept")).toEqual({ across: "restarts" });
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

for (const [name, url, scratch] of [
  ["PostgreSQL", postgresUrl, postgresScratch],
  ["MariaDB", mariadbUrl, mariadbScratch],
] as const) {
  describeNeedingService(`packages/kysely/src/migrations.test.ts (${name})`, await serverMissing(url))(
    `migrations on ${name}`,
    () => {
      migrationChecks(scratch);
    },
  );
}

const postgresMissing = await serverMissing(postgresUrl);

/** An output for `main` that keeps its lines. */
function captured() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) } };
}

describe("portcullis migrate", () => {
  it("migrates a PGlite data directory, then says it is current; bad arguments print the usage", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "portcullis-cli-"));
    const { output, out, err } = captured();
    try {
      expect(await main(["migrate", "--pglite", dataDir], {}, output)).toBe(0);
      expect(out.at(-1)).toBe(`schema migrated from version 0 to ${latestSchemaVersion}`);
      expect(await main(["migrate", "--pglite", dataDir, "--prefix", "other_"], {}, output)).toBe(0);
      expect(await main(["migrate", "--pglite", dataDir], {}, output)).toBe(0);
      expect(out.at(-1)).toBe(`schema already at version ${latestSchemaVersion}`);
      expect(await main(["migrate"], {}, output)).toBe(2);
      expect(await main(["migrate", "--pglite", dataDir, "--url", "postgres://x"], {}, output)).toBe(2);
      expect(await main(["migrate", "--nonsense"], {}, output)).toBe(2);
      expect(err).toHaveLength(3);
      for (const line of err) expect(line).toContain("Usage: portcullis migrate");
      expect(await main(["--help"], {}, output)).toBe(0);
      expect(out.at(-1)).toContain("Usage: portcullis migrate");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  describeNeedingService("packages/kysely/src/migrations.test.ts (PostgreSQL CLI)", postgresMissing)("on PostgreSQL", () => {
    it("migrates the database of --url (or DATABASE_URL) under a prefix, and reports a connection failure with exit code 1", async () => {
      const prefix = `${scratchName()}_`;
      const { output, out, err } = captured();
      const scratch = await postgresScratch();
      const storage = scratch.storage;
      try {
        expect(await main(["migrate", "--prefix", prefix], { DATABASE_URL: postgresUrl }, output)).toBe(0);
        expect(out.at(-1)).toBe(`schema migrated from version 0 to ${latestSchemaVersion}`);
        expect(await main(["migrate", "--url", "postgres://postgres@127.0.0.1:1/test"], {}, output)).toBe(1);
        expect(err.at(-1)).toMatch(/^migration failed: /);
      } finally {
        const t = tablesWithPrefix(prefix);
        for (const table of Object.values(t)) await sql.raw(`drop table if exists public.${table} cascade`).execute(storage.db);
        await scratch.drop();
      }
    });

    it("issue 23 item 4: beside another application's users table it exits 1 naming --prefix and connectStorage's prefix; with --prefix it migrates", async () => {
      const { output, out, err } = captured();
      const scratch = await postgresScratch();
      try {
        await sql.raw("create table users (id integer primary key)").execute(scratch.storage.db);
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(scratch.storage.db);
        const url = new URL(postgresUrl);
        url.searchParams.set("options", `-c search_path=${rows[0]?.schema}`);
        expect(await main(["migrate", "--url", url.href], {}, output)).toBe(1);
        expect(err).toEqual([
          `migration failed: @portcullis/kysely: cannot create the Portcullis tables in the schema "${rows[0]?.schema}": the table users already exists there and is not Portcullis's (there is no table portcullis_schema beside it). Give Portcullis's tables a prefix of their own so they live beside it: \`npx portcullis migrate --prefix auth_\` (with your --url or --pglite), or \`migrate(storage)\` on a storage made with that prefix, and the same prefix wherever the service makes its storage: \`connectStorage({ url, prefix: "auth_" })\` (kyselyStorage and pgliteStorage take prefix too)`,
        ]);
        expect(await main(["migrate", "--url", url.href, "--prefix", "auth_"], {}, output)).toBe(0);
        expect(out.at(-1)).toBe(`schema migrated from version 0 to ${latestSchemaVersion}`);
      } finally {
        await scratch.drop();
      }
    });
  });
});
