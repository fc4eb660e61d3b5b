import { AuthClientError } from "./errors.js";
import type { ReauthenticationProof } from "./types.js";

const missingParameterCode = 40001;

/** The operations the server may ask a signed-in user to re-authenticate for. */
export type ReauthenticatedOperation =
  | "totp.setup"
  | "totp.enable"
  | "passkeys.register"
  | "passkeys.revoke"
  | "sessions.end"
  | "sessions.endOthers"
  | "email.change"
  | "orgs.remove"
  | "orgs.members.changeRoles"
  | "orgs.members.remove"
  | "apiKeys.create"
  | "serviceAccounts.change"
  | "impersonation.start";

/** How an account can prove it is its user again, as the server's 40001 names them. */
export type ReauthenticationWay = "password" | "passkey" | "provider";

/** What the client asks the app for when the server wants proof that it is still the user. */
export interface ReauthenticationRequest {
  operation: ReauthenticatedOperation;
  /** The proofs the operation takes: the password, and for a passkey, a session or an address also a TOTP code when TOTP is on (both when it is: STUP-3). */
  accepts: readonly (keyof ReauthenticationProof)[];
  /**
   * How this account can prove it is its user, from the server's 40001 (absent from a server that
   * does not say): without `"password"` (a passkey-only account) ask for the passkey, answering
   * `{ passkey: true }`.
   */
  reauthenticateWith?: ReauthenticationWay[];
}

/**
 * What the app's {@link Reauthenticate} answers: the proofs to send (a password prompt's), `{
 * passkey: true }` to re-authenticate the session with one of the user's passkeys first (the
 * browser's prompt; the operation is then sent again with no proof), or `null`/`undefined` to give
 * up (the operation rejects with the server's 40001).
 */
export type ReauthenticationAnswer = ReauthenticationProof | { passkey: true } | null | undefined;

/** Asks the user to prove it is them: a password prompt, or a choice between it and a passkey. */
export type Reauthenticate = (request: ReauthenticationRequest) => ReauthenticationAnswer | Promise<ReauthenticationAnswer>;

const offersProof = (proof: ReauthenticationProof) => Boolean(proof.password || proof.totpCode);

/** What a {@link Reauthenticate} made by {@link choosingPasskey} answers once it re-authenticated with a passkey. */
const passkeyReauthenticated: { passkey: true } = Object.freeze({ passkey: true });

/**
 * Wraps the app's `ask` so that its `{ passkey: true }` re-authenticates the session with a
 * passkey (`reauthenticateWithPasskey`, the step-up client's) before {@link withReauthentication}
 * sends the operation again, with no proof: the session's sign-in is then recent (PL-15).
 *
 * @example
 * ```ts
 * const reauthenticate = choosingPasskey(options.reauthenticate, () => stepUp.client.reauthenticateWithPasskey());
 * ```
 */
export function choosingPasskey(ask: Reauthenticate, reauthenticateWithPasskey: () => Promise<unknown>): Reauthenticate {
  return async (request) => {
    const given = await ask(request);
    if (given && "passkey" in given && given.passkey === true) {
      await reauthenticateWithPasskey();
      return passkeyReauthenticated;
    }
    return given;
  };
}

/**
 * Runs `call` with `proof`. When the server answers 40001 to a call that carried no proof (the
 * sign-in is older than the server's `reauthentication.recentSignIn`) and the app gave a
 * `reauthenticate` function, asks it for a proof (telling it the account's ways, from the 40001)
 * and runs `call` once more with it; or, when it re-authenticated with a passkey (see
 * {@link choosingPasskey}), once more as it was.
 *
 * @example
 * ```ts
 * const setup = await withReauthentication(reauthenticate, { operation: "totp.setup", accepts: ["password"] }, {}, (proof) =>
 *   session.call({ method: "POST", path: "/auth/2fa/setup", body: proof }),
 * );
 * ```
 */
export async function withReauthentication<T>(
  reauthenticate: Reauthenticate | undefined,
  request: ReauthenticationRequest,
  proof: ReauthenticationProof,
  call: (proof: ReauthenticationProof) => Promise<T>,
): Promise<T> {
  try {
    return await call(proof);
  } catch (error) {
    const askable =
      reauthenticate !== undefined &&
      error instanceof AuthClientError &&
      error.code === missingParameterCode &&
      !offersProof(proof);
    if (!askable) throw error;
    const ways = (error.data as { reauthenticateWith?: unknown } | undefined)?.reauthenticateWith;
    const given = await reauthenticate(Array.isArray(ways) ? { ...request, reauthenticateWith: ways } : request);
    if (given === passkeyReauthenticated) return call(proof);
    const accepted: ReauthenticationProof = {};
    const offered = (given ?? {}) as ReauthenticationProof;
    for (const name of request.accepts) if (offered[name]) accepted[name] = offered[name];
    if (!offersProof(accepted)) throw error;
    return call({ ...proof, ...accepted });
  }
}
