import type { Session } from "./session.js";
import type { ServerProfileFields, ServerUser } from "./types.js";

/** What a password change sends. */
export interface ChangePasswordInput {
  currentPassword: string;
  newPassword: string;
  /** A current TOTP code: needed with TOTP on, unless the session proved one within the server's `reauthentication.recentSignIn` (STUP-3). */
  totpCode?: string;
}

/** The signed-in user's own account: `POST /auth/password`, `PATCH /auth/me`. */
export interface AccountClient<Server = unknown> {
  /**
   * Changes the user's password (`POST /auth/password`): the current one proves it is them, the
   * new one must pass the server's policy. The server ends the user's other sessions and voids
   * their pending sign-ins; this one goes on (SE-2, SE-4). Answers how many sessions ended.
   *
   * @throws {AuthClientError} 40001 a TOTP code missing (TOTP on, STUP-3), 40100 wrong current password (it counts towards the lockout), 40103 wrong code, 40900
   * an account without a local password (directory or provider only), 42200 the new password is
   * refused by the policy or found breached, 42900 throttled.
   * @example
   * ```ts
   * const { sessionsEnded } = await client.account.changePassword({ currentPassword, newPassword });
   * ```
   */
  changePassword(input: ChangePasswordInput): Promise<{ sessionsEnded: number }>;
  /**
   * Changes the user's own additional fields (`PATCH /auth/me`): only those the server declares
   * `selfEdit: true`; those left out stay. Answers the user as `/me` shows it, and keeps it beside
   * the tokens. Tokens carry a changed field from their next refresh.
   *
   * @throws {AuthClientError} 40002 an undeclared field or a value of the wrong type, 42200 a field
   * the user may not change or a value out of its limits (the message names the field).
   * @example
   * ```ts
   * const user = await client.account.updateProfile({ company: "Acme" });
   * ```
   */
  updateProfile(fields: ServerProfileFields<Server>): Promise<ServerUser<Server>>;
}

/**
 * Makes the {@link AccountClient} of a session.
 *
 * @example
 * ```ts
 * const account = createAccountClient(session);
 * ```
 */
export function createAccountClient<Server = unknown>(session: Session): AccountClient<Server> {
  return {
    async changePassword({ currentPassword, newPassword, totpCode }) {
      const { sessionsEnded } = await session.call<{ sessionsEnded: number }>({
        method: "POST",
        path: "/auth/password",
        body: { currentPassword, newPassword, totpCode },
      });
      return { sessionsEnded };
    },
    async updateProfile(fields) {
      const user = await session.call<ServerUser<Server>>({ method: "PATCH", path: "/auth/me", body: { fields } });
      await session.updateUser(user);
      return user;
    },
  };
}
