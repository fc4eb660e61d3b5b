// A user's sessions on SQL: listed through the index on sessions.user_id (SE-1), ended but one
// by a single UPDATE (SE-2), refreshed by one conditional UPDATE of the session (RT-3, issue 39
// item 1), and checked for an access token by one statement with the org roles (OR-7, issue 40),
// on every database.
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
    .raw(`insert into ${t.sessions} (id, user_id, token_version, amr, created_at, auth_time, expires_at, revoked_at, last_used_at, user_agent, address, refresh_hash, refresh_expires_at)
      select concat('s-', ${text("seq")}), concat('u-', ${text(`1 + mod(seq, ${userCount})`)}), 0, '["pwd"]', seq, seq, 4000000000000, null, seq, null, null, concat('h-', ${text("seq")}), 4000000000000
      from ${numbers(userCount * sessionsPerUser)}`)
    .execute(storage.db);
  for (const table of [t.users, t.sessions]) {
    await sql.raw(postgres ? `analyze ${table}` : `analyze table ${table}`).execute(storage.db);
  }
}

/**
 * A storage over the same database that records every statement it sends: the kind of a query
 * Kysely built, `compiled` for one a store compiled once (a rotation's, sent as its text).
 */
function recording(storage: KyselyStorage): { storage: KyselyStorage; statements: string[] } {
  const statements: string[] = [];
  const kinds = new Map<unknown, string>();
  const recorder: KyselyPlugin = {
    transformQuery({ node, queryId }): RootOperationNode {
      kinds.set(queryId, node.kind);
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      statements.push(kinds.get(queryId) ?? "compiled");
      return result;
    },
  };
  const db = storage.db.withPlugin(recorder);
  return { storage: kyselyStorage({ db, dialect: storage.dialect }), statements };
}

