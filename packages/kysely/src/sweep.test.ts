// challenges.deleteExpired of the SQL storage: what no flow can use any more goes, the rest stays.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { KyselyStorage } from "./kysely-storage.js";
import { pgliteStorage } from "./pglite.js";

let storage: KyselyStorage;
beforeAll(async () => {
  storage = await pgliteStorage({ dataDir: "memory://" });
});
afterAll(async () => {
  await storage.close();
});

it("deleteExpired also ends throttling windows, refresh tokens past their idle expiry and sessions past theirs", async () => {
  const now = 50_000;
  const user = { id: "u-sweep", username: "Sweep", usernameKey: "sweep", passwordHash: null, roles: [], disabled: false };
  await storage.users.create({ ...user, tokenVersion: 0, source: "local", createdAt: 1, updatedAt: 1 });
  const session = (id: string, expiresAt: number) =>
    storage.sessions.createSession({
      id,
      userId: user.id,
      tokenVersion: 0,
      amr: ["pwd"],
      createdAt: 1,
      expiresAt,
      revokedAt: null,
    });
  const token = (hash: string, expiresAt: number, spentAt: number | null) =>
    storage.sessions.insertRefreshToken({ hash, sessionId: "s-live", userId: user.id, createdAt: 1, expiresAt, spentAt });
  await session("s-ended", now);
  await session("s-live", now + 1);
  await token("t-ended", now, null);
  await token("t-spent-ended", now - 1, 2);
  await token("t-spent-live", now + 1, 2);
  await storage.counters.hit("c-ended", 5, now - 10, 10);
  await storage.counters.hit("c-live", 5, now, 10);

  await storage.challenges.deleteExpired(now);
  expect(await storage.sessions.findSession("s-ended")).toBeNull();
  expect(await storage.sessions.findSession("s-live")).not.toBeNull();
  expect(await storage.sessions.findRefreshToken("t-ended")).toBeNull();
  expect(await storage.sessions.findRefreshToken("t-spent-ended")).toBeNull();
  expect(await storage.sessions.findRefreshToken("t-spent-live")).not.toBeNull();
  const counters = await storage.db.selectFrom(storage.tables.counters).select("counter_key").execute();
  expect(counters.map((row) => row.counter_key)).toEqual(["c-live"]);
});
