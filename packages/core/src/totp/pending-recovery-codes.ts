import { hkdfSync } from "node:crypto";
import type { EncryptedSecret } from "../storage/types.js";
import { generateRecoveryCodes, recoveryCodeCount, recoveryCodeLength } from "./recovery-codes.js";

/**
 * The recovery codes that belong to a pending TOTP factor (RC-4, `totp.recoveryCodesAtSetup`):
 * ten codes of the RC-1 form, derived with HKDF-SHA256 from the factor's secret (20 bytes of the
 * CSPRNG, TOTP-2) salted with its sealed form (which holds the random nonce it was sealed with),
 * for the user. `2fa/setup` shows them and stores nothing; `2fa/enable` derives them again from
 * the factor it turns on and only then stores their hashes (RC-2). So a setup never enabled leaves
 * no usable code, and a new setup (a new secret) replaces the set. Deriving needs both the secret
 * and the sealed form: the authenticator's copy of the secret alone, or the database alone without
 * the encryption key, gives none of the codes.
 *
 * @example
 * ```ts
 * const codes = pendingRecoveryCodes(userId, secret, sealTotpSecret(auth, userId, secret));
 * ```
 */
export function pendingRecoveryCodes(userId: string, secret: Uint8Array, sealed: EncryptedSecret): string[] {
  const length = recoveryCodeCount * recoveryCodeLength;
  const derived = new Uint8Array(
    hkdfSync("sha256", secret, `${sealed.keyId}:${sealed.sealed}`, `portcullis pending recovery codes v1:${userId}`, length),
  );
  let offset = 0;
  const codes = generateRecoveryCodes((size) => {
    const bytes = derived.subarray(offset, offset + size);
    offset += size;
    return bytes;
  });
  derived.fill(0);
  return codes;
}
