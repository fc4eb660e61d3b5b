import {
  type AuthClient,
  AuthClientError,
  type ReauthenticationInput,
  type StepUpRequest,
  type StepUpRequirement,
} from "@portcullis/client";
import { useSyncExternalStore } from "react";
import { useAuthClient } from "./provider.js";

/**
 * A step-up the app's routes are waiting on (a 40104 met by `client.fetch`): what a step-up dialog
 * renders from. Proving answers true and the waiting requests are sent again; a refused proof
 * answers false, keeps the dialog open with `error` set, and the requests keep waiting.
 */
export interface StepUpState {
  /** What the route asked for and the session lacks: `maxAge` in seconds, `amr` such as `["mfa"]`. */
  required: StepUpRequirement;
  /** Whether a proof is being checked. */
  pending: boolean;
  /** The last refused proof: 40100 wrong password, 40103 wrong code, 40001 a factor missing, `passkey_ceremony`. */
  error: AuthClientError | null;
  /** Re-authenticates with the password, and a TOTP code when the user has TOTP on. */
  reauthenticate(proof: ReauthenticationInput): Promise<boolean>;
  /** Re-authenticates with one of the user's passkeys (the browser's prompt). */
  reauthenticateWithPasskey(): Promise<boolean>;
  /** Gives up: the waiting requests answer the 40104. */
  cancel(): void;
}

/** The step-up of one client, shared by every component that reads it. */
interface StepUpStore {
  subscribe(onChange: () => void): () => void;
  snapshot(): StepUpState | null;
}

const stores = new WeakMap<AuthClient, StepUpStore>();
const noStepUp = () => null;

/**
 * Makes the store of `client`'s step-up: while it has subscribers it listens to `stepUpRequired`
 * (so a 40104 waits for the dialog); when the last leaves, it stops, and cancels a request still
 * waiting so that no request waits for a dialog that is gone.
 */
function createStepUpStore(client: AuthClient): StepUpStore {
  let state: StepUpState | null = null;
  let request: StepUpRequest | null = null;
  const subscribers = new Set<() => void>();
  let stopListening: (() => void) | null = null;
  const set = (next: StepUpState | null) => {
    state = next;
    for (const subscriber of [...subscribers]) subscriber();
  };
  const show = (shown: StepUpRequest, pending: boolean, error: AuthClientError | null) => {
    const prove = async (proving: () => Promise<unknown>) => {
      if (request !== shown) return false;
      show(shown, true, null);
      try {
        await proving();
      } catch (failure) {
        if (request === shown) show(shown, false, failure instanceof AuthClientError ? failure : null);
        if (!(failure instanceof AuthClientError)) throw failure;
        return false;
      }
      if (request === shown) {
        request = null;
        set(null);
      }
      return true;
    };
    set({
      required: shown.required,
      pending,
      error,
      reauthenticate: (proof) => prove(() => shown.reauthenticate(proof)),
      reauthenticateWithPasskey: () => prove(() => shown.reauthenticateWithPasskey()),
      cancel() {
        if (request !== shown) return;
        request = null;
        shown.cancel();
        set(null);
      },
    });
  };
  return {
    subscribe(onChange) {
      subscribers.add(onChange);
      if (subscribers.size === 1) {
        stopListening = client.on("stepUpRequired", (arrived) => {
          request = arrived;
          show(arrived, false, null);
        });
      }
      return () => {
        subscribers.delete(onChange);
        if (subscribers.size > 0) return;
        stopListening?.();
        stopListening = null;
        state?.cancel();
      };
    },
    snapshot: () => state,
  };
}

/** The step-up store of `client`, made once per client. */
function stepUpStoreOf(client: AuthClient): StepUpStore {
  let store = stores.get(client);
  if (!store) {
    store = createStepUpStore(client);
    stores.set(client, store);
  }
  return store;
}

/**
 * The step-up the app's requests wait on, or null: render the step-up dialog from it. While a
 * component using it is mounted, a route answering 40104 to `client.fetch` (`requireAuth`'s
 * `maxAge`, `secondFactor`, `amr`) makes the request wait, and this hook answers what it needs;
 * once proven, the request is sent again and the hook answers null. With no such component
 * mounted, the 40104 is the answer at once, as without a listener. Null on the server.
 *
 * @example
 * ```tsx
 * function StepUpDialog() {
 *   const stepUp = useStepUp();
 *   const [password, setPassword] = useState("");
 *   if (!stepUp) return null;
 *   return (
 *     <dialog open>
 *       <form onSubmit={(event) => { event.preventDefault(); void stepUp.reauthenticate({ password }); }}>
 *         <p>Confirm it is you to go on.</p>
 *         <input type="password" value={password} onChange={(event) => setPassword(event.target.value)} />
 *         {stepUp.error && <p role="alert">That did not work.</p>}
 *         <button disabled={stepUp.pending}>Confirm</button>
 *         <button type="button" onClick={stepUp.cancel}>Cancel</button>
 *       </form>
 *     </dialog>
 *   );
 * }
 * ```
 */
export function useStepUp(): StepUpState | null {
  const store = stepUpStoreOf(useAuthClient());
  return useSyncExternalStore(store.subscribe, store.snapshot, noStepUp);
}
