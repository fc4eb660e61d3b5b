import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The part of esbuild's `build` this file uses (esbuild is a dependency of packages/client, not of the repository root). */
type Build = (options: Record<string, unknown>) => Promise<{ outputFiles: { text: string }[] }>;

const clientPackage = new URL("../../packages/client/", import.meta.url);

let bundling: Promise<string> | undefined;

/**
 * `@portcullis/client` as one minified ES module for a page, bundled in memory from its `src/`
 * (with `@simplewebauthn/browser`) by the package's own esbuild, once per test file: every export
 * of the package, for tests that build clients in the page with options the demo page does not use.
 *
 * @example
 * ```ts
 * await context.route("**\/test-client.js", async (route) =>
 *   route.fulfill({ body: await bundledClient(), contentType: "text/javascript" }),
 * );
 * ```
 */
export function bundledClient(): Promise<string> {
  bundling ??= (async () => {
    const esbuild = createRequire(clientPackage).resolve("esbuild");
    const { build } = (await import(pathToFileURL(esbuild).href)) as { build: Build };
    const result = await build({
      entryPoints: [fileURLToPath(new URL("src/index.ts", clientPackage))],
      bundle: true,
      write: false,
      minify: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      logLevel: "silent",
    });
    return result.outputFiles[0]?.text ?? "";
  })();
  return bundling;
}
