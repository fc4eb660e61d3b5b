import type { CounterHit, CounterStore } from "@portcullis/core";
import { sql } from "kysely";
import { type StoreContext, num } from "./context.js";

/**
 * The counters table as a {@link CounterStore}. A hit is one statement that inserts the counter,
 * restarts its ended window, or counts one more inside the live one unless it holds `limit`:
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` on PostgreSQL, `INSERT … ON DUPLICATE KEY UPDATE` on
 * MySQL. The database orders concurrent hits, and a success that deletes the counter meanwhile
 * (`reset`) cannot make a hit below the limit fail (RL-4).
 */
export function counterStore(context: StoreContext): CounterStore {
  const { db, postgres, tables: t } = context;
  const readCounter = async (key: string) =>
    db.selectFrom(t.counters).select(["count", "reset_at"]).where("counter_key", "=", key).executeTakeFirst();
  const refused = async (key: string, limit: number, windowMs: number, now: number): Promise<CounterHit> => {
    const current = await readCounter(key);
    return current
      ? { count: num(current.count), allowed: false, resetAt: num(current.reset_at) }
      : { count: limit, allowed: false, resetAt: now + windowMs };
  };
  const column = (name: string) => sql.ref(`${t.counters}.${name}`);
  const windowEnded = (now: number) => sql`${column("reset_at")} <= ${now}`;

  const hitPostgres = async (key: string, limit: number, windowMs: number, now: number): Promise<CounterHit> => {
    const row = await db
      .insertInto(t.counters)
      .values({ counter_key: key, count: 1, reset_at: now + windowMs })
      .onConflict((conflict) =>
        conflict
          .column("counter_key")
          .doUpdateSet({
            count: sql`case when ${windowEnded(now)} then 1 else ${column("count")} + 1 end`,
            reset_at: sql`case when ${windowEnded(now)} then excluded.reset_at else ${column("reset_at")} end`,
          })
          .where(sql<boolean>`${windowEnded(now)} or ${column("count")} < ${limit}`),
      )
      .returning(["count", "reset_at"])
      .executeTakeFirst();
    return row ? { count: num(row.count), allowed: true, resetAt: num(row.reset_at) } : refused(key, limit, windowMs, now);
  };

  // MySQL has no RETURNING here: the statement reports the count through LAST_INSERT_ID(expr),
  // limit + 1 when it refused. `count` is assigned before `reset_at`, so both read the old window.
  const hitMysql = async (key: string, limit: number, windowMs: number, now: number): Promise<CounterHit> => {
    const compiled = db
      .insertInto(t.counters)
      .values({ counter_key: key, count: sql`last_insert_id(1)`, reset_at: now + windowMs })
      .onDuplicateKeyUpdate({
        count: sql`if(${windowEnded(now)}, last_insert_id(1), if(${column("count")} < ${limit}, last_insert_id(${column("count")} + 1), ${column("count")} + 0 * last_insert_id(${limit + 1})))`,
        reset_at: sql`if(${windowEnded(now)}, ${now + windowMs}, ${column("reset_at")})`,
      })
      .compile();
    const reported = num((await db.executeQuery(compiled)).insertId ?? 0);
    if (reported < 1 || reported > limit) return refused(key, limit, windowMs, now);
    if (reported === 1) return { count: 1, allowed: true, resetAt: now + windowMs };
    return { count: reported, allowed: true, resetAt: num((await readCounter(key))?.reset_at ?? now + windowMs) };
  };

  return {
    async hit(key, limit, windowMs, now) {
      if (limit < 1) return refused(key, 0, windowMs, now);
      return postgres ? hitPostgres(key, limit, windowMs, now) : hitMysql(key, limit, windowMs, now);
    },
    async peek(key, now) {
      const current = await readCounter(key);
      return current && num(current.reset_at) > now ? num(current.count) : 0;
    },
    async reset(key) {
      await db.deleteFrom(t.counters).where("counter_key", "=", key).execute();
    },
  };
}
