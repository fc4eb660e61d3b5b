import { crc32 } from "node:zlib";

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Characters of a key's secret: base62, 5.95 bits each, so 32 carry 190 bits (AK-1 asks at least 128). */
export const secretLength = 32;

/** Characters of a key's checksum: the CRC-32 of everything before it, in base62. */
const checksumLength = 6;

/** What an environment tag may be: lower-case letters and digits, 1 to 16 (`live`, `test`, `staging`). */
export const environmentPattern = /^[a-z0-9]{1,16}$/;

function base62(value: number, length: number): string {
  let text = "";
  let rest = value;
  for (let index = 0; index < length; index += 1) {
    text = alphabet[rest % 62] + text;
    rest = Math.floor(rest / 62);
  }
  return text;
}

const checksumOf = (body: string) => base62(crc32(body), checksumLength);

/**
 * A new checksummed secret: `prefix`, 32 base62 characters drawn without bias from `randomBytes`
 * (190 bits), and a 6-character CRC-32 checksum of what precedes it, so secret scanners recognise
 * a leaked one and a mistyped or made-up one is refused without a storage read. API keys
 * (`pc_<environment>_`) and client secrets (`pcs_<environment>_`) are made so.
 */
export function newChecksummedSecret(prefix: string, randomBytes: (size: number) => Uint8Array): string {
  let secret = "";
  while (secret.length < secretLength) {
    for (const byte of randomBytes(secretLength)) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (byte < 248 && secret.length < secretLength) secret += alphabet[byte % 62];
    }
  }
  const body = prefix + secret;
  return body + checksumOf(body);
}

/** Whether `text` is `prefix`, 32 base62 characters and their right checksum: checked before any storage read. */
export function isWellFormedSecret(text: string, prefix: string): boolean {
  if (!text.startsWith(prefix) || text.length !== prefix.length + secretLength + checksumLength) return false;
  const body = text.slice(0, prefix.length + secretLength);
  return secretPattern.test(text.slice(prefix.length)) && checksumOf(body) === text.slice(body.length);
}

const secretPattern = new RegExp(`^[0-9A-Za-z]{${secretLength + checksumLength}}$`);

/**
 * A new API key of `environment` (AK-1): `pc_<environment>_`, 32 base62 characters (190 bits) and
 * a 6-character CRC-32 checksum (see {@link newChecksummedSecret}).
 *
 * @example
 * ```ts
 * newApiKey("live", randomBytes); // "pc_live_4hS0…Xq9a1bC2d"
 * ```
 */
export function newApiKey(environment: string, randomBytes: (size: number) => Uint8Array): string {
  return newChecksummedSecret(`pc_${environment}_`, randomBytes);
}

/**
 * Whether `text` is a well-formed API key of `environment` whose checksum holds: checked before
 * any storage read, so a malformed key costs no round trip (AK-3).
 */
export function isWellFormedApiKey(text: string, environment: string): boolean {
  return isWellFormedSecret(text, `pc_${environment}_`);
}

/** Whether `text` looks like an API key of any environment (its prefix): how a bearer credential is told from an access token. */
export const looksLikeApiKey = (text: string): boolean => text.startsWith("pc_");

/** The first characters of a key that identify it to a person, never enough to use it: `pc_live_AbCd`. */
export function startOfApiKey(key: string): string {
  return key.slice(0, key.indexOf("_", 3) + 5);
}
