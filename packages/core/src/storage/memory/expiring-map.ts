/** Below this many entries a table is never swept. */
export const minimumSweepSize = 1024;

/**
 * Keys by the expiry their value had when stored: a binary min-heap in two parallel arrays, so
 * the expired ones are found without reading the live ones. A key stored again is pushed again;
 * the record it leaves behind is recognised when it comes up (its key is gone, or its value
 * expires later) and passed over.
 */
export function expiryHeap() {
  const times: number[] = [];
  const keys: string[] = [];
  const swap = (a: number, b: number) => {
    [times[a], times[b]] = [times[b] as number, times[a] as number];
    [keys[a], keys[b]] = [keys[b] as string, keys[a] as string];
  };
  return {
    get size(): number {
      return times.length;
    },
    push(time: number, key: string): void {
      let index = times.push(time) - 1;
      keys.push(key);
      while (index > 0) {
        const parent = (index - 1) >> 1;
        if ((times[parent] as number) <= time) return;
        swap(index, parent);
        index = parent;
      }
    },
    /** The key of the earliest record if it is due by `now` (removed from the heap), else undefined. */
    popDue(now: number): string | undefined {
      if (times.length === 0 || (times[0] as number) > now) return undefined;
      const key = keys[0];
      const last = times.length - 1;
      swap(0, last);
      times.pop();
      keys.pop();
      for (let index = 0; ; ) {
        const left = 2 * index + 1;
        const smallest = left + 1 < last && (times[left + 1] as number) < (times[left] as number) ? left + 1 : left;
        if (smallest >= last || (times[index] as number) <= (times[smallest] as number)) break;
        swap(index, smallest);
        index = smallest;
      }
      return key;
    },
  };
}

/**
 * A map whose expired entries are dropped whenever its heap of expiries has doubled since the
 * last sweep, and by `deleteExpired`: the work is amortised O(log n) per insert, the map holds at most about twice
 * its live entries, and a sweep reads only what has expired. A value's expiry may change only
 * through `set` (writes straight to `entries` replace a value with one of the same expiry).
 * `dropped` hears of each entry pruned, so an index over the map can forget it too.
 */
export function expiringMap<V>(expiresAt: (value: V) => number, dropped: (key: string, value: V) => void = () => {}) {
  const entries = new Map<string, V>();
  const heap = expiryHeap();
  let sweepAtSize = minimumSweepSize;
  /** Deletes at most `limit` entries expired by `now`; returns how many. */
  const deleteExpired = (now: number, limit: number): number => {
    let deleted = 0;
    while (deleted < limit) {
      const key = heap.popDue(now);
      if (key === undefined) break;
      const entry = entries.get(key);
      if (entry === undefined || expiresAt(entry) > now) continue;
      entries.delete(key);
      dropped(key, entry);
      deleted += 1;
    }
    return deleted;
  };
  return {
    entries,
    deleteExpired,
    /** Records in the heap: one per `set`, kept until due even when the key was deleted meanwhile. */
    get queued(): number {
      return heap.size;
    },
    /**
     * Stores an entry, first sweeping expired ones if the heap (never smaller than the map) has
     * grown enough: records of keys deleted early (a consumed challenge) leave with them.
     */
    set(key: string, value: V, now: number): void {
      if (heap.size >= sweepAtSize) {
        deleteExpired(now, Number.POSITIVE_INFINITY);
        sweepAtSize = Math.max(minimumSweepSize, heap.size * 2);
      }
      entries.set(key, value);
      heap.push(expiresAt(value), key);
    },
  };
}
