import { constantTimeEqual } from "../crypto/random.js";
import { otpauth } from "../dependencies.js";

/** The TOTP parameters Portcullis uses (TOTP-3): 30-second steps, 6 digits, HMAC-SHA1. */
export const totpPeriodSeconds = 30;
export const totpDigits = 6;
/** The length of a TOTP secret in bytes (TOTP-2). */
export const totpSecretBytes = 20;

/** The hash functions of RFC 4226 and RFC 6238. */
export type HotpAlgorithm = "SHA1" | "SHA256" | "SHA512";

/** Refuses a secret that is empty or shorter than 20 bytes (TOTP-2). */
function assertSecret(secret: Uint8Array): void {
  if (secret.length < totpSecretBytes) throw new RangeError("A TOTP secret must be at least 20 bytes");
}

type Otpauth = Awaited<ReturnType<typeof otpauth>>;

function hotpWith(
  { HOTP, Secret }: Otpauth,
  secret: Uint8Array,
  counter: number,
  digits: number,
  algorithm: HotpAlgorithm,
): string {
  return HOTP.generate({ secret: new Secret({ buffer: new Uint8Array(secret).buffer }), counter, digits, algorithm });
}

/** The HOTP value of `counter` (RFC 4226 section 5.3). */
export async function hotp(
  secret: Uint8Array,
  counter: number,
  digits = totpDigits,
  algorithm: HotpAlgorithm = "SHA1",
): Promise<string> {
  assertSecret(secret);
  return hotpWith(await otpauth(), secret, counter, digits, algorithm);
}

/** The time step of an instant (RFC 6238 section 4.2). */
export function totpStep(epochMs: number): number {
  return Math.floor(epochMs / 1000 / totpPeriodSeconds);
}

/**
 * The earliest step whose code equals `code`, within `window` steps either side of now
 * (TOTP-3), or null. Every candidate is a string of six ASCII digits compared in constant
 * time, so nothing else can match.
 */
export async function matchTotpStep(secret: Uint8Array, code: string, epochMs: number, window: 0 | 1): Promise<number | null> {
  assertSecret(secret);
  const lib = await otpauth();
  const current = totpStep(epochMs);
  let matched: number | null = null;
  for (let step = current - window; step <= current + window; step += 1) {
    if (constantTimeEqual(hotpWith(lib, secret, step, totpDigits, "SHA1"), code) && matched === null) matched = step;
  }
  return matched;
}

/** The `otpauth://` URI an authenticator app scans, and the secret in base32 for typing in. */
export async function totpEnrolment(
  secret: Uint8Array,
  issuer: string,
  username: string,
): Promise<{ secret: string; otpauthUrl: string }> {
  assertSecret(secret);
  const { Secret, TOTP } = await otpauth();
  const encoded = new Secret({ buffer: new Uint8Array(secret).buffer });
  const uri = new TOTP({
    issuer,
    label: username,
    secret: encoded,
    digits: totpDigits,
    period: totpPeriodSeconds,
    algorithm: "SHA1",
  });
  return { secret: encoded.base32, otpauthUrl: uri.toString() };
}
