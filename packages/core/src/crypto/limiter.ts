import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";

/** Runs at most `concurrency` tasks at once, with at most `maxQueued` waiting (PW-4). */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** Makes a {@link Limiter}; a task arriving at a full queue gets {@link AuthError} 50300. */
export function createLimiter(concurrency: number, maxQueued: number): Limiter {
  let active = 0;
  const waiting: Array<() => void> = [];
  // A finishing task hands its slot straight to the next waiter, so that no caller arriving
  // before the waiter resumes can take the slot as well.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return {
    async run(task) {
      if (active >= concurrency) {
        if (waiting.length >= maxQueued) throw new AuthError(ErrorCode.Unavailable, "The service is busy; try again later");
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        active += 1;
      }
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
