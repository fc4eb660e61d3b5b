import type { CounterStore } from "../types.js";
import { expiringMap } from "./expiring-map.js";

/** The memory {@link CounterStore}: fixed windows per key, expired ones pruned as new keys arrive. */
export function memoryCounters() {
  const windowMap = expiringMap<{ count: number; resetAt: number }>((window) => window.resetAt);
  const { entries: windows, set } = windowMap;
  const store: CounterStore = {
    async hit(key, limit, windowMs, now) {
      let window = windows.get(key);
      if (!window || window.resetAt <= now) {
        window = { count: 0, resetAt: now + windowMs };
        set(key, window, now);
      }
      if (window.count >= limit) return { count: window.count, allowed: false, resetAt: window.resetAt };
      window.count += 1;
      return { count: window.count, allowed: true, resetAt: window.resetAt };
    },
    async peek(key, now) {
      const window = windows.get(key);
      return window && window.resetAt > now ? window.count : 0;
    },
    async reset(key) {
      windows.delete(key);
    },
  };
  return { store, size: () => windows.size, deleteExpired: windowMap.deleteExpired };
}
