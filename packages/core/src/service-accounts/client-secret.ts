import { isWellFormedSecret, newChecksummedSecret } from "../api-keys/api-key-format.js";

/** The prefix of a client secret of `environment`: `pcs_<environment>_`, so scanners tell it from an API key (`pc_`). */
const prefixOf = (environment: string) => `pcs_${environment}_`;

/**
 * A new client secret (SA-2): `pcs_<environment>_`, 32 base62 characters (190 bits) and a CRC-32
 * checksum, as API keys are made, so a leaked one is recognisable and a mistyped one refused
 * without a storage read.
 */
export function newClientSecret(environment: string, randomBytes: (size: number) => Uint8Array): string {
  return newChecksummedSecret(prefixOf(environment), randomBytes);
}

/** Whether `text` is a well-formed client secret of `environment` whose checksum holds. */
export function isWellFormedClientSecret(text: string, environment: string): boolean {
  return isWellFormedSecret(text, prefixOf(environment));
}

/** The first characters of a secret that identify it to a person, never enough to use it: `pcs_live_AbCd`. */
export function startOfClientSecret(secret: string): string {
  return secret.slice(0, secret.indexOf("_", 4) + 5);
}
