import type { Auth } from "../auth.js";
import { type CheckedRecord, Refused, checkRecord } from "./check-record.js";
import { claimedKeys, existsWithOtherData, existsWithoutItsFactors, settle } from "./existing-account.js";
import type { ImportIncomplete, ImportSummary, ImportUsersOptions } from "./import-types.js";

export { importListLimits } from "./check-record.js";
export { existsWithOtherData, existsWithoutItsFactors } from "./existing-account.js";
export * from "./import-types.js";

const count = (counts: Record<string, number>, key: string) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** The reason a refusal is counted under: its field without list positions, and its reason. */
const reasonKey = (refused: Refused) => `${refused.field.replace(/\[\d+\]/g, "[]")}: ${refused.reason}`;

/**
 * Imports users from another system (IM-1): each record is an {@link ImportedUser}, read as
 * it comes from `records` (a list, a generator or a stream of parsed lines) with at most
 * `concurrency` records in hand, so a million records take no more memory than a thousand.
 *
 * Each record is checked whole before anything of it is written: every field (the password
 * hash by `parseImportedPasswordHash`, the TOTP secret's length, the recovery codes' form, each
 * passkey's public key and backup flags as registration checks them (WA-2, WA-3), each provider
 * link), then against the storage (an id, a verified address, a credential id or a provider link
 * held by another account). A bad record is refused whole, with its 1-based position and the
 * field and reason, never with the value of a hash, secret or code. A good one is written as one
 * unit by `storage.users.createAccount` (IM-1): the user, the TOTP secret sealed under the
 * configured encryption key and enabled (TOTP-6), the recovery codes as hashes (RC-2), the
 * passkeys and the links, all or nothing, so no account ever signs in without the second factor
 * its record carries. The password hash is verified at sign-in and re-hashed to argon2id at the
 * first success (PW-1).
 *
 * A username that exists is never changed. With the same data (same fields, TOTP secret,
 * recovery codes, passkeys and links) the record counts as `unchanged`, so running the same
 * input again changes nothing. When the account lacks a factor the record carries (no enabled
 * TOTP factor, no recovery code at all, a passkey or link of the record not its own), it is
 * `incomplete` ({@link ImportIncomplete}, `onIncomplete`): it signs in without that factor, as an
 * import cut part way by releases before issue 36 could leave it, and the operator must act
 * (docs/importing.md). Else, with other data, it is `skipped` ({@link existsWithOtherData}), as is
 * a record whose `id` names another account. Records that share a username, id, verified address,
 * credential id or link are handled one after the other, so the second is refused or unchanged,
 * never written in part; a key another writer takes between the checks and the write refuses
 * nothing written, and the record is decided again.
 *
 * A failing storage stops the import: the error is thrown once the records in hand are done.
 * Every account written is whole; running the input again imports the rest.
 *
 * @example
 * ```ts
 * const summary = await importUsers(auth, [
 *   { username: "alice", email: "alice@example.com", passwordHash: "$2b$12$…", roles: ["admin"] },
 * ], { onRefused: (refusal) => console.error(`line ${refusal.position}: ${refusal.field} ${refusal.reason}`) });
 * ```
 */
export async function importUsers(
  auth: Auth,
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: ImportUsersOptions = {},
): Promise<ImportSummary> {
  const dryRun = options.dryRun === true;
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new TypeError("importUsers: concurrency must be a whole number of at least 1");
  const summary: ImportSummary = {
    dryRun,
    read: 0,
    imported: 0,
    unchanged: 0,
    skipped: 0,
    refused: 0,
    incomplete: 0,
    skippedByReason: {},
    refusedByReason: {},
  };
  const claims = new Map<string, Promise<void>>();
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;

  const refuse = (position: number, refused: Refused) => {
    summary.refused += 1;
    count(summary.refusedByReason, reasonKey(refused));
    options.onRefused?.({ position, field: refused.field, reason: refused.reason });
  };

  let previousClaimed: Promise<void> = Promise.resolve();

  async function handle(position: number, value: unknown, claimedAfter: Promise<void>, claimed: () => void): Promise<void> {
    let record: CheckedRecord;
    try {
      record = await checkRecord(auth, value);
    } catch (error) {
      await claimedAfter;
      claimed();
      if (error instanceof Refused) return refuse(position, error);
      throw error;
    }
    // Records claim their keys in the order they come, so the first of two records sharing one is the one written.
    await claimedAfter;
    const keys = claimedKeys(record);
    const before = keys.map((key) => claims.get(key)).filter((claim) => claim !== undefined);
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const key of keys) claims.set(key, done);
    claimed();
    try {
      await Promise.all(before);
      const outcome = await settle(auth, record, dryRun);
      const { username } = record.user;
      if (outcome.kind === "refused") return refuse(position, outcome.refused);
      if (outcome.kind === "incomplete") {
        summary.incomplete += 1;
        options.onIncomplete?.({ position, username, reason: existsWithoutItsFactors, missing: outcome.missing });
      } else if (outcome.kind === "other") {
        summary.skipped += 1;
        count(summary.skippedByReason, existsWithOtherData);
        options.onSkipped?.({ position, username, reason: existsWithOtherData });
      } else {
        summary[outcome.kind] += 1;
      }
    } finally {
      record.totpSecret?.fill(0);
      for (const key of keys) if (claims.get(key) === done) claims.delete(key);
      release();
    }
  }

  let position = 0;
  for await (const value of records) {
    position += 1;
    summary.read += 1;
    let claimed = () => {};
    const claimedAfter = previousClaimed;
    previousClaimed = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    const task = handle(position, value, claimedAfter, claimed).then(
      () => options.onProgress?.(summary),
      (error: unknown) => {
        failure ??= { error };
      },
    );
    running.add(task);
    void task.finally(() => running.delete(task));
    while (running.size >= concurrency) await Promise.race(running);
    if (failure) break;
  }
  await Promise.all(running);
  if (failure) throw (failure as { error: unknown }).error;
  return summary;
}
