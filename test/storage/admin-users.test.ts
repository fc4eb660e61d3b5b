// Issue 21 item 5 on every store: the admin routes' listing (UserStore.list behind cursor paging
// and the username-prefix search), the detail counts (sessions and passkeys per user) and the
// changes, over HTTP, on memory storage, PGlite, PostgreSQL and MariaDB (AD-1). The store-level
// conformance of `list` itself is the conformance kit's.
import { type Auth, type Storage, createAuth, createUser, memoryStorage } from "@portcullis/core";
import { type KyselyStorage, migrate } from "@portcullis/kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { everyDatabase, serverMissing } from "../../packages/kysely/src/databases.test-support.js";
import { createTestUser, testAudience, testIssuer, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type CallResult, call, post } from "../http/client.js";
import { expectEnvelope } from "../http/contract-suite.js";
import { type RunningServer, startExpress5 } from "../http/servers.js";

const base = "/api/v1/auth";
const users = `${base}/admin/users`;

/** A store under test, opened once for this file. */
interface Store {
  name: string;
  missing: () => Promise<string | null>;
  open(): Promise<{ storage: Storage; close(): Promise<void> }>;
}

const sqlStore = (open: () => Promise<{ storage: KyselyStorage; drop(): Promise<void> }>) => async () => {
  const { storage, drop } = await open();
  await migrate(storage);
  return { storage, close: drop };
};

const stores: Store[] = [
  { name: "memory storage", missing: async () => null, open: async () => ({ storage: memoryStorage(), close: async () => {} }) },
  ...everyDatabase.map((database) => ({
    name: database.name,
    missing: async () => (database.url === null ? null : serverMissing(database.url)),
    open: sqlStore(() => database.open()),
  })),
];

/** 250 usernames in no order, sharing prefixes, some whose key differs from their spelling. */
const manyNames = Array.from({ length: 250 }, (_, index) => {
  const n = (index * 37) % 250;
  return n % 50 === 7 ? `Mixed-${String(n).padStart(3, "0")}` : `user-${String(n).padStart(3, "0")}`;
});

