/**
 * The storage conformance kit, the same module as `@portcullis/core/testing` (which keeps working
 * for existing suites): `runStorageConformance` registers the contract of every store of
 * `Storage` with your test runner, so your own adapter can prove it. Import it from
 * `@portcullis/testing`, beside the other test helpers.
 */
export {
  type ConformanceAssertion,
  type ConformanceTestFunctions,
  type StorageConformanceOptions,
  type StorageConformanceSuite,
  runStorageConformance,
  storageConformanceSuites,
} from "@portcullis/core/testing";
