// Run by scripts/check-packages.sh with the empty project where the packed tarballs are installed:
// measures what @portcullis/client costs a page, minified and gzipped, beside @simplewebauthn/browser
// (which it bundles), and checks that the browser bundle it ships loads and exports the client.
// Usage: node scripts/client-bundle-size.mjs <project directory>
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const project = process.argv[2];
if (!project) {
  console.error("usage: node scripts/client-bundle-size.mjs <project directory>");
  process.exit(2);
}
// esbuild is a dev dependency of packages/client, which builds the shipped bundle with it.
const { build } = createRequire(new URL("../packages/client/package.json", import.meta.url))("esbuild");
const installed = (name) => join(project, "node_modules", name);

const shippedBundle = join(installed("@portcullis/client"), "dist/browser/portcullis-client.min.js");
const shipped = await import(pathToFileURL(shippedBundle).href);
if (typeof shipped.createAuthClient !== "function") {
  console.error("client bundle: @portcullis/client/browser does not export createAuthClient");
  process.exit(1);
}

/** Minifies `entry` into one ES module as a page's bundler would; `external` stays out. */
async function minified(entry, external = []) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    external,
    write: false,
    logLevel: "error",
  });
  return result.outputFiles[0].contents;
}

const clientEntry = join(installed("@portcullis/client"), "dist/index.js");
const webauthnEntry = join(installed("@simplewebauthn/browser"), "esm/index.js");
const rows = [
  ["@portcullis/client/browser, as shipped (with @simplewebauthn/browser)", readFileSync(shippedBundle)],
  ["@portcullis/client alone (@simplewebauthn/browser left external)", await minified(clientEntry, ["@simplewebauthn/browser"])],
  ["@simplewebauthn/browser, minified the same way", await minified(webauthnEntry)],
  [
    "@simplewebauthn/browser, its own dist/bundle/index.umd.min.js",
    readFileSync(join(installed("@simplewebauthn/browser"), "dist/bundle/index.umd.min.js")),
  ],
];
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log("browser bundle sizes (minified / minified + gzip -9):");
for (const [label, bytes] of rows) {
  console.log(`  ${kb(bytes.length).padStart(9)} / ${kb(gzipSync(bytes, { level: 9 }).length).padStart(8)}  ${label}`);
}
