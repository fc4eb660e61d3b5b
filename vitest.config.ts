import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Every test of the repository. */
export const testFiles = ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "examples/*/src/**/*.test.ts", "docs/**/*.test.ts"];

/**
 * The slow end-to-end checks, left out of `pnpm test` (which then finishes in at most 12 minutes on
 * a quiet 2-core machine) and run by `pnpm test:slow`; CI runs both. Each takes from 10 s to over a
 * minute, for a reason of its own: schema migrations from every earlier release, host users tables
 * at each version, data directory locks between processes, the database faults injected through a
 * forwarder or cut into an import, a second process (the service, the demo, the import command, a
 * Redis revocation listener), a Redis Cluster of six servers, 150 concurrent directory logins,
 * unauthenticated writes measured against a budget, the docs site and the API reference built,
 * the demo shot at two widths, and the browser suites that race tabs and cookies.
 */
export const slowTestFiles = [
  "packages/kysely/src/migrations.test.ts",
  "packages/kysely/src/existing-users-table.test.ts",
  "packages/kysely/src/pglite-lock.test.ts",
  "packages/kysely/src/import-command.test.ts",
  "packages/redis/src/revocation-channel.test.ts",
  "packages/redis/src/cluster.test.ts",
  "test/http/directory.test.ts",
  "test/storage/mariadb-faults.test.ts",
  "test/storage/postgres-faults.test.ts",
  "test/storage/two-instances.test.ts",
  "test/storage/import-cut.test.ts",
  "examples/express/src/server.test.ts",
  "test/storage/unauthenticated-writes.test.ts",
  "test/docs-site/site.test.ts",
  "test/docs/api-reference.test.ts",
  "test/browser/demo-screenshots.test.ts",
  "test/browser/cookie-mode.test.ts",
  "test/browser/two-tabs.test.ts",
  "test/browser/original-client-tabs.test.ts",
];

/**
 * How many test files `quick` runs at once: one fewer than the cores, as vitest would, but at least
 * two. Its files spend much of their time waiting for PostgreSQL, MariaDB, Redis, slapd or Chromium,
 * so on a 2-core machine a second file fills the core the first leaves idle (about 17 minutes alone,
 * 11 with two). Every file works in a schema, database, key prefix, directory and ports of its own,
 * so files never meet. `slow` keeps vitest's default: its fault injection, second process and
 * concurrency budgets are what would suffer from a neighbour. `PORTCULLIS_TEST_WORKERS=<n>` sets
 * another number (vitest's `--maxWorkers` does not reach a project's own setting).
 */
export const quickWorkers = Number(process.env.PORTCULLIS_TEST_WORKERS) || Math.max(2, availableParallelism() - 1);

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@portcullis\/core\/testing$/, replacement: source("./packages/core/src/testing/index.ts") },
      { find: /^@portcullis\/core$/, replacement: source("./packages/core/src/index.ts") },
      { find: /^@portcullis\/express$/, replacement: source("./packages/express/src/index.ts") },
      { find: /^@portcullis\/hono$/, replacement: source("./packages/hono/src/index.ts") },
      { find: /^@portcullis\/fastify$/, replacement: source("./packages/fastify/src/index.ts") },
      { find: /^@portcullis\/ldap$/, replacement: source("./packages/ldap/src/index.ts") },
      { find: /^@portcullis\/kysely$/, replacement: source("./packages/kysely/src/index.ts") },
      { find: /^@portcullis\/redis$/, replacement: source("./packages/redis/src/index.ts") },
      { find: /^@portcullis\/client$/, replacement: source("./packages/client/src/index.ts") },
      { find: /^@portcullis\/react$/, replacement: source("./packages/react/src/index.ts") },
      { find: /^@portcullis\/testing$/, replacement: source("./packages/testing/src/index.ts") },
    ],
  },
  test: {
    // Guards against a hang, not limits: every test waits for the events it needs (a server that
    // listens, a child that exits, a message that arrives), so a machine busy with other work only
    // makes it slower. A test that needs longer still says so itself.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // `pnpm test` runs "quick", `pnpm test:slow` runs "slow", `pnpm test:full` both (docs/testing.md).
    projects: [
      {
        extends: true,
        test: {
          name: "quick",
          include: testFiles,
          exclude: [...configDefaults.exclude, ...slowTestFiles],
          maxWorkers: quickWorkers,
        },
      },
      { extends: true, test: { name: "slow", include: slowTestFiles } },
    ],
  },
});
