import type { AuthClient, AuthClientError, PasskeyInfo, ReauthenticationProof, SignInStep } from "@portcullis/client";
import { useSyncExternalStore } from "react";
import { useAuthClient } from "./provider.js";
import { useRemoteList } from "./remote-list.js";
import type { Outcome } from "./tracked.js";

/** What {@link usePasskeys} answers. Every call answers null when the client refused, the error then in `error`. */
export interface PasskeysState {
  /** The signed-in user's passkeys, oldest first; empty while loading, signed out, and on the server. */
  passkeys: PasskeyInfo[];
  /** Whether the list is being read. */
  loading: boolean;
  /** Whether a call that changes the list is under way. */
  pending: boolean;
  /** The last refusal: 40001 re-authentication needed, 40900 already registered, `passkey_ceremony`, … */
  error: AuthClientError | null;
  /** Whether this browser runs WebAuthn at all (false on the server and in the first render). */
  supported: boolean;
  /** Reads the list again. */
  refresh(): Promise<void>;
  /** Registers a passkey (`client.passkeys.register`: the browser's prompt), then reads the list again. */
  register(label: string, proof?: ReauthenticationProof): Outcome<PasskeyInfo>;
  /** Renames one, then reads the list again. */
  rename(id: string, label: string): Outcome<void>;
  /** Revokes one (every factor of the account, or a recent sign-in: STUP-3), then reads the list again. */
  revoke(id: string, proof?: ReauthenticationProof): Outcome<void>;
  /** Signs in with a passkey (`client.passkeys.signIn`); {@link useSignIn}'s `signInWithPasskey` also follows a `totp_required` answer. */
  signIn(options?: { username?: string }): Outcome<SignInStep>;
}

const listPasskeys = (client: AuthClient) => client.passkeys.list();
const noSubscription = () => () => {};
const browserRunsWebAuthn = () => typeof (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential === "function";
const notOnServer = () => false;

/**
 * The signed-in user's passkeys and the calls that manage them, each followed by a fresh list.
 * The list is read in the browser once the session is signed in; on the server it is empty and
 * `loading`. Calls that need re-authentication (40001) take a `proof`, or go through the client's
 * `reauthenticate` option.
 *
 * @example
 * ```tsx
 * function Passkeys() {
 *   const { passkeys, supported, register, revoke } = usePasskeys();
 *   return (
 *     <>
 *       <ul>{passkeys.map((passkey) => <li key={passkey.id}>{passkey.label} <button onClick={() => revoke(passkey.id)}>Remove</button></li>)}</ul>
 *       {supported && <button onClick={() => register("This device")}>Add a passkey</button>}
 *     </>
 *   );
 * }
 * ```
 */
export function usePasskeys(): PasskeysState {
  const client = useAuthClient();
  const list = useRemoteList(listPasskeys);
  const supported = useSyncExternalStore(noSubscription, browserRunsWebAuthn, notOnServer);
  return {
    passkeys: list.items,
    loading: list.loading,
    pending: list.pending,
    error: list.error,
    supported,
    refresh: list.refresh,
    register: (label, proof = {}) => list.change(() => client.passkeys.register({ label, ...proof })),
    rename: (id, label) => list.change(() => client.passkeys.rename(id, label)),
    revoke: (id, proof) => list.change(() => client.passkeys.revoke(id, proof)),
    signIn: (options) => list.run(() => client.passkeys.signIn(options)),
  };
}
