// sessions.revokeAll on SQL (STUP-6, ASVS 7.4.5): every live session of every user revoked by
// statements of at most 10,000 primary-key ids each, so that no statement holds the locks of a
// whole table of sessions (one UPDATE of 850,000 live sessions took 18 to 20 s on PostgreSQL and
// 9.5 s on MariaDB on the test machine, against the 10 s statement timeout of connectStorage).
import { type KyselyPlugin, type RootOperationNode, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeedingService } from "../../../../test/fixtures/required-service.js";
import { everyDatabase, serverMissing } from "../databases.test-support.js";
import { type KyselyStorage, kyselyStorage } from "../kysely-storage.js";
import { migrate } from "../migrate.js";
import { revokeAllBatch } from "./revoke-all.js";
import { toSessionRow } from "./sessions.js";

const userCount = 500;
const sessionCount = 2 * revokeAllBatch + 3;
/** The time of the calls: every 11th session expired before it, every 7th was revoked before it. */
const now = 100;
const expired = (seq: number) => seq % 11 === 0;
const revokedBefore = (seq: number) => seq % 7 === 0;
/** The numbers of the sessions, `s-1`… */
const seqs = Array.from({ length: sessionCount }, (_, index) => index + 1);
const liveCount = seqs.filter((seq) => !expired(seq) && !revokedBefore(seq)).length;

/** Fills the tables with `userCount` users and `sessionCount` sessions `s-1`…, some expired, some revoked, as the store writes rows. */
async function fillSessions(storage: KyselyStorage): Promise<void> {
  const t = storage.tables;
  const postgres = storage.dialect === "postgres";
  const numbers = postgres ? `generate_series(1, ${userCount}) as s(seq)` : `seq_1_to_${userCount}`;
  const text = postgres ? "(seq)::text" : "cast(seq as char)";
  await sql
    .raw(`insert into ${t.users} (id, username, username_key, password_hash, roles, disabled, token_version, source, created_at, updated_at)
      select concat('u-', ${text}), concat('U-', ${text}), concat('u-', ${text}), null, '[]', false, 0, 'local', 1, 1
      from ${numbers}`)
    .execute(storage.db);
  const rows = Array.from({ length: sessionCount }, (_, index) => {
    const seq = index + 1;
    return toSessionRow({
      id: `s-${seq}`,
      userId: `u-${1 + (seq % userCount)}`,
      tokenVersion: 0,
      amr: ["pwd"],
      authTime: 1,
      createdAt: 1,
      expiresAt: expired(seq) ? 50 : 4_000_000_000_000,
      revokedAt: revokedBefore(seq) ? 5 : null,
      lastUsedAt: 1,
      userAgent: null,
      address: null,
      refreshHash: `h-${seq}`,
      refreshGeneration: 0,
      refreshExpiresAt: expired(seq) ? 50 : 4_000_000_000_000,
    });
  });
  for (let start = 0; start < rows.length; start += 2000) {
    await storage.db
      .insertInto(t.sessions)
      .values(rows.slice(start, start + 2000))
      .execute();
  }
}

/** A storage over the same database that records each statement's kind and, for an UPDATE, the rows it changed. */
function recording(storage: KyselyStorage): { storage: KyselyStorage; statements: string[] } {
  const statements: string[] = [];
  const kinds = new Map<unknown, string>();
  const recorder: KyselyPlugin = {
    transformQuery({ node, queryId }): RootOperationNode {
      kinds.set(queryId, node.kind);
      return node;
    },
    transformResult: async ({ result, queryId }) => {
      const kind = kinds.get(queryId);
      statements.push(kind === "UpdateQueryNode" ? `update ${result.numAffectedRows}` : String(kind));
      return result;
    },
  };
  return { storage: kyselyStorage({ db: storage.db.withPlugin(recorder), dialect: storage.dialect }), statements };
}

