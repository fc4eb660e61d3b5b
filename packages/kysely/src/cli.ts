#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connectStorage } from "./connect.js";
import { importProblem, runImport } from "./import-command.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { latestSchemaVersion, migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";

const usage = `Usage: portcullis migrate (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>]
       portcullis import <file.jsonl> (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--dry-run]

  --url      postgres://user@host:5432/db or mysql://user@host:3306/db (or the DATABASE_URL variable)
  --pglite   the data directory of an embedded PGlite database
  --prefix   the table-name prefix the service uses, if any
  --dry-run  (import) check every line, against the database too, and write nothing

migrate brings the Portcullis tables to schema version ${latestSchemaVersion}. Safe to run again, and from
several processes at once; never migrates down.

import reads one user per line (docs/importing.md), sealing TOTP secrets under AUTH_ENCRYPTION_KEY,
and writes each user with its factors as one. A bad line (or one over 1 MiB) is refused with its
number and reason, the others are imported; running it again changes nothing. Exits 1 when a line
was refused, or an existing account lacks a factor its line carries (named as incomplete).`;

/** Where the command writes: a line for the operator, or one about a failure; `progress`, on a terminal only, redraws one line. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
  progress?(text: string): void;
}

const terminal: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progress: process.stderr.isTTY ? (text) => process.stderr.write(`\r\x1b[K${text}`) : undefined,
};

/**
 * `portcullis migrate`, what a deploy step runs before the new service version starts, and
 * `portcullis import`, which imports users from a JSON Lines file (`importUsers`). Returns the exit code.
 */
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
  const command = positionals[0];
  const wellFormed =
    command === "migrate" ? positionals.length === 1 && !values["dry-run"] : command === "import" && positionals.length === 2;
  if (!wellFormed || (url === undefined) === (values.pglite === undefined)) {
    output.err(usage);
    return 2;
  }
  if (command === "import") {
    const problem = await importProblem(positionals[1] as string, env);
    if (problem) {
      output.err(problem.message);
      return problem.code;
    }
  }
  let storage: KyselyStorage;
  try {
    storage =
      values.pglite !== undefined
        ? await pgliteStorage({ dataDir: values.pglite, prefix: values.prefix, migrate: false })
        : await connectStorage({ url: url as string, prefix: values.prefix, maxConnections: command === "import" ? 8 : 1 });
  } catch (error) {
    // A TypeError is a malformed --url or --prefix: its message names the mistake and never holds the URL.
    if (error instanceof TypeError) {
      output.err(error.message);
      return 2;
    }
    output.err(`${command === "import" ? "import" : "migration"} failed: ${messageOf(error)}`);
    return 1;
  }
  if (command === "import") {
    try {
      return await runImport(storage, positionals[1] as string, { dryRun: values["dry-run"] === true, env, output });
    } finally {
      await storage.close();
    }
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
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

const invokedAs = process.argv[1] === undefined ? "" : realpathSync(process.argv[1]);
if (invokedAs === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
