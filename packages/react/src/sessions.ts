import type { AuthClient, AuthClientError, ReauthenticationProof, SessionInfo } from "@portcullis/client";
import { useAuthClient } from "./provider.js";
import { useRemoteList } from "./remote-list.js";
import type { Outcome } from "./tracked.js";

/** What {@link useSessions} answers. Every call answers null when the client refused, the error then in `error`. */
export interface SessionsState {
  /** The user's live sessions, newest first, this one marked `current`; empty while loading, signed out, and on the server. */
  sessions: SessionInfo[];
  /** Whether the list is being read. */
  loading: boolean;
  /** Whether `end` or `endOthers` is under way. */
  pending: boolean;
  /** The last refusal: 40001 re-authentication needed, 40100 wrong password, 40400 no such session, … */
  error: AuthClientError | null;
  /** Reads the list again. */
  refresh(): Promise<void>;
  /** Ends one session (this one's is a sign-out), then reads the list again. */
  end(id: string, proof?: ReauthenticationProof): Outcome<void>;
  /** Ends every session but this one, then reads the list again; answers how many ended. */
  endOthers(proof?: ReauthenticationProof): Outcome<{ ended: number }>;
}

const listSessions = (client: AuthClient) => client.sessions.list();

/**
 * The signed-in user's sessions (`client.sessions`), read in the browser once signed in, and the
 * calls that end them, each followed by a fresh list. Ending this client's own session signs out:
 * {@link useSession} then says `signedOut` with reason `logout`, and the list empties.
 *
 * @example
 * ```tsx
 * function Sessions() {
 *   const { sessions, end } = useSessions();
 *   return (
 *     <ul>
 *       {sessions.map((session) => (
 *         <li key={session.id}>
 *           {session.userAgent ?? "Unknown device"} {session.current ? "(this device)" : <button onClick={() => end(session.id)}>End</button>}
 *         </li>
 *       ))}
 *     </ul>
 *   );
 * }
 * ```
 */
export function useSessions(): SessionsState {
  const client = useAuthClient();
  const list = useRemoteList(listSessions);
  return {
    sessions: list.items,
    loading: list.loading,
    pending: list.pending,
    error: list.error,
    refresh: list.refresh,
    end: (id, proof) => list.change(() => client.sessions.end(id, proof)),
    endOthers: (proof) => list.change(() => client.sessions.endOthers(proof)),
  };
}
