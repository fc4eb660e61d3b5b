import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ResolvedPasswordConfig } from "./password-config.js";

/**
 * The one normalisation applied to a password, both when it is set and when it is checked
 * (PW-2): Unicode NFKC, and nothing else: no trimming, no case folding, no truncation.
 */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

/**
 * True when the password is longer than the byte cap in UTF-8 (Buffer.byteLength's default),
 * checked before any hashing (PW-4).
 */
export function exceedsByteCap(password: string, maxBytes: number): boolean {
  return Buffer.byteLength(password) > maxBytes;
}

/** A typed password ready to hash, or the reason it can never be a stored password. */
export type PreparedPassword = { ok: true; normalized: string } | { ok: false; refusal: string };

/**
 * Turns a typed password into the form that is hashed, or says why it cannot be one. Setting
 * and verifying both go through here, so they see the same form (PW-2, PW-4):
 *
 * - well-formed Unicode only: a lone surrogate reaches argon2 as U+FFFD, which would make
 *   `"\uD800"` and `"\uDBFF"` the same password;
 * - at most `maxBytes` UTF-16 units as typed (a cheap test, made before NFKC);
 * - NFKC ({@link normalizePassword});
 * - at most `maxBytes` UTF-8 bytes of the NFKC form.
 */
export function preparePassword(password: string, maxBytes: number): PreparedPassword {
  const tooLong = { ok: false, refusal: `The password must be at most ${maxBytes} bytes long` } as const;
  // A cheap test before NFKC runs on a huge string: UTF-16 units never outnumber UTF-8 bytes,
  // so this refuses only passwords that are over the cap as typed.
  if (password.length > maxBytes) return tooLong;
  if (/\p{Cs}/u.test(password)) return { ok: false, refusal: "The password is not valid Unicode text" };
  const normalized = normalizePassword(password);
  return exceedsByteCap(normalized, maxBytes) ? tooLong : { ok: true, normalized };
}

let commonPasswords: Promise<ReadonlySet<string>> | undefined;

/**
 * The 49,233 common passwords of `@zxcvbn-ts/language-common` (lower case, NFKC), loaded at
 * the first password check rather than when Portcullis is imported, then kept; a load that
 * failed is not kept, so the next check tries again.
 */
function loadCommonPasswords(): Promise<ReadonlySet<string>> {
  commonPasswords ??= import("@zxcvbn-ts/language-common")
    .then(({ dictionary }) => new Set(dictionary["passwords-common"]))
    .catch((error: unknown) => {
      commonPasswords = undefined;
      throw error;
    });
  return commonPasswords;
}

/**
 * The forms of a lower-cased password looked up in the lists: itself, and itself without the
 * decoration people add to a common password to pass composition rules (`Password1!`,
 * `P@ssw0rd!`, `2024football`): a trailing run of non-alphanumerics, a trailing run of
 * non-letters, a leading run of non-letters.
 */
function listedForms(folded: string): string[] {
  return [
    folded,
    folded.replace(/[^\p{L}\p{N}]+$/u, ""),
    folded.replace(/[^\p{L}]+$/u, ""),
    folded.replace(/^[^\p{L}]+/u, ""),
  ].filter((form) => form.length > 0);
}

/** Asks the operator's `password.isBreached` hook; a hook that fails refuses the password (fail closed). */
async function assertNotBreached(config: ResolvedPasswordConfig, normalized: string): Promise<void> {
  if (!config.isBreached) return;
  let breached: boolean;
  try {
    breached = await config.isBreached(normalized);
  } catch (error) {
    throw new AuthError(ErrorCode.Unavailable, "The password could not be checked against known breaches; try again later", {
      cause: error,
    });
  }
  if (breached) throw new AuthError(ErrorCode.ValidationFailed, "This password appears in a data breach; choose another");
}

/**
 * Checks a new password, as typed, against the policy of NIST SP 800-63B 3.1.1.2 (PW-3): it
 * must be preparable ({@link preparePassword}: well-formed Unicode, within the byte cap), at
 * least `minLength` characters after NFKC, with no composition rules; common passwords (also
 * with a decoration, see {@link listedForms}), the operator's blocklist and the username are
 * refused with the reason; last, the optional `isBreached` hook is asked.
 *
 * @throws {AuthError} 42200 with the reason, or 50300 when `isBreached` fails (its error kept as `cause`).
 * @example
 * ```ts
 * await assertAcceptablePassword(auth.config.password, "Password1!"); // 42200 "The password is too common; choose another"
 * ```
 */
export async function assertAcceptablePassword(
  config: ResolvedPasswordConfig,
  password: string,
  username?: string,
): Promise<void> {
  const prepared = preparePassword(password, config.maxBytes);
  if (!prepared.ok) throw new AuthError(ErrorCode.ValidationFailed, prepared.refusal);
  if ([...prepared.normalized].length < config.minLength) {
    throw new AuthError(ErrorCode.ValidationFailed, `The password must be at least ${config.minLength} characters long`);
  }
  const folded = prepared.normalized.toLowerCase();
  const common = await loadCommonPasswords();
  if (listedForms(folded).some((form) => common.has(form) || config.blocklist.has(form))) {
    throw new AuthError(ErrorCode.ValidationFailed, "The password is too common; choose another");
  }
  if (username !== undefined && folded === username.normalize("NFKC").toLowerCase()) {
    throw new AuthError(ErrorCode.ValidationFailed, "The password must not be the username");
  }
  await assertNotBreached(config, prepared.normalized);
}
