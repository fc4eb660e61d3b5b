import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import { type Transport, dataOf } from "./transport.js";
import type { ReauthenticationProof } from "./types.js";

/** Whose password to reset: the account's username, or the address it holds verified. */
export type ForgotPasswordInput = { username: string; email?: never } | { email: string; username?: never };

/** What a password reset sends: the link's token, the new password, and a second factor for a TOTP user. */
export interface ResetPasswordInput {
  /** The token of the reset link: what follows `#token=` ({@link tokenFromLink}). */
  token: string;
  newPassword: string;
  /** A current code of the user's authenticator: needed, or `recoveryCode`, when the account has TOTP on. */
  totpCode?: string;
  /** One of the user's recovery codes, instead of `totpCode`; it is spent. */
  recoveryCode?: string;
}

/** What a change of address sends: the new address and, for a sign-in that is not recent, the proof it is the user. */
export interface ChangeEmailInput extends ReauthenticationProof {
  email: string;
}

/**
 * Password reset by email and the account's address: the `/auth/password/forgot`,
 * `/auth/password/reset`, `/auth/email` and `/auth/email/verify` routes, on a server with `email`
 * configured (40400 otherwise).
 */
export interface EmailClient {
  /**
   * Asks for a reset link (`POST /auth/password/forgot`), by username or by verified address. The
   * server answers the same for every account, known or not (PR-1): this resolves alike, and a
   * link goes out only to an account's verified address. Needs no sign-in, and sends no token.
   *
   * @throws {AuthClientError} 40001 neither given, 40002 an `email` that is no address, 40400 email
   * not configured, 42900 asked too often (`retryAfter`).
   * @example
   * ```ts
   * await client.email.forgotPassword({ email: "alice@example.com" });
   * showNotice("If the account exists and has a verified address, a link is on its way.");
   * ```
   */
  forgotPassword(input: ForgotPasswordInput): Promise<void>;
  /**
   * Sets a new password with a reset link's token (`POST /auth/password/reset`). The link works
   * once, for a limited time, and only the newest one sent. A user with TOTP on must also give a
   * code: the first try without one answers 40103, after which the page asks for it (PR-3). The
   * server then ends every session of the user (PR-4): sign in afresh with the new password. The
   * route is public: its 40101 (a link invalid, expired or used) never refreshes or signs out this
   * client.
   *
   * @throws {AuthClientError} 40101 the link is invalid, expired or used, 40103 a TOTP code is
   * needed or was wrong, 42200 the new password is refused by the policy (the link stays usable),
   * 42900 throttled.
   * @example
   * ```ts
   * const token = tokenFromLink(location.hash);
   * if (token) await client.email.resetPassword({ token, newPassword, totpCode });
   * ```
   */
  resetPassword(input: ResetPasswordInput): Promise<void>;
  /**
   * Asks to change the signed-in user's address (`POST /auth/email`): a verification link goes to
   * the new address (and a notice to the current verified one); the account keeps its current
   * address until the link is used. The same address again sends a new link, which is how a user
   * verifies the address they signed up with. Without a sign-in younger than the server's
   * `reauthentication.recentSignIn` the server wants the password (or a TOTP code): here, or
   * through the client's `reauthenticate`.
   *
   * @throws {AuthClientError} `not_signed_in`, 40001 re-authentication needed, 40002 not an
   * address, 40100 wrong password, 40103 wrong code, 42900 throttled, 50300 the link could not be sent.
   * @example
   * ```ts
   * await client.email.changeEmail({ email: "new@example.com", password });
   * ```
   */
  changeEmail(input: ChangeEmailInput): Promise<void>;
  /**
   * Verifies an address with its link's token (`POST /auth/email/verify`): the account's address
   * becomes the one the link was sent to, verified. Public, like the reset: its 40101 never
   * refreshes or signs out this client. A signed-in page reads the new address with `client.me()`.
   *
   * @throws {AuthClientError} 40101 the link is invalid, expired or used, 40900 another account
   * verified the address first.
   * @example
   * ```ts
   * const token = tokenFromLink(location.hash);
   * if (token) await client.email.verifyEmail({ token });
   * ```
   */
  verifyEmail(input: { token: string }): Promise<void>;
}

/**
 * The token of a reset, verification or email sign-in link, from its fragment (`#token=…`): give it
 * `location.hash` (or the whole link). Null when there is none. The server puts the token in the
 * fragment so that it never reaches a server's logs or a `Referer`; once read, take it out of the
 * address bar too (`history.replaceState(null, "", location.pathname)`).
 *
 * @example
 * ```ts
 * const token = tokenFromLink(location.hash);
 * history.replaceState(null, "", location.pathname);
 * ```
 */
export function tokenFromLink(hashOrLink: string): string | null {
  const at = hashOrLink.indexOf("#");
  const fragment = at === -1 ? hashOrLink : hashOrLink.slice(at + 1);
  const token = new URLSearchParams(fragment).get("token");
  return token ? token : null;
}

/**
 * Makes the {@link EmailClient}: the public routes go through `transport` alone (no bearer token,
 * and none of the session's refresh logic), the address change through the session.
 *
 * @example
 * ```ts
 * const email = createEmailClient(transport, session, reauthenticate);
 * ```
 */
export function createEmailClient(
  transport: Transport,
  session: Session,
  reauthenticate: Reauthenticate | undefined,
): EmailClient {
  /** A public route: sent without the access token, so a 40101 there is about the link, never the session. */
  const publicPost = async (path: string, body: object) => {
    dataOf(await transport.send({ method: "POST", path, body }));
  };
  return {
    async forgotPassword(input) {
      const body = input.email !== undefined ? { email: input.email } : { username: input.username };
      await publicPost("/auth/password/forgot", body);
    },
    async resetPassword({ token, newPassword, totpCode, recoveryCode }) {
      // JSON leaves an undefined code out.
      await publicPost("/auth/password/reset", { token, newPassword, totpCode, recoveryCode });
    },
    async changeEmail({ email, ...proof }) {
      await withReauthentication(
        reauthenticate,
        { operation: "email.change", accepts: ["password", "totpCode"] },
        proof,
        (given) => session.call({ method: "POST", path: "/auth/email", body: { email, ...given } }),
      );
    },
    async verifyEmail({ token }) {
      await publicPost("/auth/email/verify", { token });
    },
  };
}
