import { AuthClientError } from "@portcullis/client";
import { useCallback, useState } from "react";

/** What a hook's call answers: its result, or `null` when the client refused (the error is then in state). */
export type Outcome<T> = Promise<T | null>;

/**
 * The `pending` and `error` of a hook's calls: `run(work)` counts it pending while it runs, keeps an
 * {@link AuthClientError} it rejects with as `error`, tells `onRefused`, and answers null. Any other error is a bug and
 * is thrown on.
 */
export function useTracked() {
  const [running, setRunning] = useState(0);
  const [error, setError] = useState<AuthClientError | null>(null);
  const run = useCallback(async <T>(work: () => Promise<T>, onRefused?: (refusal: AuthClientError) => void): Outcome<T> => {
    setRunning((count) => count + 1);
    setError(null);
    try {
      return await work();
    } catch (failure) {
      if (!(failure instanceof AuthClientError)) throw failure;
      setError(failure);
      onRefused?.(failure);
      return null;
    } finally {
      setRunning((count) => count - 1);
    }
  }, []);
  return { pending: running > 0, error, setError, run };
}
