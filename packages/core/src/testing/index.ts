/**
 * The storage conformance suite: {@link runStorageConformance} registers, with your test runner,
 * the tests every storage adapter passes, so a storage of your own can prove it meets the
 * contract of `Storage`.
 *
 * @packageDocumentation
 * @module @portcullis/core/testing
 */
import type { LegacyRefreshToken, Storage } from "../storage/types.js";
import { apiKeysSuite } from "./conformance/api-keys.js";
import { challengesSuite } from "./conformance/challenges.js";
import { countersSuite } from "./conformance/counters.js";
import type { ConformanceTestFunctions, SuiteContext } from "./conformance/harness.js";
import { identitiesSuite } from "./conformance/identities.js";
import { organizationsSuite } from "./conformance/organizations.js";
import { passkeysSuite } from "./conformance/passkeys.js";
import { recoveryCodesSuite } from "./conformance/recovery-codes.js";
import { useUserIds } from "./conformance/samples.js";
import { serviceAccountsSuite } from "./conformance/service-accounts.js";
import { sessionsSuite } from "./conformance/sessions.js";
import { settingsSuite } from "./conformance/settings.js";
import { totpSuite } from "./conformance/totp.js";
import { usersSuite } from "./conformance/users.js";

export { sampleApiKey } from "./conformance/api-keys.js";
export type { ConformanceAssertion, ConformanceTestFunctions } from "./conformance/harness.js";
export { sampleDomain, sampleInvitation, sampleMembership, sampleOrganization } from "./conformance/organizations.js";
export { conformanceUserFields, sampleFieldValues } from "./conformance/samples.js";

const suites = {
  users: usersSuite,
  totp: totpSuite,
  recoveryCodes: recoveryCodesSuite,
  sessions: sessionsSuite,
  challenges: challengesSuite,
  counters: countersSuite,
  passkeys: passkeysSuite,
  identities: identitiesSuite,
  settings: settingsSuite,
  organizations: organizationsSuite,
  apiKeys: apiKeysSuite,
  serviceAccounts: serviceAccountsSuite,
} satisfies Record<keyof Storage, (context: SuiteContext) => void>;

/** The name of one conformance suite: one per store of {@link Storage}. */
export type StorageConformanceSuite = keyof typeof suites;

/** The names of every conformance suite, in the order they are registered. */
export const storageConformanceSuites = Object.keys(suites) as readonly StorageConformanceSuite[];

/** Options of {@link runStorageConformance}. */
export interface StorageConformanceOptions {
  /** Names the top-level `describe` block: `storage conformance: <name>`. */
  name: string;
  /**
   * Returns the storage under test. It is called once per test; it may return a fresh storage
   * or the same one each time, since every test uses its own ids and never relies on an empty store.
   */
  makeStorage: () => Storage | Promise<Storage>;
  /** The test runner's `describe`, `it` and `expect` (vitest's or Jest's). */
  test: ConformanceTestFunctions;
  /**
   * Suites this adapter opts out of, each with the written reason. An opted-out suite still
   * registers one passing test named `opted out: <reason>`, so the gap shows in every report.
   */
  skip?: Partial<Record<StorageConformanceSuite, string>>;
  /**
   * Makes a fresh user id in the form the storage keeps them, for the users the tests create:
   * `() => randomUUID()` for a store of UUID ids, a random decimal for one of integer ids (see
   * `@portcullis/kysely`'s `users` option). Default: `user-<uuid>`. Ids the tests look up without
   * creating them stay `user-<uuid>`, which such a store must answer as unknown.
   */
  userIds?: () => string;
  /**
   * For a store with `sessions.findLegacyRefreshToken` (one whose earlier releases kept refresh
   * tokens in a table of their own): stores `token` in that table, as such a release left it, so
   * the `sessions` suite can read it back. Without it the suite checks only that the method finds
   * no token it was not given.
   */
  insertLegacyRefreshToken?: (storage: Storage, token: LegacyRefreshToken) => Promise<void>;
}

/**
 * Registers the public storage conformance suite: every storage adapter (the memory one,
 * `@portcullis/kysely`, your own) runs it to prove it meets the contract of {@link Storage},
 * above all that each single-use item is consumed by one atomic conditional write (ST-1: 20
 * concurrent consumers, exactly one winner), that lookups match every key (ST-2), and that
 * throttling counters allow exactly `limit` of N concurrent hits (RL-4).
 *
 * It imports no test runner: pass yours in. It only registers tests, so call it at the top
 * level of a test file. Tests use fresh random ids and their own time values, so they also
 * pass against a persistent database that is not wiped between runs.
 *
 * @throws Error when `skip` names an unknown suite or gives an empty reason.
 *
 * @example
 * ```ts
 * // my-storage.test.ts
 * import { runStorageConformance } from "@portcullis/core/testing";
 * import { describe, expect, it } from "vitest";
 * import { myStorage } from "./my-storage.js";
 *
 * runStorageConformance({
 *   name: "my storage",
 *   makeStorage: () => myStorage({ url: process.env.DATABASE_URL }),
 *   test: { describe, it, expect },
 *   skip: { settings: "run-time settings are read from environment variables in this deployment" },
 * });
 * ```
 */
export function runStorageConformance(options: StorageConformanceOptions): void {
  const skip: Partial<Record<string, string>> = options.skip ?? {};
  for (const [suite, reason] of Object.entries(skip)) {
    if (!(suite in suites)) throw new Error(`runStorageConformance: unknown suite "${suite}" in skip`);
    if (typeof reason !== "string" || reason.trim() === "") {
      throw new Error(`runStorageConformance: opting out of "${suite}" needs a written reason`);
    }
  }
  const context: SuiteContext = {
    test: options.test,
    makeStorage: () => {
      useUserIds(options.userIds);
      return options.makeStorage();
    },
    insertLegacyRefreshToken: options.insertLegacyRefreshToken,
  };
  options.test.describe(`storage conformance: ${options.name}`, () => {
    for (const suite of storageConformanceSuites) {
      const reason = skip[suite];
      if (reason === undefined) {
        suites[suite](context);
      } else {
        options.test.describe(suite, () => options.test.it(`opted out: ${reason.trim()}`, () => {}));
      }
    }
  });
}
