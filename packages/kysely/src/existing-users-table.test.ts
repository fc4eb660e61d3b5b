// The three usual cases of the `users` option (issue 38 item 3, docs/existing-users-table.md), on
// PGlite, PostgreSQL and MariaDB: a fresh database whose users table is the service's own; an
// existing users table with email and a bcrypt hash, adopted in place; a users table in another
// schema (MariaDB: database). Each builds the host's table with columns Portcullis never names,
// fills it, runs Portcullis on it (sign-up, sign-in with the adopted hash, sessions, TOTP) and
// compares the host's rows column by column before and after.

import { randomBytes } from "node:crypto";
import {
  type Auth,
  ErrorCode,
  beginTotpSetup,
  createUser,
  enableTotp,
  listPasskeys,
  listSessions,
  login,
  refresh,
  register,
  saveDirectoryPolicy,
  verifyTotp,
  webauthnBegin,
  webauthnFinish,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { afterEach, beforeEach, expect, it } from "vitest";
import {
  base32Decode,
  createTestUser,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  testPassword,
  totpCodeAt,
} from "../../../test/fixtures/auth.js";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { sha256 } from "../../core/src/crypto/random.js";
import { fakeDirectory, groupsDn, person, workingPolicy } from "../../core/src/directory/directory.test-support.js";
import { userHandleOf } from "../../core/src/webauthn/ceremony.js";
import { adoptExistingUsers } from "./adopt.js";
import { everyDatabase, serverMissing } from "./databases.test-support.js";
import { latestSchemaVersion, migrate } from "./migrate.js";
import { migrateSchema } from "./migrations.js";
import { type HostScratch, hostRows, hostScratch } from "./users-table.test-support.js";

/** bcrypt (cost 5) of {@link testPassword}, as the host's own sign-up stored it. */
const bcryptOfTestPassword = "$2b$05$PcyMLc92IJvGkWE5PqCWSusuoaPNNyR6GtWK1Mn4OvsO82XUIWeby";
/** bcrypt (cost 4) of another password. */
const bcryptOfOther = "$2b$04$vQ92EE3l4Q.mwEzfOLzTuuTh0CkV5nD807V7MBf7L0FxxqOaSpEoG";

/** Signs in with a password and, when TOTP is on, the next code; answers the token set. */
async function signIn(auth: Auth, username: string, password = testPassword) {
  const result = await login(auth, { username, password });
  if (result.status !== "authenticated") throw new Error(`expected tokens, got ${result.status}`);
  return result.tokens;
}

/** Turns TOTP on for `userId` and proves that a sign-in then needs a code, which it passes with one. */
async function totpRoundTrip(testAuth: ReturnType<typeof makeTestAuth>, userId: string, username: string): Promise<void> {
  const { auth } = testAuth;
  const setup = await beginTotpSetup(auth, { userId, password: testPassword });
  const secret = base32Decode(setup.secret);
  await enableTotp(auth, { userId, password: testPassword, code: await totpCodeAt(auth, secret, -1) });
  const first = await login(auth, { username, password: testPassword });
  expect(first.status).toBe("totp_required");
  if (first.status !== "totp_required") return;
  const tokens = await verifyTotp(auth, { tempToken: first.tempToken, code: await nextTotpCode(testAuth, secret) });
  expect(tokens.user.id).toBe(userId);
}

/** The host's table of each case, per dialect: extra columns, NOT NULL ones with defaults. */
const tables = {
  fresh: {
    postgres: `create table users (id uuid primary key default gen_random_uuid(), email varchar(320) not null unique,
      display_name text not null default 'new user', plan varchar(20) not null default 'free',
      created timestamptz not null default now(), newsletter boolean)`,
    mysql: `create table users (id uuid primary key default uuid(), email varchar(320) not null unique,
      display_name varchar(100) not null default 'new user', plan varchar(20) not null default 'free',
      created timestamp not null default current_timestamp, newsletter boolean) engine=InnoDB`,
  },
  existing: {
    postgres: `create table users (id serial primary key, email varchar(320) not null unique, password_digest varchar(100),
      display_name text not null default 'new user', plan varchar(20) not null default 'free',
      created timestamptz not null default now(), last_seen timestamptz)`,
    mysql: `create table users (id int unsigned auto_increment primary key, email varchar(320) not null unique,
      password_digest varchar(100), display_name varchar(100) not null default 'new user',
      plan varchar(20) not null default 'free', created timestamp not null default current_timestamp,
      last_seen timestamp null) engine=InnoDB`,
  },
  apart: {
    postgres: (schema: string) => `create table ${schema}.members (id bigint generated always as identity primary key,
      login varchar(64) not null unique, email varchar(320), password_hash varchar(100),
      display_name text not null default 'member', created timestamptz not null default now())`,
    mysql: (schema: string) => `create table ${schema}.members (id bigint auto_increment primary key,
      login varchar(64) not null unique, email varchar(320), password_hash varchar(100),
      display_name varchar(100) not null default 'member', created timestamp not null default current_timestamp) engine=InnoDB`,
  },
};

for (const { name, url } of everyDatabase) {
  const missing = url === null ? null : await serverMissing(url);
  describeNeedingService(`packages/kysely/src/existing-users-table.test.ts (${name})`, missing)(
    `the service's own users table on ${name}`,
    () => {
      let scratch: HostScratch;
      beforeEach(async () => {
        scratch = await hostScratch(name);
      });
      afterEach(async () => {
        await scratch?.drop();
      });

      it("case 1, a fresh database: sign-ups become rows of the service's new users table (UUIDs), its own rows left as they were", async () => {
        await scratch.run(tables.fresh[scratch.dialect]);
        await scratch.run(
          "insert into users (id, email, display_name, plan, newsletter) values ('0b7e4a86-3a5f-4f7e-9a51-5d6c1c8e2f10', 'staff@example.com', 'Staff', 'team', true)",
        );
        const before = await hostRows(scratch, "users");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "uuid" }, columns: { email: "email" } },
        });
        expect(await migrate(storage)).toEqual({ from: 0, to: expect.any(Number) });
        const testAuth = makeTestAuth({ storage });
        const { auth } = testAuth;

        const alice = await createUser(auth, { username: "alice", email: "alice@example.com", password: testPassword });
        expect(alice.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        const tokens = await signIn(auth, "alice");
        expect(tokens.user.id).toBe(alice.id);
        const renewed = await refresh(auth, { refreshToken: tokens.refreshToken });
        expect(renewed.user.id).toBe(alice.id);
        expect(await listSessions(auth, { userId: alice.id })).toHaveLength(1);
        await totpRoundTrip(testAuth, alice.id, "alice");

        const after = await hostRows(scratch, "users");
        expect(after.filter((row) => row.id !== alice.id)).toEqual(before);
        expect(after.find((row) => row.id === alice.id)).toMatchObject({
          email: "alice@example.com",
          display_name: "new user",
          plan: "free",
          newsletter: null,
        });
        // The staff row has no account: Portcullis knows only the users it made or adopted.
        expect(await storage.users.findById("0b7e4a86-3a5f-4f7e-9a51-5d6c1c8e2f10")).toBeNull();
      });

      it("case 2, an existing users table (serial ids, email, bcrypt): adopted in place, the hash imported and re-hashed in Portcullis's table; the host's rows left as they were", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run(
          `insert into users (email, password_digest, display_name, plan) values
            ('bob@example.com', '${bcryptOfTestPassword}', 'Bob', 'pro'),
            ('carol@example.com', '${bcryptOfOther}', 'Carol', 'free'),
            ('dave@example.com', null, 'Dave', 'free'),
            (' padded@example.com', '${bcryptOfOther}', 'Padded', 'free')`,
        );
        const before = await hostRows(scratch, "users");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email", passwordHash: "password_digest" } },
        });
        await migrate(storage);
        const skipped: string[] = [];
        const withoutPassword: string[] = [];
        const adoption = await adoptExistingUsers(storage, {
          batchSize: 2,
          onSkipped: ({ id }) => skipped.push(id),
          onWithoutPassword: ({ id }) => withoutPassword.push(id),
        });
        // The padded address is no username Portcullis accepts: that row is skipped, and named.
        expect(adoption).toEqual({ read: 4, adopted: 3, withoutPassword: 1, skipped: 1 });
        expect(withoutPassword).toEqual(["3"]);
        expect(skipped).toEqual(["4"]);
        // Idempotent: a second run adopts nothing more (it tries the skipped row again).
        expect(await adoptExistingUsers(storage)).toEqual({ read: 1, adopted: 0, withoutPassword: 0, skipped: 1 });

        const testAuth = makeTestAuth({ storage });
        const { auth } = testAuth;
        const bob = await signIn(auth, "bob@example.com");
        expect(bob.user.id).toBe("1");
        // PW-1: the imported bcrypt hash was re-hashed to argon2id, in Portcullis's table.
        const [account] = await scratch.run("select password_hash from auth_accounts where id = 1");
        expect(String(account?.password_hash)).toMatch(/^\$argon2id\$/);
        expect(await signIn(auth, "bob@example.com")).toMatchObject({ user: { id: "1" } });
        await expect(login(auth, { username: "dave@example.com", password: testPassword })).rejects.toThrow();

        const erin = await createUser(auth, { username: "erin", email: "erin@example.com", password: testPassword });
        expect(erin.id).toBe("5");
        expect((await signIn(auth, "erin")).user.id).toBe("5");
        const session = await signIn(auth, "bob@example.com");
        await refresh(auth, { refreshToken: session.refreshToken });
        expect(await listSessions(auth, { userId: "1" })).toHaveLength(3);
        await totpRoundTrip(testAuth, "1", "bob@example.com");

        const after = await hostRows(scratch, "users");
        expect(after.slice(0, 4)).toEqual(before);
        expect(after[4]).toMatchObject({
          id: "5",
          email: "erin@example.com",
          password_digest: null,
          display_name: "new user",
          plan: "free",
        });
        expect(await adoptExistingUsers(storage)).toEqual({ read: 1, adopted: 0, withoutPassword: 0, skipped: 1 });
      });

      it("case 3, a users table in another schema (MariaDB: database): Portcullis's tables apart reference it; adopted by login column, the host's rows left as they were", async () => {
        await scratch.run(tables.apart[scratch.dialect](scratch.other));
        await scratch.run(
          `insert into ${scratch.other}.members (login, email, password_hash, display_name) values
            ('Frank', 'frank@example.com', '${bcryptOfTestPassword}', 'Frank F'),
            ('grace', null, '${bcryptOfOther}', 'Grace G')`,
        );
        const table = `${scratch.other}.members`;
        const before = await hostRows(scratch, table);
        const storage = await scratch.storage({
          users: {
            table: "members",
            schema: scratch.other,
            id: { type: "integer" },
            columns: { username: "login", email: "email", passwordHash: "password_hash" },
          },
        });
        await migrate(storage);
        expect(await adoptExistingUsers(storage)).toEqual({ read: 2, adopted: 2, withoutPassword: 0, skipped: 0 });
        const testAuth = makeTestAuth({ storage });
        const { auth } = testAuth;
        const frank = await signIn(auth, "frank");
        expect(frank.user).toMatchObject({ id: "1", username: "Frank" });
        await refresh(auth, { refreshToken: frank.refreshToken });
        await totpRoundTrip(testAuth, "1", "frank");
        const heidi = await createUser(auth, { username: "heidi", password: testPassword });
        expect(heidi.id).toBe("3");
        expect((await signIn(auth, "heidi")).user.id).toBe("3");

        const after = await hostRows(scratch, table);
        expect(after.slice(0, 2)).toEqual(before);
        expect(after[2]).toMatchObject({ id: "3", login: "heidi", email: null, password_hash: null, display_name: "member" });
        // Portcullis's tables are in the connection's own schema, none in the host's.
        expect(await tablesIn(scratch, scratch.other)).toEqual(["members"]);
      });

      it("a directory user's first sign-in on a table of integer ids: the account and its link made in one write, under the table's own id", async () => {
        await scratch.run(tables.apart[scratch.dialect](scratch.other));
        const table = `${scratch.other}.members`;
        const storage = await scratch.storage({
          users: {
            table: "members",
            schema: scratch.other,
            id: { type: "integer" },
            columns: { username: "login", email: "email" },
          },
        });
        await migrate(storage);
        const { auth } = makeTestAuth({ storage, directory: fakeDirectory([person("ivan", [groupsDn.engineers])]) });
        await saveDirectoryPolicy(auth, workingPolicy);
        const signInIvan = () => login(auth, { username: "ivan", password: "ivan directory password", provider: "directory" });

        const first = await signInIvan();
        expect(first).toMatchObject({
          status: "authenticated",
          tokens: { user: { id: "1", username: "ivan", roles: ["engineer"] } },
        });
        expect(await signInIvan()).toMatchObject({ status: "authenticated", tokens: { user: { id: "1" } } });
        expect(await storage.identities.find("directory", "uuid-ivan")).toMatchObject({ userId: "1" });
        expect(await hostRows(scratch, table)).toEqual([expect.objectContaining({ id: "1", login: "ivan", email: null })]);
      });

      it("RT-2 (issue 39 item 1): a database of schema version 4 built on your users table migrates to 5; a session's token of before refreshes once, through your table, and a spent one is reuse", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run("insert into users (email, display_name) values ('olga@example.com', 'Olga')");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrateSchema(storage.db, storage.dialect, storage.tables, 1, 4, storage.usersTable);
        const testAuth = makeTestAuth({ storage });
        const now = testAuth.clock.now;
        // What the release before issue 39 stored: the account, a session, its first token spent by
        // a refresh and the replacement outstanding.
        await scratch.run(`insert into auth_accounts (id, username, username_key, password_hash, roles, disabled, token_version,
          source, created_at, updated_at, email_verified, verified_email_key)
          values (1, 'olga', 'olga', null, '["user"]', false, 0, 'local', ${now}, ${now}, false, null)`);
        await scratch.run(`insert into auth_sessions (id, user_id, token_version, amr, auth_time, created_at, expires_at, revoked_at,
          last_used_at, user_agent, address) values ('s-olga', 1, 0, '["pwd"]', ${now}, ${now}, ${now + 86_400_000}, null, ${now}, null, null)`);
        const [spent, outstanding] = [randomBytes(32).toString("base64url"), randomBytes(32).toString("base64url")];
        await scratch.run(`insert into auth_refresh_tokens (hash, session_id, user_id, created_at, expires_at, spent_at) values
          ('${sha256(spent)}', 's-olga', 1, ${now}, ${now + 3_600_000}, ${now + 1}),
          ('${sha256(outstanding)}', 's-olga', 1, ${now + 1}, ${now + 3_600_000}, null)`);
        expect(await migrate(storage)).toEqual({ from: 4, to: latestSchemaVersion });

        testAuth.clock.advance(1000);
        const { auth } = testAuth;
        const renewed = await refresh(auth, { refreshToken: outstanding });
        expect(renewed.user).toMatchObject({ id: "1", username: "olga", email: "olga@example.com" });
        expect((await refresh(auth, { refreshToken: renewed.refreshToken })).refreshToken.startsWith("s-olga.2.")).toBe(true);
        await expect(refresh(auth, { refreshToken: outstanding })).rejects.toMatchObject({ code: ErrorCode.InvalidToken });
        expect((await storage.sessions.findSession("s-olga"))?.revokedAt).toBe(testAuth.clock.now);
        await expect(refresh(auth, { refreshToken: spent })).rejects.toMatchObject({ code: ErrorCode.InvalidToken });
        expect(await scratch.run("select count(*) as n from auth_refresh_tokens")).toEqual([{ n: expect.anything() }]);
      });

      it("OR-7 (issue 40): a database of schema version 5 built on your users table migrates to 6; its sessions have no active organization, and your users become members by your ids", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run("insert into users (email, display_name) values ('olga@example.com', 'Olga')");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrateSchema(storage.db, storage.dialect, storage.tables, 1, 5, storage.usersTable);
        const testAuth = makeTestAuth({ storage });
        const now = testAuth.clock.now;
        await scratch.run(`insert into auth_accounts (id, username, username_key, password_hash, roles, disabled, token_version,
          source, created_at, updated_at, email_verified, verified_email_key)
          values (1, 'olga', 'olga', null, '["user"]', false, 0, 'local', ${now}, ${now}, false, null)`);
        const hash = sha256(randomBytes(32).toString("base64url"));
        await scratch.run(`insert into auth_sessions (id, user_id, token_version, amr, auth_time, created_at, expires_at, revoked_at,
          last_used_at, user_agent, address, refresh_hash, refresh_generation, refresh_expires_at)
          values ('s-olga', 1, 0, '["pwd"]', ${now}, ${now}, ${now + 86_400_000}, null, ${now}, null, null, '${hash}', 0, ${now + 3_600_000})`);
        expect(await migrate(storage)).toEqual({ from: 5, to: latestSchemaVersion });

        const session = {
          id: "s-olga",
          userId: "1",
          tokenVersion: 0,
          amr: ["pwd"],
          authTime: now,
          createdAt: now,
          expiresAt: now + 86_400_000,
          revokedAt: null,
          lastUsedAt: now,
          userAgent: null,
          address: null,
          refreshHash: hash,
          refreshGeneration: 0,
          refreshExpiresAt: now + 3_600_000,
          activeOrgId: null,
          impersonatorId: null,
        };
        expect(await storage.sessions.findSession("s-olga")).toEqual(session);
        expect(await storage.sessions.findTokenState?.("s-olga")).toMatchObject({
          session: { activeOrgId: null },
          orgRoles: null,
        });
        const organizations = storage.organizations;
        if (organizations === undefined) throw new Error("the SQL storage has organizations");
        const organization = {
          id: "org-1",
          slug: "olgas",
          name: "Olga's",
          rules: { requireSecondFactor: false, signInMethods: null },
          createdAt: now,
          updatedAt: now,
        };
        const owner = { orgId: "org-1", userId: "1", roles: ["owner"], createdAt: now, lastActiveAt: null };
        expect(await organizations.createOrganization(organization, owner)).toBe(true);
        expect(await organizations.listUserOrganizations("1")).toEqual([{ organization, membership: owner }]);
        // An id not of your table's form is no one's.
        expect(await organizations.findMembership("org-1", "1abc")).toBeNull();
        expect(await organizations.setActiveOrganization("s-olga", "1abc", "org-1", now + 1)).toBe(false);
        expect(await organizations.setActiveOrganization("s-olga", "1", "org-1", now + 1)).toBe(true);
        expect(await storage.sessions.findTokenState?.("s-olga")).toMatchObject({
          session: { activeOrgId: "org-1" },
          orgRoles: ["owner"],
        });
      });

      it("issue 41: a database of schema version 6 built on your users table, with organizations and sessions, migrates to 7 keeping every row; your users' API keys go by your ids", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run(
          "insert into users (email, display_name) values ('olga@example.com', 'Olga'), ('piet@example.com', 'Piet')",
        );
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrateSchema(storage.db, storage.dialect, storage.tables, 1, 6, storage.usersTable);
        const testAuth = makeTestAuth({ storage });
        const now = testAuth.clock.now;
        await scratch.run(`insert into auth_accounts (id, username, username_key, password_hash, roles, disabled, token_version,
          source, created_at, updated_at, email_verified, verified_email_key) values
          (1, 'olga', 'olga', null, '["user"]', false, 3, 'local', ${now}, ${now}, false, null),
          (2, 'piet', 'piet', null, '["user","admin"]', true, 0, 'local', ${now}, ${now}, false, null)`);
        const hash = sha256(randomBytes(32).toString("base64url"));
        await scratch.run(`insert into auth_sessions (id, user_id, token_version, amr, auth_time, created_at, expires_at, revoked_at,
          last_used_at, user_agent, address, refresh_hash, refresh_generation, refresh_expires_at, active_org_id)
          values ('s-olga', 1, 3, '["pwd"]', ${now}, ${now}, ${now + 86_400_000}, null, ${now}, null, null, '${hash}', 0, ${now + 3_600_000}, 'org-1')`);
        await scratch.run(`insert into auth_organizations (id, slug, name, rules, created_at, updated_at)
          values ('org-1', 'olgas', 'Olga''s', '{"requireSecondFactor":false,"signInMethods":null}', ${now}, ${now})`);
        await scratch.run(`insert into auth_organization_members (org_id, user_id, roles, created_at, last_active_at) values
          ('org-1', 1, '["owner"]', ${now}, ${now}), ('org-1', 2, '["member"]', ${now}, null)`);
        await scratch.run(`insert into auth_organization_invitations (id, org_id, email, roles, token_hash, invited_by, created_at,
          expires_at, accepted_at, accepted_by, revoked_at)
          values ('inv-1', 'org-1', 'ros@example.com', '["member"]', '${sha256("inv-1")}', 1, ${now}, ${now + 86_400_000}, null, null, null)`);
        await scratch.run(`insert into auth_organization_domains (org_id, domain, verification_value, created_at, verified_at, verified_domain)
          values ('org-1', 'olga.example', 'portcullis-verification=x', ${now}, ${now}, 'olga.example')`);
        const tablesBefore = [
          "users",
          "auth_accounts",
          "auth_sessions",
          ...Object.values(storage.tables).filter((table) => table.includes("organization")),
        ];
        const before = await Promise.all(tablesBefore.map((table) => scratch.run(`select * from ${table}`)));
        expect(await migrate(storage)).toEqual({ from: 6, to: latestSchemaVersion });
        // Every row as it was, the sessions with migration 8's impersonator column beside (null).
        const after = await Promise.all(tablesBefore.map((table) => scratch.run(`select * from ${table}`)));
        expect(after.map((rows) => rows.map(({ impersonator_id: _, ...row }) => row))).toEqual(before);
        expect(after[tablesBefore.indexOf("auth_sessions")]?.map((row) => row.impersonator_id)).toEqual([null]);
        expect(await storage.sessions.findTokenState?.("s-olga")).toMatchObject({
          session: { activeOrgId: "org-1" },
          orgRoles: ["owner"],
        });

        const apiKeys = storage.apiKeys;
        if (apiKeys === undefined) throw new Error("the SQL storage has API keys");
        const key = (userId: string, id: string) => ({
          id,
          userId,
          hash: sha256(id),
          start: "pc_live_Ab",
          name: id,
          scopes: ["reports:read"],
          tokenVersion: 3,
          orgId: "org-1",
          createdAt: now,
          expiresAt: now + 86_400_000,
          lastUsedAt: null,
          revokedAt: null,
        });
        const olgas = key("1", "key-olga");
        const piets = key("2", "key-piet");
        await apiKeys.createApiKey(olgas);
        await apiKeys.createApiKey(piets);
        expect(await apiKeys.findApiKeyByHash(olgas.hash)).toEqual({
          key: olgas,
          user: { tokenVersion: 3, disabled: false, roles: ["user"] },
        });
        expect(await apiKeys.findApiKeyByHash(piets.hash)).toEqual({
          key: piets,
          user: { tokenVersion: 0, disabled: true, roles: ["user", "admin"] },
        });
        // A key of no user of yours is refused by the foreign key; an id not of your table's form is no one's.
        await expect(apiKeys.createApiKey(key("99", "key-nobody"))).rejects.toThrow();
        expect(await apiKeys.listApiKeys("1")).toEqual([olgas]);
        expect(await apiKeys.listApiKeys("1abc")).toEqual([]);
        expect(await apiKeys.renameApiKey("1abc", olgas.id, "x")).toBe(false);
        expect(await apiKeys.revokeApiKey("1abc", olgas.id, now + 1)).toBeNull();
        expect(await apiKeys.revokeApiKey("2", olgas.id, now + 1)).toBeNull();
        expect(await apiKeys.revokeApiKey("1", olgas.id, now + 1)).toEqual({ ...olgas, revokedAt: now + 1 });
        expect(await apiKeys.revokeApiKey(null, piets.id, now + 2)).toEqual({ ...piets, revokedAt: now + 2 });
      });

      it("SA-2, IMP-3 (issue 41 items 3/4): a database of schema version 7 built on your users table migrates to 8 keeping every row; an impersonator and an account's maker go by your ids", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run(
          "insert into users (email, display_name) values ('olga@example.com', 'Olga'), ('piet@example.com', 'Piet')",
        );
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrateSchema(storage.db, storage.dialect, storage.tables, 1, 7, storage.usersTable);
        const now = makeTestAuth({ storage }).clock.now;
        await scratch.run(`insert into auth_accounts (id, username, username_key, password_hash, roles, disabled, token_version,
          source, created_at, updated_at, email_verified, verified_email_key) values
          (1, 'olga', 'olga', null, '["user"]', false, 3, 'local', ${now}, ${now}, false, null),
          (2, 'piet', 'piet', null, '["user","admin"]', false, 0, 'local', ${now}, ${now}, false, null)`);
        const hash = sha256(randomBytes(32).toString("base64url"));
        await scratch.run(`insert into auth_sessions (id, user_id, token_version, amr, auth_time, created_at, expires_at, revoked_at,
          last_used_at, user_agent, address, refresh_hash, refresh_generation, refresh_expires_at, active_org_id)
          values ('s-olga', 1, 3, '["pwd"]', ${now}, ${now}, ${now + 86_400_000}, null, ${now}, null, null, '${hash}', 0, ${now + 3_600_000}, null)`);
        await scratch.run(`insert into auth_api_keys (id, user_id, hash, start, name, scopes, token_version, org_id, created_at,
          expires_at, last_used_at, revoked_at)
          values ('key-olga', 1, '${sha256("key-olga")}', 'pc_live_Ol', 'Olga''s', '["reports:read"]', 3, null, ${now}, ${now + 86_400_000}, null, null)`);
        const kept = ["users", "auth_accounts", "auth_api_keys"];
        const before = await Promise.all(kept.map((table) => scratch.run(`select * from ${table}`)));
        const sessionsBefore = await scratch.run("select * from auth_sessions");
        expect(await migrate(storage)).toEqual({ from: 7, to: latestSchemaVersion });
        expect(await Promise.all(kept.map((table) => scratch.run(`select * from ${table}`)))).toEqual(before);
        expect(await scratch.run("select * from auth_sessions")).toEqual(
          sessionsBefore.map((row) => ({ ...row, impersonator_id: null })),
        );
        const olgas = await storage.sessions.findSession("s-olga");
        expect(olgas?.impersonatorId).toBeNull();

        // Piet (an administrator, id 2) acting as Olga; an account Piet made.
        const impersonated = { ...(olgas as NonNullable<typeof olgas>), id: "s-piet-as-olga", impersonatorId: "2" };
        await storage.sessions.createSession(impersonated);
        expect(await storage.sessions.findSession(impersonated.id)).toEqual(impersonated);
        expect((await storage.sessions.listByUser("1", now, 10)).map((session) => session.impersonatorId).sort()).toEqual([
          "2",
          null,
        ]);
        const serviceAccounts = storage.serviceAccounts;
        if (serviceAccounts === undefined) throw new Error("the SQL storage has service accounts");
        const account = {
          id: "sa-reports",
          name: "Reports",
          roles: ["reports"],
          scopes: ["reports:read"],
          disabled: false,
          tokenVersion: 0,
          createdAt: now,
          createdBy: "2",
        };
        await serviceAccounts.createServiceAccount(account);
        expect(await serviceAccounts.findServiceAccount(account.id)).toEqual(account);
        expect(await serviceAccounts.updateServiceAccount(account.id, { raiseTokenVersion: true })).toEqual({
          ...account,
          tokenVersion: 1,
        });
      });

      it("WA-4, PL-15: a database of schema version 8 built on your users table (integer ids) migrates to 9 keeping every row; a passkey of before has your id's handle (null), signs in and lists, and a passkey's own handle is then kept", async () => {
        // A passkey of a software authenticator, registered elsewhere, written below as Olga's (id 1).
        const elsewhere = makeTestAuth();
        const authenticator = makeTestAuthenticator();
        const registrant = await createTestUser(elsewhere.auth, "registrant");
        const ceremony = await webauthnRegisterBegin(elsewhere.auth, {
          userId: registrant.id,
          label: "Olga's key",
          password: testPassword,
        });
        await webauthnRegisterFinish(elsewhere.auth, {
          userId: registrant.id,
          ceremonyId: ceremony.ceremonyId,
          response: authenticator.register(ceremony.options),
        });
        const [registered] = await elsewhere.auth.storage.passkeys.listByUser(registrant.id);
        if (registered === undefined) throw new Error("setup: no passkey");

        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run(
          "insert into users (email, display_name) values ('olga@example.com', 'Olga'), ('piet@example.com', 'Piet')",
        );
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrateSchema(storage.db, storage.dialect, storage.tables, 1, 8, storage.usersTable);
        const testAuth = makeTestAuth({ storage });
        const now = testAuth.clock.now;
        await scratch.run(`insert into auth_accounts (id, username, username_key, password_hash, roles, disabled, token_version,
          source, created_at, updated_at, email_verified, verified_email_key) values
          (1, 'olga', 'olga', null, '["user"]', false, 0, 'local', ${now}, ${now}, false, null),
          (2, 'piet', 'piet', null, '["user"]', false, 0, 'local', ${now}, ${now}, false, null)`);
        const transports = JSON.stringify(registered.transports).replaceAll("'", "''");
        await scratch.run(`insert into auth_passkeys (id, user_id, public_key, counter, transports, label, backup_eligible,
          backup_state, created_at, last_used_at) values
          ('${registered.id}', 1, '${registered.publicKey}', ${registered.counter}, '${transports}', 'Olga''s key',
          ${registered.backupEligible}, ${registered.backupState}, ${now}, null)`);
        const kept = ["users", "auth_accounts"];
        const before = await Promise.all(kept.map((table) => scratch.run(`select * from ${table}`)));
        const passkeysBefore = await scratch.run("select * from auth_passkeys");
        expect(await migrate(storage)).toEqual({ from: 8, to: latestSchemaVersion });
        expect(await Promise.all(kept.map((table) => scratch.run(`select * from ${table}`)))).toEqual(before);
        expect(await scratch.run("select * from auth_passkeys")).toEqual(
          passkeysBefore.map((row) => ({ ...row, user_handle: null })),
        );
        const olgas = { ...registered, userId: "1", label: "Olga's key", createdAt: now, userHandle: null };
        expect(await storage.passkeys.findById(registered.id)).toEqual(olgas);
        expect(await storage.passkeys.listByUser("1")).toEqual([olgas]);

        // Olga signs in with it, her authenticator sending the handle of her id in your table.
        const { auth } = testAuth;
        const signIn = await webauthnBegin(auth, { username: "olga" });
        const finished = await webauthnFinish(auth, {
          ceremonyId: signIn.ceremonyId,
          response: authenticator.authenticate(signIn.options, { userHandle: userHandleOf("1") }),
        });
        expect(finished.status === "authenticated" && finished.tokens.user.id).toBe("1");
        expect((await listPasskeys(auth, { userId: "1" })).map((passkey) => passkey.label)).toEqual(["Olga's key"]);

        // The new column is in force under your ids: Piet's passkey made at sign-up keeps its handle.
        const piets = { ...olgas, id: "credential-piet", userId: "2", label: "Piet's key", userHandle: "p".repeat(86) };
        expect(await storage.passkeys.create(piets)).toBe(true);
        expect(await storage.passkeys.findById(piets.id)).toEqual(piets);
        expect(await storage.passkeys.listByUser("2")).toEqual([piets]);
      });

      it("a host table with a NOT NULL column without a default that Portcullis does not write: migrate fails naming it, and creates nothing", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run("alter table users add column country varchar(2) not null");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await expect(migrate(storage)).rejects.toThrow(
          /NOT NULL columns without a default that Portcullis does not write: country/,
        );
        expect(await tablesIn(scratch, null)).toEqual(["users"]);
      });

      it("a NOT NULL email column: a user without an address is 40001 'email is required' (sign-up, createUser, removing the address), and nothing is written", async () => {
        await scratch.run(tables.existing[scratch.dialect]);
        await scratch.run("insert into users (email, display_name) values ('hank@example.com', 'Hank')");
        const storage = await scratch.storage({
          prefix: "auth_",
          users: { table: "users", id: { type: "integer" }, columns: { email: "email" } },
        });
        await migrate(storage);
        const { auth } = makeTestAuth({ storage, signUp: { enabled: true } });
        const ivy = await createUser(auth, { username: "ivy", email: "ivy@example.com", password: testPassword });
        const hostBefore = await hostRows(scratch, "users");
        const accountsBefore = await scratch.run("select * from auth_accounts order by id");

        const refusal = { code: ErrorCode.MissingParameter, message: "email is required" };
        await expect(createUser(auth, { username: "nomail", password: testPassword })).rejects.toMatchObject(refusal);
        await expect(register(auth, { username: "nomail2", password: testPassword })).rejects.toMatchObject(refusal);
        await expect(storage.users.setEmail(ivy.id, null, Date.now())).rejects.toMatchObject(refusal);

        expect(await hostRows(scratch, "users")).toEqual(hostBefore);
        expect(await scratch.run("select * from auth_accounts order by id")).toEqual(accountsBefore);
        expect(await storage.users.findByUsernameKey("nomail")).toBeNull();
        expect((await storage.users.findById(ivy.id))?.email).toBe("ivy@example.com");
      });
    },
  );
}

/** The tables of a schema (MariaDB: database), null for the connection's own, in name order. */
async function tablesIn(scratch: HostScratch, schema: string | null): Promise<string[]> {
  const where = schema === null ? (scratch.dialect === "mysql" ? "database()" : "current_schema()") : `'${schema}'`;
  const rows = await scratch.run(
    `select table_name as name from information_schema.tables where table_schema = ${where} order by table_name`,
  );
  return rows.map((row) => String(row.name));
}
