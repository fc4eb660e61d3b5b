import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Where the page loads its client from: `import { createAuthClient } from "./vendor/portcullis-client.js"`. */
export const pageClientPath = "/vendor/portcullis-client.js";

/** The page's client as one script, with the files it was bundled from. */
export interface PageClientBundle {
  /** A minified ES module that imports nothing: the client with `@simplewebauthn/browser` inlined. */
  javascript: string;
  /** The files bundled, relative to the repository root: the client's `src/`, never its `dist/`. */
  sources: string[];
}

const repositoryRoot = fileURLToPath(new URL("../../../", import.meta.url));

let bundling: Promise<PageClientBundle> | undefined;

/**
 * Bundles `page-client.ts` for the browser with esbuild, in memory, once per process (about 50 ms;
 * later calls share the first result). Workspace packages resolve to their `src/` through the
 * repository's `tsconfig.json` paths, as they do for `tsx` running the demo, so the page works on a
 * fresh clone that has never run `pnpm build`.
 *
 * @example
 * ```ts
 * const { javascript } = await bundlePageClient();
 * app.get(pageClientPath, (_req, res) => res.type("text/javascript").send(javascript));
 * ```
 */
export function bundlePageClient(): Promise<PageClientBundle> {
  bundling ??= build({
    absWorkingDir: repositoryRoot,
    entryPoints: [fileURLToPath(new URL("./page-client.ts", import.meta.url))],
    tsconfig: "tsconfig.json",
    bundle: true,
    write: false,
    metafile: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  }).then((result) => ({
    javascript: result.outputFiles[0]?.text ?? "",
    sources: Object.keys(result.metafile.inputs),
  }));
  return bundling;
}
