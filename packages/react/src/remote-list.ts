import type { AuthClient, AuthClientError } from "@portcullis/client";
import { useCallback, useEffect, useRef, useState } from "react";
import { useAuthClient } from "./provider.js";
import { useSession } from "./session.js";
import { type Outcome, useTracked } from "./tracked.js";

/** A list the signed-in user owns on the server (passkeys, sessions) and the calls that change it. */
export interface RemoteList<T> {
  items: T[];
  loading: boolean;
  pending: boolean;
  error: AuthClientError | null;
  refresh(): Promise<void>;
  /** Runs a call that leaves the list as it is, tracking its `pending` and `error`. */
  run<R>(work: () => Promise<R>): Outcome<R>;
  /** Runs a call that changes the list, then reads the list again when it succeeded. */
  change<R>(work: () => Promise<R>): Outcome<R>;
}

/**
 * Reads `load(client)` once the session is signed in (again for each new user), empties it when
 * signed out, and never on the server: effects do not run there. `load` must be stable.
 */
export function useRemoteList<T>(load: (client: AuthClient) => Promise<T[]>): RemoteList<T> {
  const client = useAuthClient();
  const session = useSession();
  const { pending, error, run } = useTracked();
  const [items, setItems] = useState<T[]>([]);
  const [loading, setLoading] = useState(true);
  /** Bumped by every read and sign-out, so an older read's answer is dropped. */
  const generation = useRef(0);
  const userId = session.status === "signedIn" ? session.user.id : null;

  const refresh = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    const loaded = await run(() => load(client));
    if (mine !== generation.current) return;
    if (loaded) setItems(loaded);
    setLoading(false);
  }, [client, load, run]);

  useEffect(() => {
    if (userId !== null) {
      void refresh();
    } else if (session.status === "signedOut") {
      generation.current++;
      setItems([]);
      setLoading(false);
    }
  }, [userId, session.status, refresh]);

  const change = useCallback(
    async <R>(work: () => Promise<R>) => {
      const result = await run(work);
      if (result !== null) await refresh();
      return result;
    },
    [run, refresh],
  );

  return { items, loading, pending, error, refresh, run, change };
}
