#!/usr/bin/env node
// The `portcullis` command. It lives outside dist/ so that the file exists before the package is
// built: pnpm links a workspace package's bin at install time, before any build, and warns about a
// bin that points into a missing dist/. In a workspace checkout that has not run `pnpm build` yet,
// it says so instead of failing with a module-not-found stack.
const cli = new URL("../dist/cli.js", import.meta.url);
let main;
try {
  ({ main } = await import(cli.href));
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli.js")) throw error;
  process.stderr.write("portcullis: @portcullis/kysely is not built; run `pnpm build` in the repository first.\n");
  process.exit(1);
}
process.exitCode = await main(process.argv.slice(2));
