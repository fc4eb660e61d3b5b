// Mutation testing with StrykerJS: `pnpm mutate` (see docs/testing.md, "Mutation testing").
// Slow on purpose and not part of .ci/run.
// Options: https://stryker-mutator.io/docs/stryker-js/configuration/
export default {
  // The code whose behaviour the tests pin down. Tests and test helpers are not mutated.
  mutate: [
    "packages/core/src/{flows,import,tokens,throttle,totp,crypto,http,webauthn,oauth,directory,text,users,email,api-keys,service-accounts,impersonation,passwordless,organizations,step-up}/**/*.ts",
    // The browser client: its single-flight refresh and token handling are what keep sessions alive (RT-2).
    "packages/client/src/**/*.ts",
    "!packages/core/src/**/*.test.ts",
    "!packages/core/src/**/*.test-support.ts",
    "!packages/client/src/index.ts",
    "!packages/client/src/**/*.test.ts",
    "!packages/client/src/**/*.test-support.ts",
  ],
  // Stryker adds `// @ts-nocheck` to the files this matches (by default every .ts file of the
  // sandbox). Keep it to the instrumented package: docs/examples/examples.test.ts compares the
  // example files with the docs byte for byte.
  disableTypeChecks: "packages/core/src/**/*.ts",
  // Build output and local reports are not needed in the sandbox copy.
  ignorePatterns: ["dist", "coverage", ".tmp", "*.tgz"],

  testRunner: "vitest",
  // Stryker's default plugin glob, "@stryker-mutator/*", looks beside its own package, which under
  // pnpm is .pnpm/@stryker-mutator+core@…/node_modules: the runner is not there. Load it by file URL.
  plugins: [import.meta.resolve("@stryker-mutator/vitest-runner")],
  vitest: {
    // Unit tests + test/http; docs/** and examples/** left out (see that file).
    configFile: "vitest.mutate.config.ts",
    // Each mutant runs the test files that import the mutated file (through the aliases), then
    // only the tests that covered it.
    related: true,
  },
  // Per test: each mutant runs only the tests that executed it in the initial run.
  coverageAnalysis: "perTest",
  // Code run outside any test (module load, and the beforeAll hooks of test/http that create the
  // users and sign them in) counts as "static" coverage, and Stryker would rerun every related test
  // file for such a mutant: most of flows/, tokens/ and crypto/, up to a minute per mutant. With
  // ignoreStatic, a mutant that tests also cover runs only those tests (the mutant is active in the
  // beforeAll hooks too), and one that only runs at module load (e.g. the route table's literals)
  // is reported as Ignored. `pnpm mutate --ignoreStatic false` tests those as well, slowly.
  ignoreStatic: true,

  // Rerun only what changed since the last run: mutants in changed code and mutants whose tests
  // changed. The file stays on this machine (git ignores it: ~14 MB that changes every run);
  // `--force` reruns all.
  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",

  // Two cores: one vitest per core. Pass --concurrency 1 to leave a core free.
  concurrency: 2,
  // The tests hash passwords with real argon2id (~50 ms each, some tests many times) and share
  // two cores: allow twice the measured time plus 10 s before calling a mutant a timeout.
  timeoutFactor: 2,
  timeoutMS: 10_000,
  dryRunTimeoutMinutes: 15,

  reporters: ["clear-text", "progress", "html", "json"],
  // The score table per folder and file, and the surviving mutants; not the list of every test.
  clearTextReporter: { reportScoreTable: true, reportMutants: true, reportTests: false },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },

  tempDirName: ".stryker-tmp",
  cleanTempDir: true,
};
