#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connectStorage } from "./connect.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { latestSchemaVersion, migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";

const usage = `Usage: portcullis migrate (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>]

  --url      postgres://user@host:5432/db or mysql://user@host:3306/db (or the DATABASE_URL variable)
  --pglite   the data directory of an embedded PGlite database
  --prefix   the table-name prefix the service uses, if any

Brings the Portcullis tables to schema version ${latestSchemaVersion}. Safe to run again, and from
several processes at once; never migrates down.`;

/** Where the command writes: a line for the operator, or one about a failure. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
}

const terminal: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `portcullis migrate`: what a deploy step runs before the new service version starts. Returns the exit code. */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  output: CommandOutput = terminal,
): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    output.err(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    output.out(usage);
    return 0;
  }
  const url = values.url ?? env.DATABASE_URL;
  if (positionals[0] !== "migrate" || positionals.length !== 1 || (url === undefined) === (values.pglite === undefined)) {
    output.err(usage);
    return 2;
  }
  let storage: KyselyStorage;
  try {
    storage =
      values.pglite !== undefined
        ? await pgliteStorage({ dataDir: values.pglite, prefix: values.prefix, migrate: false })
        : await connectStorage({ url: url as string, prefix: values.prefix, maxConnections: 1 });
  } catch (error) {
    // A TypeError is a malformed --url or --prefix: its message names the mistake and never holds the URL.
    if (error instanceof TypeError) {
      output.err(error.message);
      return 2;
    }
    output.err(`migration failed: ${messageOf(error)}`);
    return 1;
  }
  try {
    const { from, to } = await migrate(storage);
    output.out(from === to ? `schema already at version ${to}` : `schema migrated from version ${from} to ${to}`);
    return 0;
  } catch (error) {
    output.err(`migration failed: ${messageOf(error)}`);
    return 1;
  } finally {
    await storage.close();
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      pglite: { type: "string" },
      prefix: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

const invokedAs = process.argv[1] === undefined ? "" : realpathSync(process.argv[1]);
if (invokedAs === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
