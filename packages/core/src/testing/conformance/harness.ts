import type { LegacyRefreshToken, Storage } from "../../storage/types.js";

/**
 * Tries to change a record a storage returned. A storage may hand out copies (the change is
 * made, to the copy) or frozen records (the change throws a TypeError); either way the test
 * then checks that nothing stored changed.
 */
export function tryToMutate(change: () => void): void {
  try {
    change();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
}

/**
 * The assertions the conformance suite uses: a structural subset of vitest's and Jest's
 * `expect(value)`, so either can be passed in without this package depending on them.
 */
export interface ConformanceAssertion {
  /** Passes when the value is `expected` by `Object.is`. */
  toBe(expected: unknown): void;
  /** Passes when the value equals `expected` deeply, property by property. */
  toEqual(expected: unknown): void;
  /** Passes when the value is `null`. */
  toBeNull(): void;
  /** Passes when the value is `undefined`. */
  toBeUndefined(): void;
  /** Passes when the value's `length` is `length`. */
  toHaveLength(length: number): void;
  /** The same assertions, negated. */
  readonly not: ConformanceAssertion;
}

/**
 * The test functions the conformance suite registers its tests with: vitest's (or Jest's)
 * `describe`, `it` and `expect`, passed in by the caller.
 *
 * @example
 * ```ts
 * import { describe, expect, it } from "vitest";
 * const test: ConformanceTestFunctions = { describe, it, expect };
 * ```
 */
export interface ConformanceTestFunctions {
  /** Groups the tests that `body` registers under `name`. */
  describe(name: string, body: () => void): void;
  /** Registers one test; `body` may be async. */
  it(name: string, body: () => Promise<void> | void): void;
  /** Starts an assertion on `actual`. */
  expect(actual: unknown): ConformanceAssertion;
}

/** What every suite receives: the injected test functions and the adapter's factory. */
export interface SuiteContext {
  test: ConformanceTestFunctions;
  makeStorage: () => Storage | Promise<Storage>;
  /** Stores a refresh token of an earlier release where `findLegacyRefreshToken` reads it; absent for a store without such tokens. */
  insertLegacyRefreshToken?: (storage: Storage, token: LegacyRefreshToken) => Promise<void>;
}

/** Runs `operation` `times` times at once and waits for all of them. */
export function concurrently<T>(times: number, operation: (index: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: times }, (_, index) => operation(index)));
}

/** How many of `values` satisfy `predicate`. */
export function countWhere<T>(values: readonly T[], predicate: (value: T) => boolean): number {
  return values.filter(predicate).length;
}
