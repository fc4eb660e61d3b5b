import { sha256 } from "../crypto/random.js";

/** How many recovery codes a set holds (RC-1). */
export const recoveryCodeCount = 10;

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * Makes one set of recovery codes (RC-1): ten codes of 16 Crockford base32 characters (80
 * bits each, from the CSPRNG), shown as four groups of four.
 */
export function generateRecoveryCodes(randomBytes: (size: number) => Uint8Array): string[] {
  return Array.from({ length: recoveryCodeCount }, () => {
    const bytes = randomBytes(16);
    const characters = Array.from(bytes, (byte) => alphabet[byte & 31]).join("");
    return (characters.match(/.{4}/g) as string[]).join("-");
  });
}

/**
 * Normalises a typed recovery code: drops spaces and dashes, upper-cases, and reads the
 * Crockford look-alikes (I and L as 1, O as 0). Null when what remains is not a code.
 */
export function normalizeRecoveryCode(input: string): string | null {
  const compact = input.replace(/[\s-]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
  return /^[0-9A-HJKMNP-TV-Z]{16}$/.test(compact) ? compact : null;
}

/** The stored form of a recovery code (RC-2): SHA-256 over the user id and the normalised code. */
export function hashRecoveryCode(userId: string, normalizedCode: string): string {
  return sha256(`${userId}:${normalizedCode}`);
}
