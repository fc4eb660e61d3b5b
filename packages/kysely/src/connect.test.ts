// connectStorage: a pool made from a URL, for PostgreSQL and MariaDB.
import { expect, it } from "vitest";
import { describeNeedingService } from "../../../test/fixtures/required-service.js";
import { connectStorage } from "./connect.js";
import { mariadbUrl, postgresUrl, scratchName, serverMissing } from "./databases.test-support.js";
import { migrate } from "./migrate.js";

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
