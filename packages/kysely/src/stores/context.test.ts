// A store's hot statements are compiled once and then sent with each call's values.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KyselyStorage } from "../kysely-storage.js";
import { pgliteStorage } from "../pglite.js";
import { type StoreContext, compiledOnce, placeholders, storeContext } from "./context.js";

describe("compiledOnce", () => {
  let storage: KyselyStorage;
  let context: StoreContext;
  beforeAll(async () => {
    storage = await pgliteStorage({ dataDir: "memory://", migrate: false });
    context = storeContext(storage.db, "postgres", storage.tables);
  });
  afterAll(async () => {
    await storage?.close();
  });

  it("compiles its template on the first call only, and sends each call's values, a placeholder used twice taking the same one", async () => {
    let compiled = 0;
    const sum = compiledOnce<{ total: number }>(context, () => {
      compiled += 1;
      const [a, b] = placeholders(context, 2);
      return sql<{ total: number }>`select ${a}::int + ${b}::int + ${a}::int as total`;
    });
    expect((await sum([1, 2])).rows).toEqual([{ total: 4 }]);
    expect((await sum([10, 5])).rows).toEqual([{ total: 25 }]);
    expect(compiled).toBe(1);
  });

  it("refuses a template that binds a value of its own, which every later call would send unchanged", () => {
    const stale = compiledOnce(context, () => sql`select ${1}::int as one`);
    expect(() => stale([])).toThrow(/binds values; use placeholders/);
  });

  it("placeholders are numbered on PostgreSQL and positional on MySQL", () => {
    const compile = (dialect: "postgres" | "mysql") => {
      const mysqlLike = storeContext(storage.db, dialect, storage.tables);
      return placeholders(mysqlLike, 3).map((placeholder) => placeholder.compile(storage.db).sql);
    };
    expect(compile("postgres")).toEqual(["$1", "$2", "$3"]);
    expect(compile("mysql")).toEqual(["?", "?", "?"]);
  });
});
