import { type Duration, durationSeconds, fail } from "../config-values.js";
import type { Storage } from "./types.js";

/** Rows of each kind one `challenges.deleteExpired` call deletes at most: one short statement per table. */
export const sweepBatchSize = 1000;

/** Calls of `deleteExpired` one sweep makes at most; what is left waits for the next sweep. */
export const maxBatchesPerSweep = 1000;

/** The counter whose window is the sweep's lease: of the instances sharing a storage, the one whose hit it allows sweeps. */
export const sweepLeaseKey = "sweep";

/** What a sweep needs of an auth instance: its storage and clock, and where its errors go. */
export interface SweepTarget {
  readonly storage: Storage;
  now(): number;
  readonly onInternalError: (error: unknown, requestId: string) => void;
}

/** What {@link sweepExpired} did. */
export interface SweepResult {
  /** Rows deleted, all kinds together. */
  deleted: number;
  /** Calls of `challenges.deleteExpired` it made. */
  batches: number;
  /** False when it stopped at its limit of 1,000 batches with batches still coming back full. */
  complete: boolean;
}

/**
 * The `sweepInterval` option in milliseconds: how often an auth instance sweeps expired rows,
 * or null when it does not (`false`: the service calls {@link sweepExpired} itself). Default
 * `"5m"`; from 1 second to 1 day.
 */
export function resolveSweepInterval(value: Duration | false | undefined): number | null {
  if (value === false) return null;
  const seconds = durationSeconds(value ?? "5m", "sweepInterval");
  if (seconds > 86_400) fail(`sweepInterval must be at most a day ("1d") or false; got ${JSON.stringify(value)}`);
  return seconds * 1000;
}

/** Options of {@link sweepExpired}. */
export interface SweepOptions {
  /** Stops the sweep between two batches once aborted (it then answers `complete: false`). */
  signal?: AbortSignal;
}

/**
 * Deletes what has expired by the instance's clock, now: expired challenges, and in SQL storage
 * also ended throttling windows, refresh tokens past their expiry and sessions past theirs
 * (`challenges.deleteExpired`). Each call deletes at most 1,000 rows of each kind, so no statement
 * holds a big table for long; calls repeat while a batch comes back full, up to 1,000 calls. It
 * takes no lease: the timer of `createAuth` does that; call this from a job of your own (with
 * `sweepInterval: false`) or a test.
 *
 * @example
 * ```ts
 * const { deleted } = await sweepExpired(auth);
 * ```
 */
export function sweepExpired(auth: Pick<SweepTarget, "storage" | "now">, options: SweepOptions = {}): Promise<SweepResult> {
  return sweepAt(auth.storage, auth.now(), options.signal);
}

async function sweepAt(storage: Storage, now: number, signal?: AbortSignal): Promise<SweepResult> {
  let deleted = 0;
  for (let batches = 1; batches <= maxBatchesPerSweep; batches += 1) {
    const batch = await storage.challenges.deleteExpired(now, sweepBatchSize);
    deleted += batch;
    if (batch < sweepBatchSize) return { deleted, batches, complete: true };
    if (signal?.aborted) return { deleted, batches, complete: false };
  }
  return { deleted, batches: maxBatchesPerSweep, complete: false };
}

/** The sweep each instance is running, if any: the timer and {@link sweepNowAndThen} never run two at once. */
const running = new WeakMap<SweepTarget, Promise<void>>();

/** Runs `sweep` in the background unless the instance is sweeping already; its error goes to `onInternalError`. */
function inBackground(auth: SweepTarget, sweep: () => Promise<unknown>): void {
  if (running.has(auth)) return;
  const done = sweep()
    .then(
      () => {},
      (error: unknown) => auth.onInternalError(error, "sweep"),
    )
    .finally(() => running.delete(auth));
  running.set(auth, done);
}

/** Writes per auth instance since its last write-triggered sweep. */
const writesSinceSweep = new WeakMap<SweepTarget, number>();

/** How many writes (token sets issued, OAuth flows begun) an instance makes between two sweeps they trigger. */
export const writesPerSweep = 1000;

/**
 * Counts one write of a flow that stores rows which expire; every {@link writesPerSweep}th
 * starts {@link sweepExpired} in the background, on top of the timer, so a burst of writes
 * (a sign-in flood, OAuth flows begun and never finished) is swept as it comes, by the write's
 * time `now`. It takes no lease: a burst on one instance is that instance's to sweep.
 */
export function sweepNowAndThen(auth: SweepTarget, now: number): void {
  const written = (writesSinceSweep.get(auth) ?? 0) + 1;
  writesSinceSweep.set(auth, written % writesPerSweep);
  if (written < writesPerSweep) return;
  inBackground(auth, () => sweepAt(auth.storage, now));
}

/**
 * Sweeps every `intervalMs` for as long as `target` lives: the timer is unref'd, so it never
 * keeps a process alive, and holds the instance only weakly, so an instance nobody uses any more
 * is collected and its timer stops. Each tick first takes the lease, one hit on the counter
 * {@link sweepLeaseKey} with a window of one interval, so of many instances sharing a storage
 * one sweeps per interval; a tick that finds this instance sweeping already skips. Errors go to
 * `onInternalError` with the request id `"sweep"`; the next tick tries again.
 */
export function startSweeping(target: SweepTarget, intervalMs: number | null): void {
  if (intervalMs === null) return;
  const instance = new WeakRef(target);
  const timer = setInterval(() => {
    const auth = instance.deref();
    if (auth === undefined) clearInterval(timer);
    else inBackground(auth, () => sweepUnderLease(auth, intervalMs));
  }, intervalMs);
  timer.unref();
}

async function sweepUnderLease(auth: SweepTarget, intervalMs: number): Promise<void> {
  const now = auth.now();
  const lease = await auth.storage.counters.hit(sweepLeaseKey, 1, intervalMs, now);
  if (lease.allowed) await sweepAt(auth.storage, now);
}
