import { randomBytes } from "node:crypto";
import { access, constants, open } from "node:fs/promises";
import { type ImportSummary, UnreadableRecord, type UserFieldDefinitions, createAuth, importUsers } from "@portcullis/core";
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
 * The longest line `portcullis import` reads: 1 MiB. The largest record the field limits allow
 * (20 passkeys with 1,023-byte ids, 2,048-byte keys and 64-character labels, 20 links with
 * 255-character subjects, the longest username, address and hash, every character written as a
 * `\u` escape) is about 262 KiB with a 32-character TOTP secret; roles at their bound (4,096
 * bytes of JSON) add at most 24 KiB. The cap is about four times that.
 */
export const maxImportLineBytes = 1024 * 1024;

/** How many bytes of the file are read at a time, into one buffer used again. */
const readSize = 64 * 1024;

/**
 * The lines of a JSON Lines file (lines end with `\n` or `\r\n`) as records: each line parsed, a
 * line that is not JSON as an {@link UnreadableRecord} (its text never repeated), an empty line
 * as one too unless only empty lines follow it, and a line longer than `maxLineBytes` as one
 * whose bytes are passed over as they come. Reads the file into one buffer and a line into
 * another of `maxLineBytes`, so it never holds more than about that, whatever the file holds.
 */
export async function* jsonLines(path: string, maxLineBytes = maxImportLineBytes): AsyncGenerator<unknown> {
  const file = await open(path, "r");
  try {
    const chunk = Buffer.allocUnsafe(readSize);
    // One byte more than a line may hold: the \r of a line at the cap that ends with \r\n.
    const line = Buffer.allocUnsafe(maxLineBytes + 1);
    let held = 0;
    let overLong = false;
    let emptyLines = 0;
    let first = true;
    /** The record of the line held, or null for an empty line; then starts the next line. */
    const takeLine = (): unknown => {
      let end = held;
      if (!overLong && end > 0 && line[end - 1] === 0x0d) end -= 1;
      let start = 0;
      // A byte order mark, which some Windows tools write, is not part of the first line's JSON.
      if (first && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf) start = 3;
      const record = overLong || end > maxLineBytes ? tooLong(maxLineBytes) : recordOf(line.toString("utf8", start, end));
      held = 0;
      overLong = false;
      first = false;
      return record;
    };
    for (;;) {
      const { bytesRead } = await file.read(chunk, 0, readSize, null);
      const ended = bytesRead === 0;
      for (let start = 0; start < bytesRead; ) {
        const newline = chunk.subarray(start, bytesRead).indexOf(0x0a);
        const stop = newline === -1 ? bytesRead : start + newline;
        if (!overLong && held + stop - start > line.length) overLong = true;
        if (!overLong) held += chunk.copy(line, held, start, stop);
        start = stop + 1;
        if (newline === -1) break;
        const record = takeLine();
        if (record === null) {
          emptyLines += 1;
          continue;
        }
        for (; emptyLines > 0; emptyLines -= 1) yield new UnreadableRecord("the line is empty");
        yield record;
      }
      if (!ended) continue;
      // The last line, without a line end after it.
      const record = held > 0 || overLong ? takeLine() : null;
      if (record !== null) {
        for (; emptyLines > 0; emptyLines -= 1) yield new UnreadableRecord("the line is empty");
        yield record;
      }
      return;
    }
  } finally {
    await file.close();
  }
}

const tooLong = (maxLineBytes: number) => new UnreadableRecord(`the line is longer than ${maxLineBytes} bytes`);

/** A line's text as a record, or null when it is empty (white space only). */
function recordOf(text: string): unknown {
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return new UnreadableRecord("the line is not JSON");
  }
}

/**
 * The summary as the command prints it: one line of counts (the incomplete accounts only when
 * there are some), then one per reason, then a warning about the incomplete accounts.
 */
export function summaryLines(summary: ImportSummary): string[] {
  const { incomplete } = summary;
  const lines = [
    `${summary.dryRun ? "dry run, nothing written: " : ""}${summary.read} read, ${summary.imported} ${summary.dryRun ? "to import" : "imported"}, ${summary.unchanged} unchanged, ${summary.skipped} skipped, ${summary.refused} refused${incomplete > 0 ? `, ${incomplete} incomplete` : ""}`,
  ];
  for (const [reason, count] of Object.entries(summary.skippedByReason)) lines.push(`  skipped ${count}: ${reason}`);
  for (const [reason, count] of Object.entries(summary.refusedByReason)) lines.push(`  refused ${count}: ${reason}`);
  if (summary.read > 0 && summary.read === summary.unchanged) lines.push("nothing to do: every user is already imported");
  if (incomplete > 0) {
    lines.push(
      `${incomplete === 1 ? "1 account exists" : `${incomplete} accounts exist`} without factors its record carries and signs in without them: each is named above (line N: incomplete); see "Accounts without their factors" in docs/importing.md`,
    );
  }
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
 * signed). Returns the exit code: 0 when no line was refused and no account is incomplete, 1 when
 * a line was refused, an existing account lacks a factor its line carries (IM-1), or the import
 * failed, 2 when the key is refused.
 */
export async function runImport(
  storage: KyselyStorage,
  file: string,
  options: { dryRun: boolean; env: NodeJS.ProcessEnv; output: ImportOutput; userFields?: UserFieldDefinitions },
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
      ...(options.userFields === undefined ? {} : { user: { fields: options.userFields } }),
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
      onIncomplete: (account) =>
        output.err(
          `line ${account.position}: incomplete: ${JSON.stringify(account.username)} ${account.reason}: ${account.missing.join(", ")}`,
        ),
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
    return summary.refused > 0 || summary.incomplete > 0 ? 1 : 0;
  } catch (error) {
    output.err(`import failed: ${(error as Error).message}`);
    return 1;
  }
}
