import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ResolvedEmailSignInConfig } from "./email-sign-in-config.js";

/** The challenge kind of an email sign-in: one record per begin, under the SHA-256 of its binding. */
export const emailSignInKind = "email_sign_in";

/**
 * What an email sign-in's challenge keeps (`data`): the address asked for as `emailKeyOf` compares
 * it, and the code and link only as digests, so that a leaked row gives neither away.
 */
export interface EmailSignInData {
  /** The address asked for, NFKC and lower-cased (`emailKeyOf`): the finish looks its holder up again. */
  emailKey: string;
  /** {@link codeDigest} of the code. */
  codeHash: string;
  /** The SHA-256 of the link's token; null when `method` is `"code"` (no link was made). */
  linkHash: string | null;
}

/** The emailSignIn options of an auth whose email sign-in is on; 40400 otherwise, as its routes answer. */
export function emailSignInConfigOf(auth: Auth): ResolvedEmailSignInConfig {
  const config = auth.config.emailSignIn;
  if (!config.enabled) throw new AuthError(ErrorCode.NotFound, "Email sign-in is not enabled");
  return config;
}

/**
 * A code of `length` decimal digits, each uniform: a random byte of 250 or more is drawn again
 * rather than reduced, so no digit is likelier than another (no modulo bias).
 */
export function randomDigits(randomBytes: (size: number) => Uint8Array, length: number): string {
  let digits = "";
  while (digits.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < 250 && digits.length < length) digits += String(byte % 10);
    }
  }
  return digits;
}

/**
 * The stored digest of a code: the instance's keyed pseudonym of the code and its binding, so a
 * leaked challenge row neither gives the code away (a million codes are quickly tried against a
 * plain hash) nor matches another sign-in's.
 */
export function codeDigest(auth: Auth, bindingHash: string, code: string): string {
  return auth.pseudonym(`email-code:${bindingHash}:${code}`);
}

/** The one refusal of every failed finish: expired, used up, wrong, unknown address (PL-3). */
export const invalidSignIn = (): AuthError =>
  new AuthError(ErrorCode.AuthenticationFailed, "The code or link is invalid or expired");
