import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import type { TotpSetup } from "./types.js";

/** TOTP enrolment and management for the signed-in user: the `/auth/2fa/*` bearer routes. */
export interface TotpClient {
  /**
   * Starts enrolment (`POST /auth/2fa/setup`): the secret to show as a QR code. Calling it again
   * before `enable` replaces the pending secret. Without a sign-in younger than the server's
   * `reauthentication.recentSignIn`, the server asks for the password: pass it here, or let the
   * client's `reauthenticate` function ask the user.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100 wrong password, 40900 already enabled.
   * @example
   * ```ts
   * const { otpauthUrl } = await client.totp.setup();
   * showQrCode(otpauthUrl);
   * ```
   */
  setup(proof?: { password?: string }): Promise<TotpSetup>;
  /**
   * Turns the pending factor on with a code from it (`POST /auth/2fa/enable`) and answers the ten
   * recovery codes, shown this once: each 24 characters in six groups of four, such as
   * `7K3D-9QXM-2HBT-W0RZ-5NPV-C8JE` (120 bits). Show them whole, in a monospace font, with a way
   * to copy or download them; the server keeps only their hashes. The server ends the user's other sessions and keeps this one
   * (SE-2): the client stays signed in, and its stored user says `totpEnabled: true`. The next
   * sign-in asks for the second factor.
   *
   * @throws {AuthClientError} 40103 wrong code, 40900 nothing pending, and as {@link TotpClient.setup}.
   * @example
   * ```ts
   * const { recoveryCodes } = await client.totp.enable({ code: "123456" });
   * ```
   */
  enable(input: { code: string; password?: string }): Promise<{ recoveryCodes: string[] }>;
  /**
   * Turns TOTP off (`POST /auth/2fa/disable`) with every factor (STUP-3): the password and a
   * current code, or either for a factor the session proved within the server's
   * `reauthentication.recentSignIn` (a fresh sign-in, or `client.stepUp.reauthenticate`). Like
   * enabling, it ends the user's other sessions and keeps this one; the stored user says
   * `totpEnabled: false`.
   *
   * @throws {AuthClientError} 40001 a factor missing, 40103 wrong code, 40100 wrong password, 40900 TOTP is not enabled.
   * @example
   * ```ts
   * await client.totp.disable({ password, code: "123456" });
   * ```
   */
  disable(input: { code?: string; password?: string }): Promise<void>;
  /**
   * Replaces the recovery codes with a new set (`POST /auth/2fa/recovery-codes`), ten codes of the
   * form `enable` answers; the old ones stop working at once. It needs every factor, as
   * {@link TotpClient.disable} (STUP-3). The user's other sessions end; this one continues.
   *
   * @throws {AuthClientError} 40001 a factor missing, 40100 wrong password, 40103 wrong code, 40900 TOTP is not enabled.
   * @example
   * ```ts
   * const { recoveryCodes } = await client.totp.regenerateRecoveryCodes({ password, code: "123456" });
   * ```
   */
  regenerateRecoveryCodes(input: { code?: string; password?: string }): Promise<{ recoveryCodes: string[] }>;
}

/**
 * Makes the {@link TotpClient} of a session.
 *
 * @example
 * ```ts
 * const totp = createTotpClient(session, reauthenticate);
 * ```
 */
export function createTotpClient(session: Session, reauthenticate: Reauthenticate | undefined): TotpClient {
  const post = <T>(path: string, body: object) => session.call<T>({ method: "POST", path, body });
  /** Keeps the stored user's `totpEnabled` in step with a change the server accepted. */
  const noteTotp = async (totpEnabled: boolean) => {
    const tokens = await session.tokens();
    if (tokens) await session.updateUser({ ...tokens.user, totpEnabled });
  };
  return {
    setup: (proof = {}) =>
      withReauthentication(reauthenticate, { operation: "totp.setup", accepts: ["password"] }, proof, (given) =>
        post<TotpSetup>("/auth/2fa/setup", given),
      ),
    async enable({ code, ...proof }) {
      const { recoveryCodes } = await withReauthentication(
        reauthenticate,
        { operation: "totp.enable", accepts: ["password"] },
        proof,
        (given) => post<{ recoveryCodes: string[] }>("/auth/2fa/enable", { ...given, code }),
      );
      await noteTotp(true);
      return { recoveryCodes };
    },
    async disable({ code, password }) {
      await post("/auth/2fa/disable", { code, password });
      await noteTotp(false);
    },
    async regenerateRecoveryCodes({ code, password }) {
      const { recoveryCodes } = await post<{ recoveryCodes: string[] }>("/auth/2fa/recovery-codes", { code, password });
      return { recoveryCodes };
    },
  };
}
