import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

/** The name of the lock file inside a PGlite data directory. */
export const lockFileName = "portcullis.lock";

/** How often the holder refreshes its lock file's modification time. */
export const lockRefreshMs = 10_000;

/** A lock not refreshed for this long is taken over: its holder is gone, wherever it ran. */
export const lockStaleAfterMs = 30_000;

/** Who holds a data directory, as its lock file says. */
interface LockOwner {
  pid: number;
  hostname: string;
  /**
   * The kernel's boot id and the process's PID namespace (Linux; "" elsewhere): with the host
   * name equal, `pid` names a process of this machine and namespace.
   */
  bootId: string;
  pidNamespace: string;
  /** Tells one holding apart from another, even of the same pid. */
  nonce: string;
  startedAt: number;
}

/** A held lock: {@link release} gives it back. */
export interface DataDirectoryLock {
  release(): void;
}

/** The first line of a Linux /proc file, or "" where there is none (another system, a sandbox). */
function procText(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return "";
  }
}

function currentOwner(): LockOwner {
  return {
    pid: process.pid,
    hostname: hostname(),
    bootId: procText(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
    pidNamespace: procText(() => readlinkSync("/proc/self/ns/pid")),
    nonce: randomBytes(12).toString("hex"),
    startedAt: Date.now(),
  };
}

/** The lock file's owner (empty while a holder is still writing it) and age, or null when there is none. */
function readLock(path: string): { owner: Partial<LockOwner>; ageMs: number } | null {
  try {
    const ageMs = Date.now() - statSync(path).mtimeMs;
    const text = readFileSync(path, "utf8");
    let owner: Partial<LockOwner> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null) owner = parsed;
    } catch {
      // Being written: a holder that is not stale.
    }
    return { owner, ageMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Whether a process with this pid exists in this PID namespace: signal 0 checks without sending.
 * EPERM means it exists and belongs to someone else.
 */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the holder of a lock is gone. A holder of this machine and PID namespace (same host
 * name, boot id and namespace) is gone when its pid names no process. Any other holder (another
 * container, another host sharing the volume) cannot be asked: it is gone when it has not
 * refreshed the lock for {@link lockStaleAfterMs}. A lock whose pid is this process's own is
 * held here, by another storage on the same directory.
 */
function isStale({ owner, ageMs }: { owner: Partial<LockOwner>; ageMs: number }, self: LockOwner): boolean {
  // Held by a storage of this process: live however late its refresh timer runs on a busy machine.
  if (typeof owner.nonce === "string" && heldHere.has(owner.nonce)) return false;
  if (ageMs > lockStaleAfterMs) return true;
  if (!sameNamespace(owner, self) || typeof owner.pid !== "number") return false;
  return owner.pid !== self.pid && !processExists(owner.pid);
}

/** The nonces of the locks this process holds and has not released. */
const heldHere = new Set<string>();

/** Whether `owner` ran on this machine, since its last boot, in this PID namespace: where its pid can be asked about. */
const sameNamespace = (owner: Partial<LockOwner>, self: LockOwner) =>
  owner.hostname === self.hostname && owner.bootId === self.bootId && owner.pidNamespace === self.pidNamespace;

/** The error for a directory another process holds: which directory, who, how fresh; never more. */
function heldError(directory: string, { owner, ageMs }: { owner: Partial<LockOwner>; ageMs: number }, self: LockOwner): Error {
  const itself = owner.pid === self.pid && sameNamespace(owner, self);
  const who =
    typeof owner.pid === "number"
      ? `process ${owner.pid}${itself ? " (this one)" : ""} on ${owner.hostname ?? "an unknown host"}`
      : "another process";
  return new Error(
    `@portcullis/kysely: the PGlite data directory ${directory} is open in ${who} (its lock ${join(directory, lockFileName)} refreshed ${Math.round(ageMs / 1000)} s ago). One process opens a data directory at a time; close the other one. A lock whose process is gone is taken over: at once on the same machine, after ${lockStaleAfterMs / 1000} s from another container or host.`,
  );
}

/** Writes `owner` to a fresh file beside `path` and renames it over `path`: readers see the old lock or the new, never half of one. */
function replaceLock(path: string, owner: LockOwner): void {
  const temporary = `${path}.${owner.nonce}.tmp`;
  writeFileSync(temporary, JSON.stringify(owner));
  renameSync(temporary, path);
}

/**
 * Takes over the stale lock `stale`, unless someone else did first. Takeovers go one at a time,
 * through a second lock file created exclusively; a new holder never races them, since the stale
 * file is replaced in one rename and never missing.
 */
function takeOver(path: string, stale: { owner: Partial<LockOwner> }, owner: LockOwner): boolean {
  const gate = `${path}.takeover`;
  try {
    writeFileSync(gate, JSON.stringify(owner), { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const other = readLock(gate);
    if (other !== null && isStale(other, owner)) unlinkQuietly(gate);
    return false;
  }
  try {
    const current = readLock(path);
    if (current === null || current.owner.nonce !== stale.owner.nonce) return false;
    replaceLock(path, owner);
    return true;
  } finally {
    unlinkQuietly(gate);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

/** Creates the lock file, or takes over a stale one; throws when another process holds it. */
function acquire(directory: string, path: string, owner: LockOwner): void {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    try {
      writeFileSync(path, JSON.stringify(owner), { flag: "wx" });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const current = readLock(path);
    if (current === null) continue;
    if (!isStale(current, owner)) throw heldError(directory, current, owner);
    if (takeOver(path, current, owner)) return;
  }
  throw heldError(directory, readLock(path) ?? { owner: {}, ageMs: 0 }, owner);
}

/**
 * Locks a PGlite data directory for this process, creating the directory if need be: PGlite
 * itself lets two processes open one directory, each unaware of the other, and what one writes
 * the other loses. The lock is a file in the directory (so containers sharing the volume see it)
 * holding the pid, host, boot id and PID namespace of its holder, refreshed every
 * {@link lockRefreshMs} by an unref'd timer. Another process's live lock throws an error naming
 * the directory and the holder; a stale one is taken over (see {@link isStale}).
 *
 * @throws Error when another process holds the directory.
 */
export function lockDataDirectory(dataDir: string): DataDirectoryLock {
  const directory = resolve(dataDir);
  mkdirSync(directory, { recursive: true });
  const path = join(directory, lockFileName);
  const owner = currentOwner();
  acquire(directory, path, owner);
  heldHere.add(owner.nonce);
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // The directory went away; the next open will say so.
    }
  }, lockRefreshMs);
  refresh.unref();
  const releaseAtExit = () => release();
  process.once("exit", releaseAtExit);
  function release(): void {
    clearInterval(refresh);
    heldHere.delete(owner.nonce);
    process.off("exit", releaseAtExit);
    if (readLock(path)?.owner.nonce === owner.nonce) unlinkQuietly(path);
  }
  return { release };
}
