import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { UserFieldDefinitions } from "@portcullis/core";
import type { KyselyStorage } from "./kysely-storage.js";
import { fieldColumnsOf, fieldMigrationStatements, migrateUserFields, usersTableColumns } from "./user-fields.js";

/** What the command writes (as the CLI's `CommandOutput`). */
interface Output {
  out(line: string): void;
  err(line: string): void;
}

/**
 * The field declaration exported as `exportName` (default `fields`) by the module at `path` (the
 * same object the service gives `createAuth({ user: { fields } })`), checked as `createAuth` checks
 * it; or a problem to tell the operator, with exit code 2.
 */
export async function loadFieldDeclaration(
  path: string,
  exportName = "fields",
): Promise<{ fields: UserFieldDefinitions } | { problem: string }> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    return { problem: `--fields: cannot load ${path}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const fields = loaded[exportName];
  if (typeof fields !== "object" || fields === null) {
    return { problem: `--fields: ${path} exports no "${exportName}": export the object given to createAuth's user.fields` };
  }
  try {
    fieldColumnsOf(fields as UserFieldDefinitions);
  } catch (error) {
    return { problem: `--fields: ${(error as Error).message}` };
  }
  return { fields: fields as UserFieldDefinitions };
}

/**
 * `portcullis fields`: adds the columns of the declared fields the users table lacks (or, with
 * `print`, only writes the statements that would, for a migration tool of your own). Adds only
 * missing, nullable columns: safe to run again, and no row is rewritten. Returns the exit code.
 */
export async function runFieldsMigration(
  storage: KyselyStorage,
  fields: UserFieldDefinitions,
  { print, output }: { print: boolean; output: Output },
): Promise<number> {
  try {
    const statements = print
      ? fieldMigrationStatements(
          storage.dialect,
          storage.tables,
          fieldColumnsOf(fields),
          await usersTableColumns(storage.db, storage.dialect, storage.tables),
        )
      : await migrateUserFields(storage, fields);
    if (print) for (const statement of statements) output.out(`${statement};`);
    else
      output.out(
        statements.length === 0 ? "every field has its column" : `added ${statements.length} column(s): ${statements.join("; ")}`,
      );
    return 0;
  } catch (error) {
    output.err(`fields failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
