import { sha256 } from "../crypto/random.js";

/** How many recovery codes a set holds (RC-1). */
export const recoveryCodeCount = 10;

/**
 * Characters of a recovery code as issued now: 24 of Crockford base32, 120 bits, at least the
 * 112 bits under which ASVS 6.5.2 and SP 800-63B-4 § 3.1.2.2 ask for a salted slow hash (STUP-7).
 */
export const recoveryCodeLength = 24;

/** Characters of the codes issued before STUP-7 (80 bits): still read, never issued. */
const earlierCodeLength = 16;

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const codePattern = new RegExp(`^(?:[0-9A-HJKMNP-TV-Z]{${earlierCodeLength}}|[0-9A-HJKMNP-TV-Z]{${recoveryCodeLength}})$`);

/**
 * Makes one set of recovery codes (RC-1, STUP-7): ten codes of 24 Crockford base32 characters
 * (120 bits each, 5 from each of 24 bytes of the CSPRNG), shown as six groups of four, such as
 * `7K3D-9QXM-2HBT-W0RZ-5NPV-C8JE`.
 */
export function generateRecoveryCodes(randomBytes: (size: number) => Uint8Array): string[] {
  return Array.from({ length: recoveryCodeCount }, () => {
    const bytes = randomBytes(recoveryCodeLength);
    const characters = Array.from(bytes, (byte) => alphabet[byte & 31]).join("");
    return (characters.match(/.{4}/g) as string[]).join("-");
  });
}

/**
 * Normalises a typed recovery code: drops spaces and dashes, upper-cases, and reads the
 * Crockford look-alikes (I and L as 1, O as 0). A code of 24 characters, or of the 16 issued
 * before STUP-7 (their stored hashes keep working), comes back compact; anything else is null.
 */
export function normalizeRecoveryCode(input: string): string | null {
  const compact = input.replace(/[\s-]/g, "").toUpperCase().replace(/[IL]/g, "1").replace(/O/g, "0");
  return codePattern.test(compact) ? compact : null;
}

/**
 * The stored form of a recovery code (RC-2): SHA-256 over the user id and the normalised code.
 * A fast hash is enough for codes of 112 bits and more (ASVS 6.5.2); the 80-bit codes issued
 * before STUP-7 keep the hashes they were stored with until the user replaces the set.
 */
export function hashRecoveryCode(userId: string, normalizedCode: string): string {
  return sha256(`${userId}:${normalizedCode}`);
}
