import type { CounterStore } from "@portcullis/core";
import { sql } from "kysely";
import { type StoreContext, insertUnlessDuplicate, num, updateCounting } from "./context.js";

/**
 * The counters table as a {@link CounterStore}: a hit is a counting UPDATE inside the live
 * window, else one that restarts an ended window, else an insert of a new one; a writer that
 * loses a race to another tries again, at most three rounds (RL-4).
 */
export function counterStore(context: StoreContext): CounterStore {
  const { db, tables: t } = context;
  const readCounter = async (key: string) =>
    db.selectFrom(t.counters).select(["count", "reset_at"]).where("counter_key", "=", key).executeTakeFirst();
  return {
    async hit(key, limit, windowMs, now) {
      for (let round = 0; round < 3; round += 1) {
        const counted = await updateCounting(context, t.counters, "count", sql`count + 1`, (query) =>
          query.where("counter_key", "=", key).where("reset_at", ">", now).where("count", "<", limit),
        );
        if (counted !== null) return { count: counted, allowed: true, resetAt: num((await readCounter(key))?.reset_at ?? 0) };
        const resetAt = now + windowMs;
        if (limit > 0) {
          const renewed = await updateCounting(
            context,
            t.counters,
            "count",
            sql`1`,
            (query) => query.where("counter_key", "=", key).where("reset_at", "<=", now),
            { reset_at: resetAt },
          );
          if (renewed !== null) return { count: 1, allowed: true, resetAt };
          const created = await insertUnlessDuplicate(context, t.counters, { counter_key: key, count: 1, reset_at: resetAt });
          if (created) return { count: 1, allowed: true, resetAt };
        }
        const current = await readCounter(key);
        if (current && num(current.reset_at) > now && num(current.count) >= limit) {
          return { count: num(current.count), allowed: false, resetAt: num(current.reset_at) };
        }
      }
      const current = await readCounter(key);
      return { count: num(current?.count ?? 0), allowed: false, resetAt: num(current?.reset_at ?? now + windowMs) };
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
