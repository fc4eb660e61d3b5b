// connectStorage: a pool made from a URL, for PostgreSQL and MariaDB.

import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { startTcpForwarder } from "../../../test/fixtures/tcp-forwarder.js";
import { BASE_TIME, createUser, sampleSession } from "../../core/src/testing/conformance/samples.js";
import { type DriverImports, connectStorage, connectStorageWith } from "./connect.js";
import { mariadbUrl, postgresScratch, postgresUrl, scratchName, serverMissing } from "./databases.test-support.js";
import { migrate } from "./migrate.js";
import { pgliteStorageWith } from "./pglite.js";
import { isConnectionFailure } from "./unavailable.js";

it("a URL of another kind is refused without repeating it, password and all", async () => {
  const error = await connectStorage({ url: "redis://user:hunter2@db.internal:6379/0" }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TypeError);
  expect((error as Error).message).toBe(
    "@portcullis/kysely: url must start with postgres://, postgresql://, mysql:// or mariadb://; got redis://…",
  );
});

describe("issue 23 item 3: a URL that is missing, empty or malformed", () => {
  const expected =
    "give connectStorage the database's URL, postgres://user:password@host:5432/database or mysql://user:password@host:3306/database (is DATABASE_URL set where the service runs?)";

  it("no URL at all (DATABASE_URL unset) says the url is missing and what one looks like", async () => {
    const error = await connectStorage({ url: process.env.PORTCULLIS_TEST_UNSET_VARIABLE as string }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(`@portcullis/kysely: url is missing; ${expected}`);
  });

  it("an empty URL, or one of spaces, says the url is empty and what one looks like", async () => {
    for (const url of ["", "  "]) {
      const error = await connectStorage({ url }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(`@portcullis/kysely: url is empty; ${expected}`);
    }
  });

  it("a URL that is not a string is refused with its type", async () => {
    const error = await connectStorage({ url: 5432 as unknown as string }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe("@portcullis/kysely: url must be a string; got number");
  });

  it("a password holding # breaks the URL: the message says to percent-encode it, and repeats none of it", async () => {
    const error = await connectStorage({ url: "postgres://app:pa#ss@db.internal:5432/app" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      "@portcullis/kysely: url is not a valid URL; expected postgres://user:password@host:5432/database or mysql://user:password@host:3306/database, with any of @ : / ? # % in the user name or password percent-encoded (encodeURIComponent)",
    );
  });
});

/** Imports a package no machine has, as `import("pg")` does where pg is not installed: the real ERR_MODULE_NOT_FOUND. */
const notInstalled = () => import(/* @vite-ignore */ ["portcullis", "test", "absent", "driver"].join("-")) as Promise<never>;
const installed: DriverImports = { pg: () => import("pg"), mysql2: () => import("mysql2") };

describe("issue 23 item 3: a driver that is not installed", () => {
  for (const [url, driver] of [
    ["postgres://app@db.internal:5432/app", "pg"],
    ["postgresql://app@db.internal:5432/app", "pg"],
    ["mysql://app@db.internal:3306/app", "mysql2"],
    ["mariadb://app@db.internal:3306/app", "mysql2"],
  ] as const) {
    it(`${url.split(":")[0]}:// without ${driver} says to run npm i ${driver}, and keeps the import's error as cause`, async () => {
      const error = await connectStorageWith({ url }, { ...installed, [driver]: notInstalled }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(
        `@portcullis/kysely: a ${url.split(":")[0]}:// URL needs the ${driver} package, which is not installed; install it beside @portcullis/kysely: npm i ${driver}`,
      );
      expect((error as Error).cause).toMatchObject({ code: "ERR_MODULE_NOT_FOUND" });
    });
  }

  it("pgliteStorage without @electric-sql/pglite says to run npm i @electric-sql/pglite", async () => {
    const error = await pgliteStorageWith({ dataDir: "memory://" }, notInstalled).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      "@portcullis/kysely: pgliteStorage needs the @electric-sql/pglite package, which is not installed; install it beside @portcullis/kysely: npm i @electric-sql/pglite",
    );
    expect((error as Error).cause).toMatchObject({ code: "ERR_MODULE_NOT_FOUND" });
  });

  it("a driver that is installed but fails as it loads is thrown as it is, not as a missing one", async () => {
    const broken = new SyntaxError("Unexpected token in pg/lib/index.js");
    const error = await connectStorageWith(
      { url: "postgres://app@db.internal:5432/app" },
      { ...installed, pg: () => Promise.reject(broken) },
    ).catch((caught: unknown) => caught);
    expect(error).toBe(broken);
  });
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
        const session = sampleSession(userId, {
          refreshHash: scratchName(),
          refreshGeneration: 0,
          refreshExpiresAt: now + 60_000,
        });
        await storage.sessions.createSession(session);
        let hash = session.refreshHash as string;
        for (let round = 0; round < 3; round += 1) {
          const nextHash = scratchName();
          const use = { userAgent: null, address: null };
          const result = await storage.sessions.rotateRefresh({
            sessionId: session.id,
            hash,
            now: now + 1000 + round,
            nextHash,
            nextGeneration: round + 1,
            idleMs: 60_000,
            use,
          });
          expect(result.outcome).toBe("rotated");
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
