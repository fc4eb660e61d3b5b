import { Secret, TOTP, URI } from "otpauth";

/** The hash algorithms of a TOTP secret (RFC 6238 §1.2); Portcullis enrols SHA1. */
export type TotpAlgorithm = "SHA1" | "SHA256" | "SHA512";

/** Options of {@link totpCode}. */
export interface TotpCodeOptions {
  /**
   * The secret as enrolment returns it: the base32 `secret` of `beginTotpSetup` (or of
   * `POST /auth/2fa/setup`), or its `otpauth://totp/…` URI, whose own parameters then apply.
   */
  secret: string;
  /** The moment the code is for, a `Date` or epoch milliseconds. Default: now. Use the server's clock when it is frozen. */
  at?: Date | number;
  /** Digits of the code, for a base32 secret. Default 6. A URI states its own. */
  digits?: number;
  /** The time step in seconds, for a base32 secret. Default 30. A URI states its own. */
  period?: number;
  /** The hash, for a base32 secret. Default `"SHA1"`. A URI states its own. */
  algorithm?: TotpAlgorithm;
}

function totpOf(options: TotpCodeOptions): TOTP {
  const { secret, digits, period, algorithm } = options;
  if (!secret.startsWith("otpauth://")) {
    return new TOTP({
      secret: Secret.fromBase32(secret),
      digits: digits ?? 6,
      period: period ?? 30,
      algorithm: algorithm ?? "SHA1",
    });
  }
  if (digits !== undefined || period !== undefined || algorithm !== undefined) {
    throw new TypeError(
      "totpCode: an otpauth:// URI states its own digits, period and algorithm; give them only with a base32 secret",
    );
  }
  const parsed = URI.parse(secret);
  if (!(parsed instanceof TOTP)) throw new TypeError("totpCode: the URI is not an otpauth://totp/ URI");
  return parsed;
}

/**
 * The TOTP code (RFC 6238) of a secret at a moment: what an authenticator app shows then. Give
 * it what enrolment returned, the base32 secret or the `otpauth://` URI, and the server's clock
 * when the test freezes it; `at` one period later gives the next code.
 *
 * @throws TypeError for a URI that is not `otpauth://totp/`, or digits, period or algorithm given with a URI.
 *
 * @example
 * ```ts
 * const setup = await beginTotpSetup(auth, { userId, password });
 * await enableTotp(auth, { userId, password, code: totpCode({ secret: setup.otpauthUrl, at: clock.now }) });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6238#section-4
 */
export function totpCode(options: TotpCodeOptions): string {
  const at = options.at ?? Date.now();
  return totpOf(options).generate({ timestamp: at instanceof Date ? at.getTime() : at });
}
