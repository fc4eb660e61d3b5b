import type { SettingsStore } from "@portcullis/core";
import { type StoreContext, num, upsert } from "./context.js";

/**
 * The settings table as a {@link SettingsStore}: each value is JSON, written by one upsert; a
 * replace is one UPDATE conditional on the text saved (the column compares bytes on MySQL).
 */
export function settingsStore(context: StoreContext): SettingsStore {
  const { db, tables: t } = context;
  return {
    async get(key) {
      const row = await db.selectFrom(t.settings).select("value").where("setting_key", "=", key).executeTakeFirst();
      return row ? JSON.parse(row.value as string) : undefined;
    },
    async set(key, value, now) {
      const values = { setting_key: key, value: JSON.stringify(value), updated_at: now };
      await upsert(context, t.settings, "setting_key", values, { value: values.value, updated_at: now });
    },
    async replace(key, expected, value, now) {
      const result = await db
        .updateTable(t.settings)
        .set({ value: JSON.stringify(value), updated_at: now })
        .where("setting_key", "=", key)
        .where("value", "=", JSON.stringify(expected))
        .executeTakeFirst();
      return num(result.numUpdatedRows) === 1;
    },
  };
}