const namesOf = (page: CallResult) => (page.body.data.users as { username: string }[]).map((user) => user.username);

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/admin-users.test.ts", await store.missing());

  describeStore(`the admin routes on ${store.name}`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let auth: Auth;
    let server: RunningServer;
    let token: string;
    const clock = { now: Date.parse("2030-01-01T00:00:00Z") };

    /** Every page of a listing over HTTP, following the cursors. */
    async function allPages(query: string): Promise<CallResult[]> {
      const pages = [await call(server, "GET", `${users}?${query}`, { token })];
      for (let cursor = pages[0]?.body.data.nextCursor; cursor; cursor = pages.at(-1)?.body.data.nextCursor) {
        pages.push(await call(server, "GET", `${users}?${query}&cursor=${encodeURIComponent(cursor)}`, { token }));
      }
      for (const page of pages) expectEnvelope(page, 0);
      return pages;
    }

    beforeAll(async () => {
      opened = await store.open();
      auth = createAuth({
        storage: opened.storage,
        issuer: testIssuer,
        audience: testAudience,
        secrets: {
          signing: "admin-users-signing-secret-0123456789abcdef",
          encryption: "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
        },
        now: () => clock.now,
      });
      server = await startExpress5(auth);
      await createTestUser(auth, "root", ["admin"]);
      for (const username of manyNames) await createUser(auth, { username });
      const signedIn = await post(server, `${base}/login`, { username: "root", password: testPassword });
      token = signedIn.body.data.accessToken;
    });

    afterAll(async () => {
      await server?.close();
      await opened?.close();
    });

    it("AD-1: 251 users in pages of 100 and of 7 over HTTP: each once, in the order of their keys, the last page without a cursor", async () => {
      const expected = ["root", ...manyNames].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
      const hundreds = await allPages("limit=100");
      expect(hundreds.map((page) => page.body.data.users.length)).toEqual([100, 100, 51]);
      expect(hundreds.flatMap(namesOf)).toEqual(expected);
      expect(hundreds.at(-1)?.body.data.nextCursor).toBeNull();
      const sevens = await allPages("limit=7");
      expect(sevens).toHaveLength(36);
      expect(sevens.flatMap(namesOf)).toEqual(expected);
      const first = await call(server, "GET", users, { token });
      expect(namesOf(first)).toEqual(expected.slice(0, 20));
    });

    it("AD-1: q finds a username prefix among names that share it, case-insensitively, across pages", async () => {
      const prefixed = (q: string, limit: number) =>
        allPages(`limit=${limit}&q=${encodeURIComponent(q)}`).then((pages) => pages.flatMap(namesOf));
      expect(await prefixed("user-00", 3)).toEqual([
        "user-000",
        "user-001",
        "user-002",
        "user-003",
        "user-004",
        "user-005",
        "user-006",
        "user-008",
        "user-009",
      ]);
      expect(await prefixed("MIXED-", 2)).toEqual(["Mixed-007", "Mixed-057", "Mixed-107", "Mixed-157", "Mixed-207"]);
      expect(await prefixed("mixed-1", 100)).toEqual(["Mixed-107", "Mixed-157"]);
      expect(await prefixed("user-24", 4)).toHaveLength(10);
      expect(await prefixed("user-2499", 4)).toEqual([]);
      expect(await prefixed("%", 4)).toEqual([]);
      expect(await prefixed("_", 4)).toEqual([]);
      expect(await prefixed("R", 4)).toEqual(["root"]);
    });

    it("AD-1: a cursor that is not one of ours, or one sent with another q, is 40002", async () => {
      const first = await call(server, "GET", `${users}?limit=5&q=user`, { token });
      const cursor = first.body.data.nextCursor as string;
      const [key, tag] = cursor.split(".") as [string, string];
      const made = `${Buffer.from("user-100").toString("base64url")}.${tag}`;
      for (const bad of [made, `${key}.${tag.slice(1)}A`, `${key}.`, "x", `${key}.${tag}&cursor=${cursor}`]) {
        expectEnvelope(await call(server, "GET", `${users}?limit=5&q=user&cursor=${bad}`, { token }), 40002);
      }
      expectEnvelope(await call(server, "GET", `${users}?limit=5&q=mixed&cursor=${cursor}`, { token }), 40002);
      expectEnvelope(await call(server, "GET", `${users}?limit=5&q=user&cursor=${cursor}`, { token }), 0);
    });

    it("AD-1: a user's detail, a role change, disabling, and ending sessions, with the store's sessions", async () => {
      const alice = await createTestUser(auth, "alice");
      const sessions = [
        await post(server, `${base}/login`, { username: "alice", password: testPassword }),
        await post(server, `${base}/login`, { username: "alice", password: testPassword }),
      ];
      const detail = await call(server, "GET", `${users}/${alice.id}`, { token });
      expectEnvelope(detail, 0);
      expect(detail.body.data).toMatchObject({ username: "alice", disabled: false, sessions: 2, passkeys: 0, identities: [] });
      const ended = await call(server, "DELETE", `${users}/${alice.id}/sessions`, { token });
      expect(ended.body.data).toEqual({ ended: 2 });
      for (const session of sessions) {
        expectEnvelope(await post(server, `${base}/refresh`, { refreshToken: session.body.data.refreshToken }), 40101);
      }
      const changed = await call(server, "PATCH", `${users}/${alice.id}`, { token, json: { roles: ["editor"], disabled: true } });
      expectEnvelope(changed, 0);
      expect(changed.body.data).toMatchObject({ roles: ["editor"], disabled: true });
      expect((await call(server, "GET", `${users}/${alice.id}`, { token })).body.data).toMatchObject({
        sessions: 0,
        disabled: true,
      });
      expectEnvelope(await post(server, `${base}/login`, { username: "alice", password: testPassword }), 40300);
    });
  });
}
