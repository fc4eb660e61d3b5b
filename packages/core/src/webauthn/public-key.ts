import { type JsonWebKey, createPublicKey } from "node:crypto";
import { onFirstUse } from "../dependencies.js";

/** `@simplewebauthn/server/helpers`, for its COSE key decoder; loaded by the first registration. */
const helpers = onFirstUse(() => import("@simplewebauthn/server/helpers"));

/** The smallest RSA modulus accepted, in bits: RS256 passkeys (Windows Hello, TPMs) use 2048. */
export const minRsaModulusBits = 2048;
/** The largest RSA modulus accepted, in bits: every signature check costs in proportion to it. */
export const maxRsaModulusBits = 8192;

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array;
const isCoordinate = (value: unknown): value is Uint8Array => isBytes(value) && value.length === 32;

/**
 * The JWK of a COSE key (RFC 9053 §7: kty is label 1; crv or n is -1; x or e is -2; y is -3)
 * with the key type and curve its algorithm requires, or why it has not.
 */
function toJwk(key: Map<unknown, unknown>, algorithm: number): JsonWebKey | string {
  const [keyType, crvOrN, xOrE, y] = [key.get(1), key.get(-1), key.get(-2), key.get(-3)];
  if (algorithm === -7) {
    if (keyType !== 2 || crvOrN !== 1 || !isCoordinate(xOrE) || !isCoordinate(y)) {
      return "ES256 needs an EC2 key on P-256 with x and y of 32 bytes";
    }
    return { kty: "EC", crv: "P-256", x: base64url(xOrE), y: base64url(y) };
  }
  if (algorithm === -8) {
    if (keyType !== 1 || crvOrN !== 6 || !isCoordinate(xOrE)) return "EdDSA needs an OKP key on Ed25519 with x of 32 bytes";
    return { kty: "OKP", crv: "Ed25519", x: base64url(xOrE) };
  }
  if (keyType !== 3 || !isBytes(crvOrN) || !isBytes(xOrE)) return "RS256 needs an RSA key with n and e";
  if ((crvOrN.at(-1) ?? 0) % 2 === 0) return "an RSA modulus must be odd";
  return { kty: "RSA", n: base64url(crvOrN), e: base64url(xOrE) };
}

/**
 * Says why a credential public key (the COSE_Key of the attested credential data) cannot verify
 * a signature, or null when it can. Its algorithm must be one of `algorithms` (ES256 -7, EdDSA
 * -8 and RS256 -257 are known), with the key that algorithm requires, which node:crypto imports:
 *
 * - ES256: an EC2 key on P-256, x and y of 32 bytes each, a point on the curve;
 * - EdDSA: an OKP key on Ed25519, x of 32 bytes;
 * - RS256: an RSA key whose modulus is odd and of {@link minRsaModulusBits} to
 *   {@link maxRsaModulusBits} bits, and whose exponent is odd, at least 3 and under 2^256.
 *
 * `@simplewebauthn/server` checks the algorithm at registration but not the key: with `none`
 * attestation nothing is signed then, and a key that never verifies would be stored (WA-2). The
 * answer names the fault, never the key, and is meant for logs.
 */
export async function publicKeyProblem(coseKey: Uint8Array, algorithms: readonly number[]): Promise<string | null> {
  let key: unknown;
  try {
    key = (await helpers()).decodeCredentialPublicKey(new Uint8Array(coseKey));
  } catch {
    return "the public key is not CBOR";
  }
  if (!(key instanceof Map)) return "the public key is not a COSE key";
  const algorithm = algorithms.find((offered) => offered === key.get(3) && [-7, -8, -257].includes(offered));
  if (algorithm === undefined) return `the public key's algorithm ${String(key.get(3))} was not offered`;
  const jwk = toJwk(key, algorithm);
  if (typeof jwk === "string") return jwk;
  let details: ReturnType<typeof createPublicKey>["asymmetricKeyDetails"];
  try {
    details = createPublicKey({ key: jwk, format: "jwk" }).asymmetricKeyDetails;
  } catch {
    return `node:crypto cannot import the ${jwk.kty} key (for EC2, a point off the curve)`;
  }
  if (jwk.kty !== "RSA") return null;
  const { modulusLength = 0, publicExponent = 0n } = details ?? {};
  if (modulusLength < minRsaModulusBits || modulusLength > maxRsaModulusBits) {
    return `an RSA modulus of ${modulusLength} bits, outside ${minRsaModulusBits} to ${maxRsaModulusBits}`;
  }
  if (publicExponent < 3n || publicExponent % 2n === 0n || publicExponent > 2n ** 256n - 1n) {
    return "an RSA exponent must be odd, at least 3 and under 2^256";
  }
  return null;
}
