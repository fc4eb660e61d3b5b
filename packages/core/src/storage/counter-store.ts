/** The state of one throttling counter after a hit. */
export interface CounterHit {
  /** Hits in the current window, this one included when `allowed`. */
  count: number;
  /** False when the window already held `limit` hits: this one was not counted. */
  allowed: boolean;
  /** When the current window ends. */
  resetAt: number;
}

/** Throttling counters, shared by every instance that shares the storage (RL-1, RL-4). */
export interface CounterStore {
  /**
   * Atomically counts one hit against `key` unless the window already holds `limit`. A
   * window starts at the first hit and lasts `windowMs`. Of N concurrent hits on a fresh
   * key, exactly `limit` are allowed.
   */
  hit(key: string, limit: number, windowMs: number, now: number): Promise<CounterHit>;
  /** The hits counted in the live window, 0 if none. */
  peek(key: string, now: number): Promise<number>;
  /** Deletes the counter, so its next hit starts a new window: a success clears its failures. */
  reset(key: string): Promise<void>;
}
