import { accessTokenClaims } from "./claims.js";
import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import type { ReauthenticationProof, SessionInfo } from "./types.js";

/** The signed-in user's sessions: the `/auth/sessions` routes. */
export interface SessionsClient {
  /**
   * The user's live sessions, newest first (`GET /auth/sessions`, at most 100), this client's
   * marked `current`. No token is ever in the list.
   *
   * @example
   * ```ts
   * for (const session of await client.sessions.list()) render(session.userAgent, session.current ? "this device" : "");
   * ```
   */
  list(): Promise<SessionInfo[]>;
  /**
   * Ends one of the user's sessions (`DELETE /auth/sessions/:id`): its refresh token is refused at
   * once, its access token within the server's token-state cache delay. Ending this client's own
   * session is a sign-out: the tokens are forgotten and `signedOut` (reason `logout`) emitted. The
   * server wants a sign-in younger than `reauthentication.recentSignIn`, or the password (or a TOTP
   * code when TOTP is on): here, or through the client's `reauthenticate`.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40103 wrong
   * code, 40400 no such session of this user (another user's is the same answer), 42900 throttled.
   * @example
   * ```ts
   * await client.sessions.end(session.id);
   * ```
   */
  end(id: string, proof?: ReauthenticationProof): Promise<void>;
  /**
   * Ends every session of the user but this one (`POST /auth/sessions/end-others`), with the same
   * re-authentication as {@link SessionsClient.end}; answers how many ended.
   *
   * @throws {AuthClientError} as {@link SessionsClient.end}, without the 40400.
   * @example
   * ```ts
   * const { ended } = await client.sessions.endOthers();
   * ```
   */
  endOthers(proof?: ReauthenticationProof): Promise<{ ended: number }>;
  /**
   * Signs out everywhere (`DELETE /auth/sessions`): every session of the user ends, this one
   * included (the server raises the user's token version). The client then forgets the tokens and
   * emits `signedOut` with reason `logout_everywhere`. Answers how many sessions ended.
   *
   * @throws {AuthClientError} `not_signed_in`, or the route's error (the tokens are then kept).
   * @example
   * ```ts
   * await client.sessions.endAll();
   * ```
   */
  endAll(): Promise<{ ended: number }>;
}

/** Whether `accessToken` (a JWT, read without verifying: the server did) is of session `id`: its `sid` claim. */
function isTokenOfSession(accessToken: string, id: string): boolean {
  return accessTokenClaims(accessToken)?.sid === id;
}

/**
 * Makes the {@link SessionsClient} of a session.
 *
 * @example
 * ```ts
 * const sessions = createSessionsClient(session, reauthenticate);
 * ```
 */
export function createSessionsClient(session: Session, reauthenticate: Reauthenticate | undefined): SessionsClient {
  const accepts = ["password", "totpCode"] as const;
  /** Forgets this client's tokens once any refresh under way has ended, so none saves tokens after. */
  const signOut = async (reason: "logout" | "logout_everywhere") => {
    await session.settled();
    await session.end(reason);
  };
  return {
    list: () => session.call<SessionInfo[]>({ method: "GET", path: "/auth/sessions" }),
    async end(id, proof = {}) {
      await withReauthentication(reauthenticate, { operation: "sessions.end", accepts }, proof, (given) =>
        session.call({
          method: "DELETE",
          path: `/auth/sessions/${encodeURIComponent(id)}`,
          body: given.password || given.totpCode ? given : undefined,
        }),
      );
      const tokens = await session.tokens();
      if (tokens && isTokenOfSession(tokens.accessToken, id)) await signOut("logout");
    },
    async endOthers(proof = {}) {
      const { ended } = await withReauthentication(reauthenticate, { operation: "sessions.endOthers", accepts }, proof, (given) =>
        session.call<{ ended: number }>({ method: "POST", path: "/auth/sessions/end-others", body: given }),
      );
      return { ended };
    },
    async endAll() {
      const { ended } = await session.call<{ ended: number }>({ method: "DELETE", path: "/auth/sessions" });
      await signOut("logout_everywhere");
      return { ended };
    },
  };
}
