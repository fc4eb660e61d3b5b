import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { type Auth, createAuth, memoryStorage } from "@portcullis/core";
import { authApp, requireAuth } from "@portcullis/hono";
import { build } from "esbuild";
import { Hono } from "hono";

/** The page's one HTML file: the bundle mounts the React app into `#root`. */
const pageHtml = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Portcullis on React</title>
  </head>
  <body>
    <div id="root"></div>
    <script type="module" src="/app.js"></script>
  </body>
</html>
`;

/** No script but the page's own bundle, no style or frame from elsewhere. */
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

let bundling: Promise<string> | undefined;

/**
 * Bundles `page/main.tsx` (React, `@portcullis/react` and `@portcullis/client`) for the browser with
 * esbuild, in memory, once per process. Workspace packages resolve to their `src/` through
 * `page/tsconfig.json`'s paths, so the page works on a fresh clone that has never run `pnpm build`.
 *
 * @example
 * ```ts
 * const javascript = await bundlePage();
 * ```
 */
export function bundlePage(): Promise<string> {
  bundling ??= build({
    entryPoints: [fileURLToPath(new URL("../page/main.tsx", import.meta.url))],
    tsconfig: fileURLToPath(new URL("../page/tsconfig.json", import.meta.url)),
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  }).then((result) => result.outputFiles[0]?.text ?? "");
  return bundling;
}

/** The options of {@link createExampleApp}. */
export interface ExampleAppOptions {
  /** Where the browser opens the page, `http://localhost:<port>`: the passkeys' origin. */
  origin: string;
  /** The server's clock; default `Date.now`. */
  now?: () => number;
}

/**
 * The example's server: the Portcullis routes (`authApp`, memoryStorage, passkeys for `origin`),
 * `GET /api/v1/payouts` behind `requireAuth(auth, { maxAge: "1m" })` (a sign-in older than a minute
 * answers 40104, which the page's step-up dialog handles), the page and its bundle.
 *
 * @example
 * ```ts
 * const { app, auth } = createExampleApp({ origin: "http://localhost:3001" });
 * serve({ fetch: app.fetch, port: 3001 });
 * ```
 */
export function createExampleApp({ origin, now }: ExampleAppOptions): { app: Hono; auth: Auth } {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: origin,
    audience: "portcullis-react-example",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    passkeys: { rpId: new URL(origin).hostname, rpName: "Portcullis on React", origins: [origin] },
    ...(now ? { now } : {}),
  });
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.header("content-security-policy", contentSecurityPolicy);
    c.header("x-content-type-options", "nosniff");
  });
  app.route("/", authApp(auth));
  app.get("/api/v1/payouts", requireAuth(auth, { maxAge: "1m" }), (c) =>
    c.json({ code: 0, message: "OK", data: { total: 1200 } }),
  );
  app.get("/app.js", async (c) => c.body(await bundlePage(), 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/", (c) => c.html(pageHtml));
  return { app, auth };
}
