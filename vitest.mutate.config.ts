// The vitest configuration for mutation testing (`pnpm mutate`, see stryker.config.mjs and docs/testing.md).
// Same aliases and timeouts as vitest.config.ts, but only the tests that pin the behaviour of
// packages/core: the unit tests beside the code and the HTTP contract suite in test/http. The docs
// examples (docs/**) and the demo app (examples/**) are left out: they drive the same flows through
// the same adapters as test/http, so they add run time to every mutant they cover without pinning
// anything the other suites do not. test/browser is left out for the same reason, and because it
// starts Chromium. One docs example is in: docs/examples/oauth-providers.test.ts is the only test of
// a plain OAuth 2.0 provider whose user-info has no `sub` (a GitHub-like API), which is what tells
// the OAuth 2.0 branch of the callback from the OpenID Connect one.
import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The base's projects (quick and slow) are left out: this configuration is one project of its own.
const { projects: _projects, ...shared } = base.test ?? {};

export default defineConfig({
  ...base,
  test: {
    ...shared,
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "docs/examples/oauth-providers.test.ts"],
    exclude: [...configDefaults.exclude, "test/browser/**"],
  },
});
