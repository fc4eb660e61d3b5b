import type { StepUpRequest } from "./step-up.js";
import type { AuthUser } from "./types.js";

/**
 * Why the client signed out:
 * - `"logout"`: `client.logout()`, or `client.sessions.end(id)` of this client's own session;
 * - `"logout_everywhere"`: `client.sessions.endAll()`, which ends every session of the user,
 *   this one included;
 * - `"session_ended"`: the server refused the refresh token (the session was revoked, expired,
 *   ended from another session or by an administrator, by a token-version change or by reuse
 *   detection): sign in again;
 * - `"signed_out_elsewhere"`: another client sharing the token store (another tab, with
 *   `localStorageTokenStore()`) signed out or saw the session end, and the store no longer holds
 *   the session this client knew.
 *
 * The user's own security changes (TOTP on or off, new recovery codes, a passkey registered or
 * revoked, a password change) end the user's other sessions and keep this one (SE-2): no event.
 */
export type SignOutReason = "logout" | "logout_everywhere" | "session_ended" | "signed_out_elsewhere";

/** The events of an auth client and what each listener receives. None holds a token. */
export interface AuthClientEventMap {
  /** Tokens were stored by a completed sign-in (password, second factor, passkey, provider). */
  signedIn: { user: AuthUser };
  /** The tokens were forgotten. Emitted once per session, however many requests were waiting. */
  signedOut: { reason: SignOutReason };
  /**
   * A route of the app answered 40104 to `client.fetch`: it needs a more recent sign-in or more
   * factors (`required`; STUP-2). The request waits until a listener re-authenticates through
   * `reauthenticate` or `reauthenticateWithPasskey`, then is sent once more; `cancel` lets it
   * answer the 40104. Emitted once for all the requests that meet it at the same time; without a
   * listener they answer the 40104 at once.
   */
  stepUpRequired: StepUpRequest;
}

/** The name of an auth client event. */
export type AuthClientEventName = keyof AuthClientEventMap;

/** Subscribes to and emits the events of an auth client. */
export interface ClientEvents {
  on<E extends AuthClientEventName>(event: E, listener: (detail: AuthClientEventMap[E]) => void): () => void;
  /** Calls the event's listeners; returns how many there were. */
  emit<E extends AuthClientEventName>(event: E, detail: AuthClientEventMap[E]): number;
}

/**
 * Makes a {@link ClientEvents}. A listener that throws never fails the client's operation; its
 * error goes to `onListenerError`.
 *
 * @example
 * ```ts
 * const events = createClientEvents((error) => reportError(error));
 * const stop = events.on("signedOut", ({ reason }) => showSignIn(reason));
 * ```
 */
export function createClientEvents(
  onListenerError: (error: unknown, event: AuthClientEventName) => void = () => {},
): ClientEvents {
  const listeners = new Map<AuthClientEventName, Set<(detail: never) => void>>();
  return {
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) {
        set = new Set();
        listeners.set(event, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    emit(event, detail) {
      const called = [...(listeners.get(event) ?? [])];
      for (const listener of called) {
        try {
          (listener as (detail: unknown) => void)(detail);
        } catch (error) {
          try {
            onListenerError(error, event);
          } catch {
            // A broken error reporter must not break the client either.
          }
        }
      }
      return called.length;
    },
  };
}
