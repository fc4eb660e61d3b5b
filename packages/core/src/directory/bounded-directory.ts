import { createLimiter } from "../crypto/limiter.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { Directory, DirectoryCheck } from "./directory.js";
import type { ResolvedDirectoryLimits } from "./directory-limits.js";

/** The cause of the 50300 of a call that passed its deadline. */
class DirectoryDeadlineExceeded extends Error {
  override readonly name = "DirectoryDeadlineExceeded";
}

const unavailable = (cause: unknown) => new AuthError(ErrorCode.Unavailable, "The directory is unavailable", { cause });

/**
 * `directory` behind a queue of its own and a deadline per call (LDAP-4, issue 20 item 11): at
 * most `maxConcurrent` calls run at once and `maxQueued` wait; a call finding the queue full is
 * 50300 at once. Each call, its wait included, ends at `deadlineMs`: its `signal` is aborted,
 * so the directory closes that call's connections, and the caller gets 50300 `The directory is
 * unavailable` (a `check` answers category `timeout`) without waiting for it. A slot is given
 * back only when the directory's own call settles. Errors of the directory, and of a caller's
 * `beforeBind`, pass unchanged.
 */
export function boundedDirectory(directory: Directory, limits: ResolvedDirectoryLimits): Directory {
  const limiter = createLimiter(limits.maxConcurrent, limits.maxQueued);

  async function bounded<T>(callerSignal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const signal = callerSignal ? AbortSignal.any([callerSignal, deadline.signal]) : deadline.signal;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const exceeded = new DirectoryDeadlineExceeded(`The directory call took longer than ${limits.deadlineMs} ms`);
        deadline.abort(exceeded);
        reject(unavailable(exceeded));
      }, limits.deadlineMs);
    });
    let started = false;
    const work = limiter
      .run(async () => {
        started = true;
        signal.throwIfAborted();
        return call(signal);
      })
      .catch((error: unknown) => {
        // Only the limiter fails a call before it starts: its queue is full.
        throw started ? error : unavailable(error);
      });
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    authenticate: (settings, username, password, options = {}) =>
      bounded(options.signal, (signal) => directory.authenticate(settings, username, password, { ...options, signal })),
    lookup: (settings, by, options = {}) =>
      bounded(options.signal, (signal) => directory.lookup(settings, by, { ...options, signal })),
    check: (settings, options = {}) =>
      bounded(options.signal, (signal) => directory.check(settings, { ...options, signal })).catch(
        (error: unknown): DirectoryCheck => {
          if (!(error instanceof AuthError && error.cause instanceof DirectoryDeadlineExceeded)) throw error;
          return {
            ok: false,
            category: "timeout",
            message: `The test took longer than the deadline of ${limits.deadlineMs / 1000} s`,
          };
        },
      ),
    close: () => directory.close(),
  };
}
