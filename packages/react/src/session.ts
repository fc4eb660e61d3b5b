import type { AuthClient, AuthClientError, AuthUser, ServerUser, SignOutReason } from "@portcullis/client";
import { useSyncExternalStore } from "react";
import { useAuthClient } from "./provider.js";

/**
 * The session as a component sees it: `"loading"` until the client has been read (always on the
 * server, and in the browser's first render), then `"signedIn"` with the user or `"signedOut"`.
 */
export type SessionState<User extends AuthUser = AuthUser> =
  | { status: "loading"; user: null }
  | { status: "signedIn"; user: User }
  | {
      status: "signedOut";
      user: null;
      /** Why the last session ended, when this page saw it end; absent when there was none to begin with. */
      reason?: SignOutReason;
      /** Why the session could not be read (`restore()` found the server unreachable), when so. */
      error?: AuthClientError;
    };

/** What every server render and the browser's first render answer: nothing is read on the server. */
const loadingSession: SessionState = Object.freeze({ status: "loading", user: null });

/** The session of one client, shared by every component that reads it. */
interface SessionStore {
  subscribe(onChange: () => void): () => void;
  snapshot(): SessionState;
}

const stores = new WeakMap<AuthClient, SessionStore>();

/**
 * Makes the store of `client`'s session: with its first subscriber it listens to `signedIn` and
 * `signedOut` and reads the session (`restore()` the first time, which in cookie mode sends the one
 * refresh that brings a session back; `currentUser()` after); with its last it stops listening.
 */
function createSessionStore(client: AuthClient): SessionStore {
  let state: SessionState = loadingSession;
  let restored = false;
  /** Bumped by every event, so a read that began before one does not overwrite what it said. */
  let version = 0;
  const subscribers = new Set<() => void>();
  let stopListening: (() => void) | null = null;
  const set = (next: SessionState) => {
    state = next;
    for (const subscriber of [...subscribers]) subscriber();
  };
  const read = async () => {
    const started = version;
    const first = !restored;
    restored = true;
    try {
      const user = first ? await client.restore() : await client.currentUser();
      if (version !== started) return;
      set(user ? { status: "signedIn", user } : { status: "signedOut", user: null });
    } catch (error) {
      if (version !== started) return;
      set({ status: "signedOut", user: null, error: error as AuthClientError });
    }
  };
  const listen = () => {
    const offIn = client.on("signedIn", ({ user }) => {
      version++;
      set({ status: "signedIn", user });
    });
    const offOut = client.on("signedOut", ({ reason }) => {
      version++;
      set({ status: "signedOut", user: null, reason });
    });
    stopListening = () => {
      offIn();
      offOut();
    };
    void read();
  };
  return {
    subscribe(onChange) {
      subscribers.add(onChange);
      if (subscribers.size === 1) listen();
      return () => {
        subscribers.delete(onChange);
        if (subscribers.size === 0) {
          stopListening?.();
          stopListening = null;
        }
      };
    },
    snapshot: () => state,
  };
}

/** The session store of `client`, made once per client. */
function sessionStoreOf(client: AuthClient): SessionStore {
  let store = stores.get(client);
  if (!store) {
    store = createSessionStore(client);
    stores.set(client, store);
  }
  return store;
}

/**
 * The signed-in user, kept current by the client's `signedIn` and `signedOut` events. Server
 * rendering answers `{ status: "loading" }` and touches no window, storage or network; in the
 * browser, the first component to mount reads the session with `client.restore()` (in cookie mode
 * the one refresh that brings a session back after a reload; otherwise no request), and every
 * component reading it shares that one read. A sign-in in another tab is not announced (the
 * client emits no `signedIn` there), a sign-out is, as `reason: "signed_out_elsewhere"`.
 *
 * @example
 * ```tsx
 * function Header() {
 *   const session = useSession();
 *   if (session.status === "loading") return <p>Loading…</p>;
 *   if (session.status === "signedOut") return <SignInForm notice={session.reason === "session_ended" ? "Your session has ended." : ""} />;
 *   return <p>Signed in as {session.user.username}</p>;
 * }
 * ```
 */
export function useSession<Server = unknown>(): SessionState<ServerUser<Server>> {
  const store = sessionStoreOf(useAuthClient());
  return useSyncExternalStore(store.subscribe, store.snapshot, () => loadingSession) as SessionState<ServerUser<Server>>;
}
