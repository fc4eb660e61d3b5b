import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { access, constants } from "node:fs/promises";
import { createInterface } from "node:readline";
import { type ImportSummary, UnreadableRecord, createAuth, importUsers } from "@portcullis/core";
import type { KyselyStorage } from "./kysely-storage.js";

/** Where `portcullis import` writes: lines for the operator, and a progress line that a terminal redraws. */
export interface ImportOutput {
  out(line: string): void;
  err(line: string): void;
  /** Shows the progress so far in place; absent when the output is not a terminal. */
  progress?(text: string): void;
}

/** How often, in records, the progress line is redrawn at most. */
const progressEvery = 1000;

/**
 * The lines of a JSON Lines file as records: each line parsed, a line that is not JSON as an
 * {@link UnreadableRecord} (its text never repeated), an empty line as one too unless only
 * empty lines follow it. One line in hand at a time.
 */
export async function* jsonLines(path: string): AsyncGenerator<unknown> {
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  let emptyLines = 0;
  let first = true;
  for await (const read of lines) {
    // A byte order mark, which some Windows tools write, is not part of the first line's JSON.
    const line = first ? read.replace(/^\uFEFF/, "") : read;
    first = false;
    if (line.trim() === "") {
      emptyLines += 1;
      continue;
    }
    for (; emptyLines > 0; emptyLines -= 1) yield new UnreadableRecord("the line is empty");
    try {
      yield JSON.parse(line);
    } catch {
      yield new UnreadableRecord("the line is not JSON");
    }
  }
}

/** The summary as the command prints it: one line of counts, then one per reason. */
export function summaryLines(summary: ImportSummary): string[] {
  const lines = [
    `${summary.dryRun ? "dry run, nothing written: " : ""}${summary.read} read, ${summary.imported} ${summary.dryRun ? "to import" : "imported"}, ${summary.unchanged} unchanged, ${summary.skipped} skipped, ${summary.refused} refused`,
  ];
  for (const [reason, count] of Object.entries(summary.skippedByReason)) lines.push(`  skipped ${count}: ${reason}`);
  for (const [reason, count] of Object.entries(summary.refusedByReason)) lines.push(`  refused ${count}: ${reason}`);
  if (summary.read > 0 && summary.read === summary.unchanged) lines.push("nothing to do: every user is already imported");
  return lines;
}

/**
 * What keeps `portcullis import FILE` from starting, checked before the database is opened: the
 * exit code and the line to print, or null when it can start.
 */
export async function importProblem(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number; message: string } | null> {
  if (!env.AUTH_ENCRYPTION_KEY) {
    return {
      code: 2,
      message: "AUTH_ENCRYPTION_KEY is not set: give the service's encryption key, which seals the imported TOTP secrets",
    };
  }
  try {
    await access(file, constants.R_OK);
  } catch {
    return { code: 1, message: `import failed: cannot read ${file}` };
  }
  return null;
}

/**
 * `portcullis import FILE`, once {@link importProblem} found nothing: imports a JSON Lines file into `storage` with `importUsers`, under
 * the encryption key of `AUTH_ENCRYPTION_KEY` (the signing secret is not needed: nothing is
 * signed). Returns the exit code: 0 when no line was refused, 1 when one was or the import
 * failed, 2 when the key is refused.
 */
export async function runImport(
  storage: KyselyStorage,
  file: string,
  options: { dryRun: boolean; env: NodeJS.ProcessEnv; output: ImportOutput },
): Promise<number> {
  const { env, output } = options;
  const encryption = env.AUTH_ENCRYPTION_KEY as string;
  let auth: ReturnType<typeof createAuth>;
  try {
    auth = createAuth({
      storage,
      issuer: env.AUTH_ISSUER || "https://portcullis-import.invalid",
      audience: env.AUTH_AUDIENCE || "portcullis-import",
      secrets: { signing: env.AUTH_SIGNING_SECRET || randomBytes(32).toString("base64url"), encryption },
      sweepInterval: false,
    });
  } catch (error) {
    output.err((error as Error).message);
    return 2;
  }
  let shown = 0;
  try {
    const summary = await importUsers(auth, jsonLines(file), {
      dryRun: options.dryRun,
      onRefused: (refusal) => output.err(`line ${refusal.position}: refused: ${refusal.field} ${refusal.reason}`),
      onSkipped: (skip) => output.err(`line ${skip.position}: skipped: ${JSON.stringify(skip.username)} ${skip.reason}`),
      onProgress: (progress) => {
        if (!output.progress || progress.read - shown < progressEvery) return;
        shown = progress.read;
        output.progress(
          `${progress.read} read, ${progress.imported} imported, ${progress.unchanged} unchanged, ${progress.skipped} skipped, ${progress.refused} refused`,
        );
      },
    });
    if (output.progress && shown > 0) output.progress("");
    for (const line of summaryLines(summary)) output.out(line);
    return summary.refused > 0 ? 1 : 0;
  } catch (error) {
    output.err(`import failed: ${(error as Error).message}`);
    return 1;
  }
}
