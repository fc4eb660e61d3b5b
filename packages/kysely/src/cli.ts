#!/usr/bin/env node
import { realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { adoptExistingUsers } from "./adopt.js";
import { connectStorage } from "./connect.js";
import { loadFieldDeclaration, runFieldsMigration } from "./fields-command.js";
import { importProblem, runImport } from "./import-command.js";
import { encryptionKeysFrom, runReseal } from "./keys-command.js";
import type { KyselyStorage } from "./kysely-storage.js";
import { latestSchemaVersion, migrate } from "./migrate.js";
import { pgliteStorage } from "./pglite.js";
import { revokeAllRefusal, runRevokeAll } from "./sessions-command.js";
import type { UsersTableOptions } from "./users-table.js";

const usage = `Usage: portcullis migrate (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--users <file.json>]
       portcullis adopt (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] --users <file.json>
       portcullis import <file.jsonl> (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--fields <module> [--export <name>]] [--dry-run]
       portcullis sessions revoke-all (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--yes]
       portcullis keys reseal (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--dry-run]
       portcullis fields --fields <module> [--export <name>] (--url <database URL> | --pglite <data directory>) [--prefix <table prefix>] [--print]

  --url      postgres://user@host:5432/db or mysql://user@host:3306/db (or the DATABASE_URL variable)
  --pglite   the data directory of an embedded PGlite database
  --prefix   the table-name prefix the service uses, if any
  --users    a JSON file holding the storage's users option, when your own table holds the users
             (docs/existing-users-table.md); every command takes it
  --dry-run  (import) check every line, against the database too, and write nothing;
             (keys reseal) open and count every sealed value, and write nothing
  --yes      (sessions revoke-all) confirm without being asked: for scripts and other non-interactive use
  --fields   (fields, import) a JavaScript module exporting the user field declaration given to
             createAuth; import needs it for lines that carry fields
  --export   (fields, import) the name of that export; default "fields"
  --print    (fields) write the ALTER TABLE statements instead of running them

migrate brings the Portcullis tables to schema version ${latestSchemaVersion}. Safe to run again, and from
several processes at once; never migrates down.

import reads one user per line (docs/importing.md), sealing TOTP secrets under AUTH_ENCRYPTION_KEY,
and writes each user with its factors as one. A bad line (or one over 1 MiB) is refused with its
number and reason, the others are imported; running it again changes nothing. Exits 1 when a line
was refused, or an existing account lacks a factor its line carries (named as incomplete).

adopt makes a Portcullis account for each row of your users table that has none, importing its
password hash (docs/existing-users-table.md). Running it again adopts only rows added since.

sessions revoke-all ends every session of every user (incident response, docs/flows/step-up.md):
every refresh token is refused at once, every access token at its next check. Without --yes it
asks at a terminal, and exits 2 where there is none.

keys reseal finishes an encryption-key rotation (docs/configuration.md#key-rotation): every TOTP
secret and the directory bind password sealed with a key other than the current one is sealed again
under it, with the keys of AUTH_ENCRYPTION_KEY (one key, or the keyring as JSON:
{"current":"k2","keys":{"k1":"…","k2":"…"}}). It prints what is left on each old key: remove key X
from secrets.encryption.keys once it shows 0. A value changed meanwhile is left to the change; one no
listed key opens is named and kept. Exits 1 when a value could not be opened. Safe to run again.

fields adds a nullable column to the users table for each declared user field that has none
(docs/flows/user-fields.md); existing rows keep their data and read the new fields' defaults.
Safe to run again.`;

/** Where the command writes: a line for the operator, or one about a failure; `progress`, on a terminal only, redraws one line. */
export interface CommandOutput {
  out(line: string): void;
  err(line: string): void;
  progress?(text: string): void;
  /** Asks the operator a question and answers what they typed; on a terminal only. */
  ask?(question: string): Promise<string>;
}

/** The operator's answer to `question`, typed at the terminal. */
async function askAtTerminal(question: string): Promise<string> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await prompt.question(question);
  } finally {
    prompt.close();
  }
}

const terminal: CommandOutput = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  progress: process.stderr.isTTY ? (text) => process.stderr.write(`\r\x1b[K${text}`) : undefined,
  ask: process.stdin.isTTY && process.stderr.isTTY ? askAtTerminal : undefined,
};

