import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import type { ReauthenticationProof, TokenSet } from "./types.js";

/** The tokens of an impersonated session (`POST /auth/admin/users/:id/impersonate`), and when it ends. */
export interface ImpersonationTokens extends TokenSet {
  impersonation: {
    /** The administrator acting. */
    by: string;
    /** When the session ends, epoch milliseconds: never later, whatever refreshes it has. */
    expiresAt: number;
  };
}

/**
 * Impersonation (`/auth/admin/users/:id/impersonate`, `/auth/impersonation/end`, where the server
 * has `impersonation.enabled`): an administrator acting as a user, for support, in a session of the
 * user's that is marked with the administrator and ends by itself.
 */
export interface ImpersonationClient {
  /**
   * Begins a session as the user (`POST /auth/admin/users/:id/impersonate`), for a signed-in
   * administrator holding the server's `adminRole` and `impersonation.role`, with a recent sign-in
   * or `proof` (here or through the client's `reauthenticate` on its 40001). Answers the
   * impersonated session's tokens and leaves this client's own session as it is: hand them to a
   * client of their own (a store of their own), whose `impersonation.end()` ends them.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100/40103 a wrong proof, 40300 not allowed (no impersonation role, the user is an administrator or disabled), 40400 no such user or impersonation off.
   * @example
   * ```ts
   * const { accessToken, refreshToken, expiresIn, user } = await client.impersonation.start(userId);
   * const store = memoryTokenStore();
   * await store.save({ accessToken, refreshToken, user, expiresAt: Date.now() + expiresIn * 1000 });
   * const asUser = createAuthClient({ store });
   * ```
   */
  start(userId: string, proof?: ReauthenticationProof): Promise<ImpersonationTokens>;
  /**
   * Ends the impersonated session this client holds (`POST /auth/impersonation/end`), then forgets
   * its tokens and emits `signedOut` with reason `logout`.
   *
   * @throws {AuthClientError} `not_signed_in`, 40300 the session is the user's own (nothing is forgotten), 40400 impersonation off.
   * @example
   * ```ts
   * await asUser.impersonation.end();
   * ```
   */
  end(): Promise<void>;
}

/**
 * Makes the {@link ImpersonationClient} of a session; `reauthenticate` answers the 40001 of a start.
 *
 * @example
 * ```ts
 * const impersonation = createImpersonationClient(session, reauthenticate);
 * ```
 */
export function createImpersonationClient(session: Session, reauthenticate: Reauthenticate | undefined): ImpersonationClient {
  return {
    start: (userId, proof = {}) =>
      withReauthentication(
        reauthenticate,
        { operation: "impersonation.start", accepts: ["password", "totpCode"] },
        proof,
        (given) =>
          session.call<ImpersonationTokens>({
            method: "POST",
            path: `/auth/admin/users/${encodeURIComponent(userId)}/impersonate`,
            body: given,
          }),
      ),
    async end() {
      await session.call({ method: "POST", path: "/auth/impersonation/end" });
      await session.settled();
      await session.end("logout");
    },
  };
}
