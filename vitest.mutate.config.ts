// The vitest configuration for mutation testing (`pnpm mutate`, see stryker.config.mjs and docs/testing.md).
// Same aliases and timeouts as vitest.config.ts, but only the tests that pin the behaviour of
// packages/core: the unit tests beside the code and the HTTP contract suite in test/http. The docs
// examples (docs/**) and the demo app (examples/**) are left out: they drive the same flows through
// the same adapters as test/http, so they add run time to every mutant they cover without pinning
// anything the other suites do not. test/browser is left out for the same reason, and because it
// starts Chromium.
import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, "test/browser/**"],
  },
});
