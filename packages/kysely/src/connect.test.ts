// connectStorage: a pool made from a URL, for PostgreSQL and MariaDB.

import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { BASE_TIME, createUser, sampleRefreshToken, sampleSession } from "../../core/src/testing/conformance/samples.js";
import { connectStorage } from "./connect.js";
import { mariadbUrl, postgresScratch, postgresUrl, scratchName, serverMissing } from "./databases.test-support.js";
import { migrate } from "./migrate.js";
import { isConnectionFailure } from "./unavailable.js";

it("a URL of another kind is refused without repeating it, password and all", async () => {
  const error = await connectStorage({ url: "redis://user:hunter2@db.internal:6379/0" }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe(
    "@portcullis/kysely: url must start with postgres://, postgresql://, mysql:// or mariadb://; got redis://…",
  );
});

for (const [name, url] of [
  ["PostgreSQL", postgresUrl],
  ["MariaDB", mariadbUrl],
] as const) {
  describeNeedingService(`packages/kysely/src/connect.test.ts (${name})`, await serverMissing(url))(name, () => {
    it("connects, migrates under a prefix, stores and reads; an unreachable server answers storageUnavailable", async () => {
      const prefix = `${scratchName()}_`;
      const storage = await connectStorage({ url, prefix, maxConnections: 2 });
      try {
        await migrate(storage);
        await storage.settings.set("where", { from: name }, 1);
        expect(await storage.settings.get("where")).toEqual({ from: name });
      } finally {
        const { users, ...rest } = storage.tables;
        for (const table of [...Object.values(rest), users]) await storage.db.schema.dropTable(table).ifExists().execute();
        await storage.close();
      }
      const nowhere = new URL(url);
      nowhere.port = "1";
      const unreachable = await connectStorage({ url: nowhere.href, connectTimeoutMs: 1000 });
      await expect(unreachable.users.findById("anyone")).rejects.toMatchObject({
        code: 50300,
        message: "Storage is unavailable",
      });
      await unreachable.close();
    });
  });
}

describeNeedingService("packages/kysely/src/connect.test.ts (MariaDB stalled)", await serverMissing(mariadbUrl))(
  "MariaDB that stops answering",
  () => {
    it("a statement on a connection that went silent answers storageUnavailable within the statement timeout, and the next connection works", async () => {
      const target = new URL(mariadbUrl);
      const forwarder = await startTcpForwarder(Number(target.port));
      const through = new URL(mariadbUrl);
      through.port = String(forwarder.port);
      const storage = await connectStorage({
        url: through.href,
        maxConnections: 1,
        connectTimeoutMs: 1000,
        queryTimeoutMs: 1000,
      });
      try {
        await storage.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute();
        forwarder.cut("silence-open");
        const started = performance.now();
        await expect(storage.db.selectNoFrom((eb) => eb.lit(1).as("one")).execute()).rejects.toSatisfy(isConnectionFailure);
        expect(performance.now() - started).toBeLessThan(3000);
        forwarder.restore();
        expect(await storage.db.selectNoFrom((eb) => eb.lit(2).as("two")).execute()).toEqual([{ two: 2 }]);
      } finally {
        await storage.close();
        await forwarder.close();
      }
    });
  },
);

describeNeedingService("packages/kysely/src/connect.test.ts (PostgreSQL prepared)", await serverMissing(postgresUrl))(
  "PostgreSQL prepared statements",
  () => {
    /** Rotates a fresh refresh token on a one-connection storage and reads that connection's prepared statements. */
    async function preparedAfterRotations(preparedStatements?: boolean): Promise<string[]> {
      const scratch = await postgresScratch();
      const url = new URL(postgresUrl);
      const { rows } = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(scratch.storage.db);
      url.searchParams.set("options", `-c search_path=${rows[0]?.path}`);
      const storage = await connectStorage({ url: url.href, maxConnections: 1, preparedStatements });
      try {
        await migrate(storage);
        const userId = await createUser(storage);
        const now = BASE_TIME;
        const session = sampleSession(userId);
        await storage.sessions.createSession(session);
        const first = sampleRefreshToken(session);
        await storage.sessions.insertRefreshToken(first);
        let { hash } = first;
        for (let round = 0; round < 3; round += 1) {
          const nextHash = scratchName();
          const use = { userAgent: null, address: null };
          const result = await storage.sessions.rotateRefreshToken?.({
            hash,
            now: now + 1000 + round,
            nextHash,
            idleMs: 60_000,
            use,
          });
          expect(result?.outcome).toBe("rotated");
          hash = nextHash;
        }
        const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(storage.db);
        return prepared.rows.map((row) => row.name);
      } finally {
        await storage.close();
        await scratch.drop();
      }
    }

    it("a refresh's rotation is one statement prepared once on its connection, and sent unnamed with preparedStatements: false", async () => {
      expect(await preparedAfterRotations()).toEqual([expect.stringMatching(/^portcullis_[0-9a-f]{24}$/)]);
      expect(await preparedAfterRotations(false)).toEqual([]);
    });
  },
);
