/** Saved configuration that operators change at run time (the directory policy). */
export interface SettingsStore {
  /** The value saved under this key, as JSON gives it back, or undefined when none is. */
  get(key: string): Promise<unknown>;
  /** Saves a JSON-serialisable value under this key, replacing the one before. */
  set(key: string, value: unknown, now: number): Promise<void>;
  /**
   * Atomically saves `value` under this key only if the value saved there is still `expected`, as
   * `get` answered it (compared as the text `JSON.stringify` gives; compare-and-set): resealing the
   * directory bind password under a new key (KR-2) never undoes a policy saved since it was read.
   * Returns whether it wrote; false when nothing is saved under the key.
   */
  replace(key: string, expected: unknown, value: unknown, now: number): Promise<boolean>;
}