/**
 * `portcullis migrate`, what a deploy step runs before the new service version starts,
 * `portcullis import`, which imports users from a JSON Lines file (`importUsers`), `portcullis
 * fields`, which adds the columns of the declared user fields, and
 * `portcullis sessions revoke-all`, which ends every session of every user (`revokeAllSessions`,
 * STUP-6) once confirmed, and `portcullis keys reseal`, which seals every secret at rest again under
 * the current encryption key (`resealSecrets`, KR-1). Returns the exit code.
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
    command === "migrate" || command === "adopt"
      ? positionals.length === 1 && !values["dry-run"] && !values.yes && (command === "migrate" || values.users !== undefined)
      : command === "import"
        ? positionals.length === 2 && !values.yes
        : command === "fields"
          ? positionals.length === 1 && values.fields !== undefined && !values["dry-run"] && !values.yes
          : command === "keys"
            ? positionals[1] === "reseal" && positionals.length === 2 && !values.yes
            : command === "sessions" && positionals[1] === "revoke-all" && positionals.length === 2 && !values["dry-run"];
  if (!wellFormed || (url === undefined) === (values.pglite === undefined)) {
    output.err(usage);
    return 2;
  }
  const keys = command === "keys" ? encryptionKeysFrom(env) : null;
  const problem =
    command === "import"
      ? await importProblem(positionals[1] as string, env)
      : command === "sessions"
        ? await revokeAllRefusal(values.yes === true, output)
        : keys !== null && "problem" in keys
          ? keys.problem
          : null;
  if (problem) {
    output.err(problem.message);
    return problem.code;
  }
  const declared =
    command === "fields" || (command === "import" && values.fields !== undefined)
      ? await loadFieldDeclaration(values.fields as string, values.export)
      : null;
  if (declared !== null && "problem" in declared) {
    output.err(declared.problem);
    return 2;
  }
  // The import reads and writes the declared fields' columns; the fields command adds them, so it opens the storage without.
  const userFields = command === "import" && declared !== null && "fields" in declared ? declared.fields : undefined;
  let storage: KyselyStorage;
  try {
    const users = values.users === undefined ? undefined : await usersOption(values.users);
    storage =
      values.pglite !== undefined
        ? await pgliteStorage({ dataDir: values.pglite, prefix: values.prefix, users, migrate: false, userFields })
        : await connectStorage({
            url: url as string,
            prefix: values.prefix,
            users,
            userFields,
            maxConnections: command === "import" ? 8 : command === "keys" ? 4 : 1,
          });
  } catch (error) {
    // A TypeError is a malformed --url or --prefix: its message names the mistake and never holds the URL.
    if (error instanceof TypeError) {
      output.err(error.message);
      return 2;
    }
    output.err(`${failedStep[command as keyof typeof failedStep]} failed: ${messageOf(error)}`);
    return 1;
  }
  if (command === "sessions") {
    try {
      return await runRevokeAll(storage, output);
    } finally {
      await storage.close();
    }
  }
  if (keys !== null && "keys" in keys) {
    try {
      return await runReseal(storage, keys.keys, { dryRun: values["dry-run"] === true, output });
    } finally {
      await storage.close();
    }
  }
  if (command === "fields" && declared !== null) {
    try {
      return await runFieldsMigration(storage, declared.fields, { print: values.print === true, output });
    } finally {
      await storage.close();
    }
  }
  if (command === "adopt") {
    try {
      const summary = await adoptExistingUsers(storage, {
        onSkipped: ({ id, reason }) => output.err(`id ${id}: skipped: ${reason}`),
        onWithoutPassword: ({ id, reason }) => output.err(`id ${id}: adopted without a password: ${reason}`),
      });
      output.out(
        `${summary.read} without an account, ${summary.adopted} adopted (${summary.withoutPassword} without a password), ${summary.skipped} skipped`,
      );
      return summary.skipped > 0 ? 1 : 0;
    } catch (error) {
      output.err(`adopt failed: ${messageOf(error)}`);
      return 1;
    } finally {
      await storage.close();
    }
  }
  if (command === "import") {
    try {
      return await runImport(storage, positionals[1] as string, {
        dryRun: values["dry-run"] === true,
        env,
        output,
        ...(userFields === undefined ? {} : { userFields }),
      });
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

/** What a command names when the database cannot be opened. */
const failedStep = {
  migrate: "migration",
  import: "import",
  sessions: "revoke-all",
  keys: "reseal",
  fields: "fields",
  adopt: "adopt",
} as const;

/**
 * The users option held in the JSON file at `path`.
 *
 * @throws {TypeError} saying the file cannot be read or is not JSON: the command exits 2.
 */
async function usersOption(path: string): Promise<UsersTableOptions> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new TypeError(`@portcullis/kysely: cannot read the --users file ${path}`);
  }
  try {
    return JSON.parse(text) as UsersTableOptions;
  } catch {
    throw new TypeError(`@portcullis/kysely: the --users file ${path} is not JSON`);
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
      users: { type: "string" },
      "dry-run": { type: "boolean" },
      yes: { type: "boolean" },
      fields: { type: "string" },
      export: { type: "string" },
      print: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

const invokedAs = process.argv[1] === undefined ? "" : realpathSync(process.argv[1]);
if (invokedAs === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
