// Expired rows of the SQL storage go without anyone signing in (issue 20 item 5): the auth
// instance's timer sweeps them, in bounded batches, on PGlite, PostgreSQL and MariaDB; the live
// ones stay.
import { randomBytes } from "node:crypto";
import { type Storage, createAuth, sweepExpired } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { mariadbScratch, mariadbUrl, postgresScratch, postgresUrl, serverMissing } from "./databases.test-support.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";

/**
 * An auth instance on `storage` whose clock stands at `now` and that sweeps every second (or
 * never), and the errors it reported. With the clock standing, the sweep's lease never ends:
 * the instance sweeps once and leaves the next tests' rows alone.
 */
function sweepingAuth(storage: Storage, now: number, sweepInterval: 1 | false = 1) {
  const reported: unknown[] = [];
  const auth = createAuth({
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("hex") },
    sweepInterval,
    now: () => now,
    onInternalError: (error) => reported.push(error),
  });
  return { auth, reported };
}

/** `storage` counting the calls of its `challenges.deleteExpired` in `calls`. */
function counting(storage: KyselyStorage, calls: number[]): Storage {
  return {
    ...storage,
    challenges: {
      ...storage.challenges,
      deleteExpired: (now, limit) => {
        calls.push(now);
        return storage.challenges.deleteExpired(now, limit);
      },
    },
  };
}

/** Rows of every kind the sweep deletes, `count` of them expired at `now` and one live, under names starting with `tag`. */
async function rowsOfEveryKind(storage: KyselyStorage, tag: string, now: number, count: number) {
  const userId = `${tag}-user`;
  await storage.users.create({
    id: userId,
    username: userId,
    usernameKey: userId,
    passwordHash: null,
    roles: [],
    disabled: false,
    tokenVersion: 0,
    source: "local",
    email: null,
    emailVerified: false,
    createdAt: 1,
    updatedAt: 1,
  });
  const ends = [...Array.from({ length: count }, (_, at) => now - 1000 * (at + 1)), now + 3_600_000];
  const name = (kind: string, at: number) => `${tag}-${kind}-${at === count ? "live" : `expired-${at}`}`;
  for (const [at, expiresAt] of ends.entries()) {
    await storage.sessions.createSession({
      id: name("session", at),
      userId,
      tokenVersion: 0,
      amr: ["pwd"],
      authTime: 1,
      createdAt: 1,
      expiresAt,
      revokedAt: null,
      lastUsedAt: 1,
      userAgent: null,
      address: null,
      refreshHash: name("current", at),
      refreshGeneration: 0,
      refreshExpiresAt: expiresAt,
    });
    // A token of an earlier release, spent or not: that table is pruned as its rows expire.
    await storage.db
      .insertInto(storage.tables.refreshTokens)
      .values({
        hash: name("token", at),
        session_id: name("session", at),
        user_id: userId,
        created_at: 1,
        expires_at: expiresAt,
        spent_at: at % 2 === 0 ? null : 2,
      })
      .execute();
    await storage.challenges.put({
      id: name("challenge", at),
      kind: "oauth_state",
      userId: null,
      data: {},
      attempts: 0,
      createdAt: 1,
      expiresAt,
    });
    // A window of one second that began a second before it ends at expiresAt.
    await storage.counters.hit(name("counter", at), 5, 1000, expiresAt - 1000);
  }
}

/** Which of the rows of {@link rowsOfEveryKind} are still stored, by kind. */
async function rowsLeft(storage: KyselyStorage, tag: string) {
  const { db, tables } = storage;
  const ids = async (table: string, column: string) =>
    (await db.selectFrom(table).select(column).where(column, "like", `${tag}-%`).execute())
      .map((row) => String(row[column]).slice(tag.length + 1))
      .sort();
  return {
    sessions: await ids(tables.sessions, "id"),
    refreshTokens: await ids(tables.refreshTokens, "hash"),
    challenges: await ids(tables.challenges, "id"),
    counters: await ids(tables.counters, "counter_key"),
  };
}

const onlyTheLiveOnes = {
  sessions: ["session-live"],
  refreshTokens: ["token-live"],
  challenges: ["challenge-live"],
  counters: ["counter-live"],
};

function sweepChecks(open: () => Promise<{ storage: KyselyStorage; drop(): Promise<void> }>) {
  let database: { storage: KyselyStorage; drop(): Promise<void> };
  beforeAll(async () => {
    database = await open();
    await migrate(database.storage);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it("issue 20 item 5 (ST-1): with no sign-in at all, the auth instance's timer deletes expired challenges, throttling windows, refresh tokens and sessions, and leaves the live ones", async () => {
    const { storage } = database;
    const tag = `idle${randomBytes(4).toString("hex")}`;
    const now = Date.now();
    await rowsOfEveryKind(storage, tag, now, 3);
    expect((await rowsLeft(storage, tag)).sessions).toHaveLength(4);
    // Held to the end: the timer holds its instance only weakly, and a collected one stops sweeping.
    const { auth, reported } = sweepingAuth(storage, now);
    await vi.waitFor(async () => expect(await rowsLeft(storage, tag)).toEqual(onlyTheLiveOnes), {
      timeout: 15_000,
      interval: 250,
    });
    expect(reported).toEqual([]);
    expect(auth.config.sweepIntervalMs).toBe(1000);
  });

  it("deleteExpired(now, limit) deletes at most `limit` rows of each kind a call, one short statement each; sweepExpired calls it until none is left", async () => {
    const { storage } = database;
    const tag = `batch${randomBytes(4).toString("hex")}`;
    const now = Date.now() - 60_000;
    await rowsOfEveryKind(storage, tag, now, 5);
    expect(await storage.challenges.deleteExpired(now, 3)).toBe(12);
    // The three that expired first go first, read from the expiry index in order, not wherever the rows lie.
    const left = await rowsLeft(storage, tag);
    for (const [kind, rows] of Object.entries(left)) {
      const prefix = { sessions: "session", refreshTokens: "token", challenges: "challenge", counters: "counter" }[kind];
      expect(rows, kind).toEqual([`${prefix}-expired-0`, `${prefix}-expired-1`, `${prefix}-live`]);
    }
    const { auth } = sweepingAuth(storage, now, false);
    expect(await sweepExpired(auth)).toEqual({ deleted: 8, batches: 1, complete: true });
    expect(await rowsLeft(storage, tag)).toEqual(onlyTheLiveOnes);
  });

  it("of two instances sharing the database, one sweeps per interval: the lease is a throttling window in the database", async () => {
    const calls: number[] = [];
    const now = Date.now() + 3_600_000;
    // Held to the end: the timer holds its instance only weakly, and a collected one stops sweeping.
    const instances = [
      sweepingAuth(counting(database.storage, calls), now),
      sweepingAuth(counting(database.storage, calls), now),
    ];
    await vi.waitFor(() => expect(calls).toEqual([now]), { timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(calls).toEqual([now]);
    expect(instances).toHaveLength(2);
  });
}

describe("PGlite", () => {
  sweepChecks(async () => {
    const storage = await pgliteStorage({ dataDir: "memory://", migrate: false });
    return { storage, drop: () => storage.close() };
  });
});

for (const [name, url, scratch] of [
  ["PostgreSQL", postgresUrl, postgresScratch],
  ["MariaDB", mariadbUrl, mariadbScratch],
] as const) {
  describeNeedingService(`packages/kysely/src/sweep.test.ts (${name})`, await serverMissing(url))(name, () => {
    sweepChecks(() => scratch());
  });
}
