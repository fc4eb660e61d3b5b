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

/** What the client asks the app for when the server wants proof that it is still the user. */
export interface ReauthenticationRequest {
  operation: ReauthenticatedOperation;
  /** The proofs the operation takes: the password, and for a passkey, a session or an address also a TOTP code when TOTP is on (both when it is: STUP-3). */
  accepts: readonly (keyof ReauthenticationProof)[];
}

/**
 * Asks the user to prove it is them (a password prompt, say); `null` or `undefined` gives up,
 * and the operation rejects with the server's 40001.
 */
export type Reauthenticate = (
  request: ReauthenticationRequest,
) => ReauthenticationProof | null | undefined | Promise<ReauthenticationProof | null | undefined>;

const offersProof = (proof: ReauthenticationProof) => Boolean(proof.password || proof.totpCode);

/**
 * Runs `call` with `proof`. When the server answers 40001 to a call that carried no proof (the
 * sign-in is older than the server's `reauthentication.recentSignIn`) and the app gave a
 * `reauthenticate` function, asks it for a proof and runs `call` once more with it.
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
    const given = await reauthenticate(request);
    const accepted: ReauthenticationProof = {};
    for (const name of request.accepts) if (given?.[name]) accepted[name] = given[name];
    if (!offersProof(accepted)) throw error;
    return call({ ...proof, ...accepted });
  }
}
