import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

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
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts", "examples/*/src/**/*.test.ts", "docs/**/*.test.ts"],
    // Guards against a hang, not limits: every test waits for the events it needs (a server that
    // listens, a child that exits, a message that arrives), so a machine busy with other work only
    // makes it slower. A test that needs longer still says so itself.
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