/** A storage over the same database whose UPDATEs throw `errors`, one each, in turn, before any is sent. */
function failingUpdates(storage: KyselyStorage, errors: object[]): KyselyStorage {
  const plugin: KyselyPlugin = {
    transformQuery({ node }): RootOperationNode {
      const error = node.kind === "UpdateQueryNode" ? errors.shift() : undefined;
      if (error) throw Object.assign(new Error("injected"), error);
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return kyselyStorage({ db: storage.db.withPlugin(plugin), dialect: storage.dialect });
}

/** How many sessions are live at `now`, and how many hold each revocation time. */
async function tally(storage: KyselyStorage) {
  const rows = await storage.db
    .selectFrom(storage.tables.sessions)
    .select(["revoked_at", sql<number>`count(*)`.as("count")])
    .where("expires_at", ">", now)
    .groupBy("revoked_at")
    .execute();
  return Object.fromEntries(rows.map((row) => [String(row.revoked_at), Number(row.count)]));
}

for (const database of everyDatabase) {
  const missing = database.url === null ? null : await serverMissing(database.url);
  describeNeedingService(`packages/kysely/src/stores/revoke-all.test.ts (${database.name})`, missing)(
    `revokeAll on ${database.name} (${sessionCount} sessions)`,
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

      it("STUP-6, ASVS 7.4.5: revokeAll revokes every live session in UPDATEs of at most 10,000 primary-key ids, each after the SELECT of its last id", async () => {
        const { storage, statements } = recording(opened.storage);
        await storage.sessions.findSession("s-1");
        statements.length = 0;
        expect(await storage.sessions.revokeAll(now)).toBe(liveCount);
        const updates = statements.filter((statement) => statement.startsWith("update"));
        expect(statements).toEqual(updates.flatMap((update) => ["SelectQueryNode", update]));
        expect(updates).toHaveLength(3);
        const counts = updates.map((update) => Number(update.slice("update ".length)));
        expect(counts.reduce((sum, count) => sum + count, 0)).toBe(liveCount);
        for (const count of counts) expect(count).toBeLessThanOrEqual(revokeAllBatch);
        // Revoked before: their time kept; live: revoked now; expired: left as they were.
        const revokedEarlier = seqs.filter((seq) => revokedBefore(seq) && !expired(seq)).length;
        expect(await tally(opened.storage)).toEqual({ "5": revokedEarlier, [now]: liveCount });
        const stillNull = await opened.storage.db
          .selectFrom(opened.storage.tables.sessions)
          .select(sql<number>`count(*)`.as("count"))
          .where("revoked_at", "is", null)
          .executeTakeFirstOrThrow();
        expect(Number(stillNull.count)).toBe(seqs.filter((seq) => expired(seq) && !revokedBefore(seq)).length);
        expect(await storage.sessions.revokeAll(now + 1)).toBe(0);
      });

      it("STUP-6, SE-3: revokeAll beside 40 users ending their own sessions and 40 sessions refreshing (rotateRefresh): every count adds up, and nothing deadlocks", async () => {
        const { storage } = opened;
        await storage.db.updateTable(storage.tables.sessions).set({ revoked_at: null }).where("revoked_at", "=", now).execute();
        const users = Array.from({ length: 40 }, (_, index) => index * 7 + 3);
        const perUser = users.map((user) => storage.sessions.revokeUserSessions(`u-${user}`, now));
        const uses = Array.from({ length: 40 }, (_, index) => {
          const seq = index * 613 + 1;
          const use = { userAgent: "agent", address: null };
          return storage.sessions.rotateRefresh({
            sessionId: `s-${seq}`,
            hash: `h-${seq}`,
            now,
            nextHash: `h-${seq}-1`,
            nextGeneration: 1,
            idleMs: 1000,
            use,
          });
        });
        const [all, ...ended] = await Promise.all([storage.sessions.revokeAll(now), ...perUser]);
        await Promise.all(uses);
        // revokeUserSessions ends a user's expired sessions too; revokeAll leaves them.
        const theirExpired = seqs.filter(
          (seq) => users.includes(1 + (seq % userCount)) && expired(seq) && !revokedBefore(seq),
        ).length;
        expect((all as number) + ended.reduce((sum: number, count) => sum + (count as number), 0)).toBe(liveCount + theirExpired);
        expect(await tally(storage)).toMatchObject({ [now]: liveCount });
      });

      it("STUP-6: a range's UPDATE rolled back as a deadlock's victim (PostgreSQL 40P01, MySQL 1213) is sent again, at most three times; any other error fails the call", async () => {
        const reset = () =>
          opened.storage.db
            .updateTable(opened.storage.tables.sessions)
            .set({ revoked_at: null })
            .where("revoked_at", "=", now)
            .execute();
        await reset();
        const deadlocks = [{ code: "40P01" }, { code: "ER_LOCK_DEADLOCK" }];
        expect(await failingUpdates(opened.storage, deadlocks).sessions.revokeAll(now)).toBe(liveCount);
        expect(deadlocks).toEqual([]);
        await reset();
        const third = [{ errno: 1213 }, { errno: 1213 }, { errno: 1213, message: "third" }];
        await expect(failingUpdates(opened.storage, third).sessions.revokeAll(now)).rejects.toThrow("third");
        const other = [{ code: "40001", message: "serialization" }];
        await expect(failingUpdates(opened.storage, other).sessions.revokeAll(now)).rejects.toThrow("serialization");
        expect(await opened.storage.sessions.revokeAll(now)).toBe(liveCount);
      });
    },
  );
}
