// A user's sessions on SQL: listed through the index on sessions.user_id (SE-1), and ended but one
// by a single UPDATE (SE-2), on every database.
import { type KyselyPlugin, type RootOperationNode, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeedingService } from "../../../../test/fixtures/required-service.js";
import { everyDatabase, serverMissing } from "../databases.test-support.js";
import { type KyselyStorage, kyselyStorage } from "../kysely-storage.js";
import { migrate } from "../migrate.js";
import { storeContext } from "./context.js";
import { listSessionsQuery } from "./sessions.js";

const userCount = 2_000;
const sessionsPerUser = 10;

/** Fills the tables with `userCount` users `u-1`… of `sessionsPerUser` sessions each, and refreshes the planner's statistics. */
async function fillSessions(storage: KyselyStorage): Promise<void> {
  const t = storage.tables;
  const postgres = storage.dialect === "postgres";
  const numbers = (count: number) => (postgres ? `generate_series(1, ${count}) as s(seq)` : `seq_1_to_${count}`);
  const text = (expression: string) => (postgres ? `(${expression})::text` : `cast(${expression} as char)`);
  await sql
    .raw(`insert into ${t.users} (id, username, username_key, password_hash, roles, disabled, token_version, source, created_at, updated_at)
      select concat('u-', ${text("seq")}), concat('U-', ${text("seq")}), concat('u-', ${text("seq")}), null, '[]', false, 0, 'local', 1, 1
      from ${numbers(userCount)}`)
    .execute(storage.db);
  await sql
    .raw(`insert into ${t.sessions} (id, user_id, token_version, amr, created_at, auth_time, expires_at, revoked_at, last_used_at, user_agent, address)
      select concat('s-', ${text("seq")}), concat('u-', ${text(`1 + mod(seq, ${userCount})`)}), 0, '["pwd"]', seq, seq, 4000000000000, null, seq, null, null
      from ${numbers(userCount * sessionsPerUser)}`)
    .execute(storage.db);
  for (const table of [t.users, t.sessions]) {
    await sql.raw(postgres ? `analyze ${table}` : `analyze table ${table}`).execute(storage.db);
  }
}

/** A storage over the same database that records the kind of every statement it sends. */
function recording(storage: KyselyStorage): { storage: KyselyStorage; statements: string[] } {
  const statements: string[] = [];
  const recorder: KyselyPlugin = {
    transformQuery({ node }): RootOperationNode {
      statements.push(node.kind);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  const db = storage.db.withPlugin(recorder);
  return { storage: kyselyStorage({ db, dialect: storage.dialect }), statements };
}

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/stores/sessions.test.ts (${database.name})`, missing)(
    `a user's sessions on ${database.name} (${userCount * sessionsPerUser} sessions)`,
    () => {
      let opened: Awaited<ReturnType<typeof database.open>>;
      beforeAll(async () => {
        opened = await database.open("");
        await migrate(opened.storage);
        await fillSessions(opened.storage);
      }, 120_000);
      afterAll(async () => {
        await opened?.drop();
      });

      it("SE-1: listByUser reads the index on sessions.user_id, never the whole table", async () => {
        const { storage } = opened;
        const rows = await listSessionsQuery(storeContext(storage.db, storage.dialect, storage.tables), "u-7", 1, 100).explain();
        const plan = JSON.stringify(rows);
        if (storage.dialect === "postgres") {
          expect(plan).toMatch(/(Index Scan using|Bitmap Index Scan on) sessions_user/);
          expect(plan).not.toContain("Seq Scan");
        } else {
          const [row] = rows as { type: string; key: string | null }[];
          expect(row?.key).toBe("sessions_user");
          expect(row?.type).toBe("ref");
        }
        const listed = await storage.sessions.listByUser("u-7", 1, 3);
        expect(listed.map((session) => session.id)).toEqual(["s-18006", "s-16006", "s-14006"]);
      });

      it("SE-2: revokeUserSessions with a kept session is one UPDATE, and so is recordUse", async () => {
        const { storage, statements } = recording(opened.storage);
        await storage.sessions.findSession("s-1");
        statements.length = 0;
        expect(await storage.sessions.revokeUserSessions("u-8", 5, "s-7")).toBe(sessionsPerUser - 1);
        expect(statements).toEqual(["UpdateQueryNode"]);
        statements.length = 0;
        await storage.sessions.recordUse("s-7", 6, { userAgent: "agent", address: "203.0.113.0/24" });
        expect(statements).toEqual(["UpdateQueryNode"]);
        expect(await storage.sessions.listByUser("u-8", 6, 100)).toEqual([
          expect.objectContaining({ id: "s-7", lastUsedAt: 6, userAgent: "agent", address: "203.0.113.0/24" }),
        ]);
      });
    },
  );
}
