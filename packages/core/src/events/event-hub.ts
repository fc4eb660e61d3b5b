import type { AuthEvent, AuthEventOf, AuthEventType } from "./types.js";

type Listener = (event: AuthEvent) => void | Promise<void>;

/** Subscribes to and publishes {@link AuthEvent}s. */
export interface EventHub {
  /**
   * Calls `listener` for every event of `type` (or every event, with `"*"`); returns a
   * function that unsubscribes. A listener that throws or rejects never fails the request
   * that emitted the event; its error goes to `onListenerError`.
   */
  on<T extends AuthEventType>(type: T, listener: (event: AuthEventOf<T>) => void | Promise<void>): () => void;
  on(type: "*", listener: (event: AuthEvent) => void | Promise<void>): () => void;
  /** Publishes an event to its listeners. */
  emit(event: AuthEvent): void;
}

/** Makes an {@link EventHub}. `onListenerError` receives what listeners throw. */
export function createEventHub(onListenerError: (error: unknown, event: AuthEvent) => void = () => {}): EventHub {
  const listeners = new Map<string, Set<Listener>>();
  const report = (error: unknown, event: AuthEvent) => {
    try {
      onListenerError(error, event);
    } catch {
      // A broken error reporter must not break sign-in either.
    }
  };
  return {
    on(type: string, listener: Listener) {
      let set = listeners.get(type);
      if (!set) {
        set = new Set();
        listeners.set(type, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    emit(event) {
      for (const set of [listeners.get(event.type), listeners.get("*")]) {
        for (const listener of set ?? []) {
          try {
            const result = listener(event);
            if (result && typeof result.then === "function") result.then(undefined, (error) => report(error, event));
          } catch (error) {
            report(error, event);
          }
        }
      }
    },
  };
}
