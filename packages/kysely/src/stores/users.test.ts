// users.list on SQL: the plan each database makes for it reads the unique index on username_key
// (AD-1: a prefix search that uses an index), and its order and prefix match do not depend on the
// database's locale.
import { type UserListQuery, compareCodePoints } from "@portcullis/core";
import { sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeedingService } from "../../../../test/fixtures/required-service.js";
import { sampleUser } from "../../../core/src/testing/conformance/samples.js";
import { everyDatabase, postgresIcuScratch, postgresUrl, serverMissing } from "../databases.test-support.js";
import type { KyselyStorage } from "../kysely-storage.js";
import { migrate } from "../migrate.js";
import { storeContext } from "./context.js";
import { listUsersQuery } from "./users.js";

/** Enough users that reading them all costs a planner far more than reading a page from an index. */
const userCount = 20_000;

/** Fills the users table with `userCount` users keyed `user-00000`…, in one statement, and refreshes the planner's statistics. */
async function fillUsers(storage: KyselyStorage): Promise<void> {
  const t = storage.tables;
  const columns = "id, username, username_key, password_hash, roles, disabled, token_version, source, created_at, updated_at";
  if (storage.dialect === "postgres") {
    await sql
      .raw(`insert into ${t.users} (${columns})
        select 'id-' || n, 'User-' || lpad(n::text, 5, '0'), 'user-' || lpad(n::text, 5, '0'), null, '[]', false, 0, 'local', 1, 1
        from generate_series(1, ${userCount}) as n`)
      .execute(storage.db);
    await sql.raw(`analyze ${t.users}`).execute(storage.db);
  } else {
    await sql
      .raw(`insert into ${t.users} (${columns})
        select concat('id-', seq), concat('User-', lpad(seq, 5, '0')), concat('user-', lpad(seq, 5, '0')), null, '[]', false, 0, 'local', 1, 1
        from seq_1_to_${userCount}`)
      .execute(storage.db);
    await sql.raw(`analyze table ${t.users}`).execute(storage.db);
  }
}

/** The plan of the statement `users.list(query)` sends, as text. */
async function planOf(storage: KyselyStorage, query: UserListQuery): Promise<string> {
  const rows = await listUsersQuery(storeContext(storage.db, storage.dialect, storage.tables), query).explain();
  return JSON.stringify(rows);
}

const queries: [string, UserListQuery][] = [
  ["a prefix", { limit: 20, usernameKeyPrefix: "user-123" }],
  ["a prefix and a cursor", { limit: 20, usernameKeyPrefix: "user-1", afterUsernameKey: "user-15000" }],
  ["a cursor", { limit: 20, afterUsernameKey: "user-10000" }],
  ["the first page", { limit: 20 }],
];

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/stores/users.test.ts (${database.name})`, missing)(
    `users.list on ${database.name} (${userCount} users)`,
    () => {
      let opened: Awaited<ReturnType<typeof database.open>>;
      beforeAll(async () => {
        opened = await database.open("");
        await migrate(opened.storage);
        await fillUsers(opened.storage);
      });
      afterAll(async () => {
        await opened?.drop();
      });

      for (const [what, query] of queries) {
        it(`AD-1: with ${what}, reads the unique index on username_key, never the whole table`, async () => {
          const plan = await planOf(opened.storage, query);
          const index = `${opened.storage.tables.users}_username_key`;
          const bounded = query.usernameKeyPrefix !== undefined || query.afterUsernameKey !== undefined;
          if (opened.storage.dialect === "postgres") {
            // The index searched for where the page starts (an Index Cond on the key), not walked
            // from its first entry with the condition as a Filter; the first page walks it in order.
            expect(plan).toMatch(new RegExp(`Index (Only )?Scan using ${index}`));
            if (bounded) expect(plan).toMatch(/Index Cond: \(+username_key\)::text [<>]/);
            expect(plan).not.toMatch(/Seq Scan|Filter:|Sort/);
          } else {
            // MariaDB's EXPLAIN: one row, the access type (a range over the index, or the index in
            // order for the first page) and the key it reads; "ALL" would be the full table scan.
            const [row] = JSON.parse(plan) as { type: string; key: string | null }[];
            expect(row?.key).toBe(index);
            expect(row?.type).toBe(bounded ? "range" : "index");
          }
        });
      }

      it("AD-1: the page the plan reads is the right one", async () => {
        const page = await opened.storage.users.list({ limit: 3, usernameKeyPrefix: "user-1", afterUsernameKey: "user-15000" });
        expect(page.map((user) => user.usernameKey)).toEqual(["user-15001", "user-15002", "user-15003"]);
      });
    },
  );
}

describeNeedingService("packages/kysely/src/stores/users.test.ts (PostgreSQL, ICU)", await serverMissing(postgresUrl))(
  "users.list on a PostgreSQL database whose collation is ICU en-US",
  () => {
    let opened: Awaited<ReturnType<typeof postgresIcuScratch>>;
    beforeAll(async () => {
      opened = await postgresIcuScratch("en-US");
      await migrate(opened.storage);
    });
    afterAll(async () => {
      await opened?.drop();
    });

    it("AD-1: lists in code point order and matches a prefix exactly, whatever the database's locale", async () => {
      const keys = ["a", "B", "b", "e", "é", "e1", "é1", "a%b", "a-b", "ab", "a b", "\uFF21", "\u{1F600}"];
      const users = keys.map((key) => sampleUser({ username: key, usernameKey: key }));
      for (const user of users) expect(await opened.storage.users.create(user)).toBe(true);
      const listed = await opened.storage.users.list({ limit: 100 });
      expect(listed.map((user) => user.usernameKey)).toEqual([...keys].sort(compareCodePoints));
      const withPrefix = async (prefix: string) =>
        (await opened.storage.users.list({ limit: 100, usernameKeyPrefix: prefix })).map((user) => user.usernameKey);
      expect(await withPrefix("a")).toEqual(["a", "a b", "a%b", "a-b", "ab"]);
      expect(await withPrefix("a%")).toEqual(["a%b"]);
      expect(await withPrefix("e")).toEqual(["e", "e1"]);
      expect(await withPrefix("é")).toEqual(["é", "é1"]);
      expect(await withPrefix("b")).toEqual(["b"]);
      const afterA = await opened.storage.users.list({ limit: 2, afterUsernameKey: "a b" });
      expect(afterA.map((user) => user.usernameKey)).toEqual(["a%b", "a-b"]);
    });
  },
);
