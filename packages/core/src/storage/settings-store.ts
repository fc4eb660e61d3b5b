/** Saved configuration that operators change at run time (the directory policy). */
export interface SettingsStore {
  /** The value saved under this key, as JSON gives it back, or undefined when none is. */
  get(key: string): Promise<unknown>;
  /** Saves a JSON-serialisable value under this key, replacing the one before. */
  set(key: string, value: unknown, now: number): Promise<void>;
}
