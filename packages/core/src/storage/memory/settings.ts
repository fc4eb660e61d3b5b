import type { SettingsStore } from "../types.js";
import { copy } from "./records.js";

/** The memory {@link SettingsStore}: values copied in and out, so a caller's object is never shared. */
export function memorySettings(): SettingsStore {
  const values = new Map<string, unknown>();
  return {
    async get(key) {
      return values.has(key) ? copy(values.get(key)) : undefined;
    },
    async set(key, value) {
      values.set(key, copy(value));
    },
    async replace(key, expected, value) {
      if (!values.has(key) || JSON.stringify(values.get(key)) !== JSON.stringify(expected)) return false;
      values.set(key, copy(value));
      return true;
    },
  };
}