/** Every row of the sessions and refresh_tokens tables, as the database holds them. */
async function everyRow(storage: KyselyStorage) {
  const { db, tables: t } = storage;
  const rows = async (table: string, key: string) =>
    (await db.selectFrom(table).selectAll().orderBy(key).execute()).map((row) => JSON.stringify(row));
  return { sessions: await rows(t.sessions, "id"), refreshTokens: await rows(t.refreshTokens, "hash") };
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
      });
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

      it("SE-2: revokeUserSessions with a kept session is one UPDATE", async () => {
        const { storage, statements } = recording(opened.storage);
        await storage.sessions.findSession("s-1");
        statements.length = 0;
        expect(await storage.sessions.revokeUserSessions("u-8", 5, "s-7")).toBe(sessionsPerUser - 1);
        expect(statements).toEqual(["UpdateQueryNode"]);
        expect((await storage.sessions.listByUser("u-8", 6, 100)).map((session) => session.id)).toEqual(["s-7"]);
      });

      it(`RT-3 (issue 39 item 1): a refresh's rotation is ${database.name === "MariaDB" ? "a SELECT and one UPDATE" : "one statement"} and writes one row: the session's; refresh_tokens does not grow`, async () => {
        const { storage, statements } = recording(opened.storage);
        const { db, tables: t } = opened.storage;
        // An earlier release's token, left in its table: read only now.
        await db
          .insertInto(t.refreshTokens)
          .values({
            hash: "legacy-1",
            session_id: "s-11",
            user_id: "u-12",
            created_at: 1,
            expires_at: 4_000_000_000_000,
            spent_at: null,
          })
          .execute();
        await storage.sessions.findSession("s-11");
        const before = await everyRow(opened.storage);
        statements.length = 0;
        const rotation = {
          sessionId: "s-11",
          hash: "h-11",
          now: 1000,
          nextHash: "h-11-next",
          nextGeneration: 1,
          idleMs: 60_000,
          use: { userAgent: "agent", address: "203.0.113.0/24" },
        };
        const rotated = await storage.sessions.rotateRefresh(rotation);
        expect(statements).toEqual(database.name === "MariaDB" ? ["compiled", "compiled"] : ["compiled"]);
        expect(rotated).toMatchObject({ outcome: "rotated", session: { id: "s-11", refreshHash: "h-11", lastUsedAt: 11 } });
        const after = await everyRow(opened.storage);
        expect(after.refreshTokens).toEqual(before.refreshTokens);
        const changed = after.sessions.filter((row, index) => row !== before.sessions[index]);
        expect(after.sessions).toHaveLength(before.sessions.length);
        expect(changed.map((row) => JSON.parse(row).id)).toEqual(["s-11"]);
        expect(await storage.sessions.findSession("s-11")).toMatchObject({
          refreshHash: "h-11-next",
          refreshGeneration: 1,
          refreshExpiresAt: 61_000,
          lastUsedAt: 1000,
          userAgent: "agent",
          address: "203.0.113.0/24",
        });
        // The same token again: refused, nothing written, and on MariaDB no UPDATE sent.
        statements.length = 0;
        expect(await storage.sessions.rotateRefresh({ ...rotation, nextHash: "h-11-other" })).toEqual({ outcome: "refused" });
        expect(statements).toEqual(["compiled"]);
        expect(await everyRow(opened.storage)).toEqual(after);
      });

      it("OR-7 (issue 40): the token-state check is one statement that reads the session, its user and the user's roles in the session's active organization", async () => {
        const { storage, statements } = recording(opened.storage);
        const organizations = storage.organizations;
        if (organizations === undefined) throw new Error("the SQL storage has organizations");
        const organization = {
          id: "org-token-state",
          slug: "token-state",
          name: "Token state",
          rules: { requireSecondFactor: false, signInMethods: null },
          createdAt: 1,
          updatedAt: 1,
        };
        // Session s-9 is u-10's (see fillSessions).
        const owner = { orgId: organization.id, userId: "u-10", roles: ["owner", "billing"], createdAt: 1, lastActiveAt: null };
        expect(await organizations.createOrganization(organization, owner)).toBe(true);
        await storage.sessions.findTokenState?.("s-9");
        statements.length = 0;
        expect(await storage.sessions.findTokenState?.("s-9")).toEqual({
          session: { userId: "u-10", revokedAt: null, expiresAt: 4_000_000_000_000, activeOrgId: null },
          user: { tokenVersion: 0, disabled: false },
          orgRoles: null,
        });
        expect(statements).toEqual(["compiled"]);
        expect(await organizations.setActiveOrganization("s-9", "u-10", organization.id, 2)).toBe(true);
        statements.length = 0;
        expect(await storage.sessions.findTokenState?.("s-9")).toMatchObject({
          session: { activeOrgId: organization.id },
          orgRoles: ["owner", "billing"],
        });
        expect(statements).toEqual(["compiled"]);
        // The roles as they are now; removed, the member's session loses the organization.
        await organizations.addMember({ ...owner, userId: "u-11", roles: ["owner"] });
        await organizations.changeMemberRoles(organization.id, "u-10", ["member"], "owner");
        expect((await storage.sessions.findTokenState?.("s-9"))?.orgRoles).toEqual(["member"]);
        expect(await organizations.removeMember(organization.id, "u-10", "owner")).toBe("done");
        expect(await storage.sessions.findTokenState?.("s-9")).toMatchObject({ session: { activeOrgId: null }, orgRoles: null });
      });

      it("RT-3: of 20 concurrent rotations with one token exactly one rotates, and the session holds its replacement", async () => {
        const { storage } = opened;
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            storage.sessions.rotateRefresh({
              sessionId: "s-21",
              hash: "h-21",
              now: 1000,
              nextHash: `h-21-next-${index}`,
              nextGeneration: 1,
              idleMs: 60_000,
              use: { userAgent: null, address: null },
            }),
          ),
        );
        const winners = outcomes.flatMap((outcome, index) => (outcome.outcome === "rotated" ? [index] : []));
        expect(winners).toHaveLength(1);
        expect((await storage.sessions.findSession("s-21"))?.refreshHash).toBe(`h-21-next-${winners[0]}`);
      });
    },
  );
}
