// Builds dist/browser/portcullis-client.min.js (exported as @portcullis/client/browser): the client
// and @simplewebauthn/browser in one minified ES module, for a page that loads it with no bundler.
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const packageJson = (url) => JSON.parse(readFileSync(url, "utf8"));
const { version } = packageJson(new URL("./package.json", import.meta.url));
// Its exports map has no ./package.json: go up from its ES module entry (esm/index.js).
const webauthn = packageJson(new URL("../package.json", import.meta.resolve("@simplewebauthn/browser")));

await build({
  entryPoints: [new URL("./src/index.ts", import.meta.url).pathname],
  outfile: new URL("./dist/browser/portcullis-client.min.js", import.meta.url).pathname,
  bundle: true,
  minify: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  legalComments: "eof",
  banner: {
    js: `/*! @portcullis/client ${version} (MIT), with @simplewebauthn/browser ${webauthn.version} (MIT, Matthew Miller) */`,
  },
  logLevel: "warning",
});
