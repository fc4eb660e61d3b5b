import type { ResolvedConfig } from "../config.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { commonPasswords } from "./common-passwords.js";

/**
 * The one normalisation applied to a password, both when it is set and when it is checked
 * (PW-2): Unicode NFKC, and nothing else: no trimming, no case folding, no truncation.
 */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/** True when the password is longer than the byte cap, checked before any hashing (PW-4). */
export function exceedsByteCap(password: string, maxBytes: number): boolean {
  return password.length > maxBytes || Buffer.byteLength(password, "utf8") > maxBytes;
}

/**
 * Checks a new password against the policy of NIST SP 800-63B 3.1.1.2 (PW-3): a minimum
 * length in characters, the byte cap, no composition rules, and a refusal, with the reason,
 * of common passwords and of the username itself. Throws {@link AuthError} 42200.
 */
export function assertAcceptablePassword(config: ResolvedConfig["password"], password: string, username?: string): void {
  const normalized = normalizePassword(password);
  if ([...normalized].length < config.minLength) {
    throw new AuthError(ErrorCode.ValidationFailed, `The password must be at least ${config.minLength} characters long`);
  }
  if (exceedsByteCap(normalized, config.maxBytes)) {
    throw new AuthError(ErrorCode.ValidationFailed, `The password must be at most ${config.maxBytes} bytes long`);
  }
  const folded = normalized.toLowerCase();
  if (commonPasswords.has(folded) || config.blocklist.has(folded)) {
    throw new AuthError(ErrorCode.ValidationFailed, "The password is too common; choose another");
  }
  if (username !== undefined && folded === username.normalize("NFKC").toLowerCase()) {
    throw new AuthError(ErrorCode.ValidationFailed, "The password must not be the username");
  }
}
