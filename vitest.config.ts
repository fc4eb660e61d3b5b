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
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
