import { type KeyObject, createHash, createPrivateKey, createPublicKey, createSecretKey, type webcrypto } from "node:crypto";
import { jose, onFirstUse } from "../dependencies.js";
import type { AsymmetricSigningKey, JWK, SigningSecrets, VerificationKey } from "./token-config.js";

/** A signature algorithm Portcullis signs or accepts access tokens with. */
export type TokenAlgorithm = "HS256" | "EdDSA" | "ES256";

/** One configured key, selected by `kid` (AT-2). */
export interface TokenKey {
  kid: string;
  alg: TokenAlgorithm;
  /**
   * Checks a compact JWS's signature with this key under this algorithm only (jose's
   * `compactVerify`, with the key imported into Web Crypto once); it reads the header and
   * payload but checks no claim.
   *
   * @throws jose's `JWSSignatureVerificationFailed`, `JOSEAlgNotAllowed` or `JWSInvalid` for
   *   anything but a good signature, a `SyntaxError` for a payload that is not JSON.
   */
  verifySignature: (token: string) => Promise<{ header: Record<string, unknown>; payload: unknown }>;
  /** The public JWK, published at `/.well-known/jwks.json` (asymmetric keys only). */
  publicJwk: JWK | null;
}

/** The keys of an auth instance: one signs, all verify. */
export interface TokenKeys {
  signing: TokenKey & {
    /** Signs claims, which carry their own `iat`, with the header `alg`, `typ: at+jwt` and `kid`. */
    sign: (claims: object) => Promise<string>;
  };
  /** kid → key: the only keys a token may name (AT-2). */
  verifying: Map<string, TokenKey>;
  /** The JSON Web Key Set, or null when tokens are signed with an HMAC secret. */
  jwks: { keys: JWK[] } | null;
}

const minimumSecretBytes = 32;

function configError(message: string): never {
  throw new TypeError(`Portcullis configuration: ${message}`);
}

function hmacKey(secret: string, what: string): { kid: string; alg: "HS256"; key: KeyObject } {
  const bytes = Buffer.from(secret, "utf8");
  if (bytes.length < minimumSecretBytes) {
    configError(
      `${what} must be at least 32 bytes (256 bits) of random text (AT-5); got ${bytes.length} bytes. Generate one with: node -p "require('crypto').randomBytes(32).toString('base64url')"`,
    );
  }
  const kid = `hs-${createHash("sha256").update(bytes).digest("base64url").slice(0, 16)}`;
  return { kid, alg: "HS256", key: createSecretKey(bytes) };
}

/** The Web Crypto parameters of each algorithm's keys, as jose expects them. */
const webCryptoAlgorithms = {
  HS256: { name: "HMAC", hash: "SHA-256" },
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  EdDSA: { name: "Ed25519" },
} as const;

/**
 * `key` imported into Web Crypto for `alg` and one usage, at its first use and then kept: jose
 * would import a secret given as bytes on every call.
 */
function importedOnce(alg: TokenAlgorithm, key: KeyObject, usage: "sign" | "verify"): () => Promise<webcrypto.CryptoKey> {
  return onFirstUse(() =>
    key.type === "secret"
      ? crypto.subtle.importKey("raw", key.export(), webCryptoAlgorithms[alg], false, [usage])
      : crypto.subtle.importKey("jwk", key.export({ format: "jwk" }), webCryptoAlgorithms[alg], false, [usage]),
  );
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A key's signature check, pinned to its algorithm; claims are the caller's to check. */
function signatureVerifier(alg: TokenAlgorithm, key: KeyObject): TokenKey["verifySignature"] {
  const cryptoKey = importedOnce(alg, key, "verify");
  return async (token) => {
    const { compactVerify } = await jose();
    const { payload, protectedHeader } = await compactVerify(token, await cryptoKey(), { algorithms: [alg] });
    return { header: protectedHeader, payload: JSON.parse(utf8.decode(payload)) };
  };
}

function hmacVerificationKey({ kid, alg, key }: ReturnType<typeof hmacKey>): TokenKey {
  return { kid, alg, verifySignature: signatureVerifier(alg, key), publicJwk: null };
}

function checkCurve(alg: "EdDSA" | "ES256", key: KeyObject, what: string): void {
  // Only EC keys have a namedCurve; prime256v1 is OpenSSL's name for P-256.
  const ok = alg === "EdDSA" ? key.asymmetricKeyType === "ed25519" : key.asymmetricKeyDetails?.namedCurve === "prime256v1";
  if (!ok) configError(`${what} must be an ${alg === "EdDSA" ? "Ed25519" : "EC P-256"} key for alg ${alg}`);
}

function readKey(input: string | JWK, kind: "private" | "public", what: string): KeyObject {
  try {
    const source = typeof input === "string" ? input : { key: input as import("node:crypto").JsonWebKey, format: "jwk" as const };
    return kind === "private" ? createPrivateKey(source) : createPublicKey(source);
  } catch (cause) {
    return configError(`${what} is not a readable ${kind} key (PEM or JWK): ${(cause as Error).message}`);
  }
}

/** The RFC 7638 thumbprint of an OKP or EC public key: SHA-256 over its required members, sorted. */
function jwkThumbprint(jwk: JWK): string {
  // An OKP key has no `y`: JSON.stringify leaves the undefined member out.
  const { crv, kty, x, y } = jwk;
  return createHash("sha256").update(JSON.stringify({ crv, kty, x, y })).digest("base64url");
}

function asymmetricKey(config: { alg: "EdDSA" | "ES256"; kid?: string }, publicKey: KeyObject, what: string): TokenKey {
  if (config.alg !== "EdDSA" && config.alg !== "ES256") configError(`${what}.alg must be "EdDSA" or "ES256"`);
  checkCurve(config.alg, publicKey, what);
  const jwk = publicKey.export({ format: "jwk" }) as JWK;
  const kid = config.kid ?? jwkThumbprint(jwk);
  return {
    kid,
    alg: config.alg,
    verifySignature: signatureVerifier(config.alg, publicKey),
    publicJwk: { ...jwk, kid, alg: config.alg, use: "sig" },
  };
}

function signer(alg: TokenAlgorithm, kid: string, key: KeyObject): TokenKeys["signing"]["sign"] {
  const cryptoKey = importedOnce(alg, key, "sign");
  const header = { alg, typ: "at+jwt", kid };
  const encoder = new TextEncoder();
  return async (claims) => {
    const { CompactSign } = await jose();
    return new CompactSign(encoder.encode(JSON.stringify(claims))).setProtectedHeader(header).sign(await cryptoKey());
  };
}

function signingKey(config: string | AsymmetricSigningKey): TokenKeys["signing"] {
  if (typeof config === "string") {
    const hmac = hmacKey(config, "secrets.signing");
    return { ...hmacVerificationKey(hmac), sign: signer(hmac.alg, hmac.kid, hmac.key) };
  }
  // Missing (undefined, null), or not an object with a privateKey.
  if (config?.privateKey === undefined) {
    return configError(
      'secrets.signing is required: an HS256 secret of at least 32 bytes, or { alg: "EdDSA" | "ES256", privateKey }',
    );
  }
  const privateKey = readKey(config.privateKey, "private", "secrets.signing.privateKey");
  const key = asymmetricKey(config, createPublicKey(privateKey), "secrets.signing");
  return { ...key, sign: signer(key.alg, key.kid, privateKey) };
}

function verificationKey(config: VerificationKey, index: number): TokenKey {
  const what = `secrets.previousSigning[${index}]`;
  if (typeof config === "string") return hmacVerificationKey(hmacKey(config, what));
  if (config === null || typeof config !== "object") {
    return configError(`${what} must be an HS256 secret, or { alg, publicKey } or { alg, privateKey } of an EdDSA or ES256 key`);
  }
  if ("privateKey" in config) return asymmetricKey(config, createPublicKey(readKey(config.privateKey, "private", what)), what);
  return asymmetricKey(config, readKey(config.publicKey, "public", what), what);
}

/** Reads and checks the configured signing and verification keys (AT-5). */
export function loadTokenKeys(secrets: SigningSecrets): TokenKeys {
  // Loaded now, off the import, so the first request does not wait for it; a failure is met again at first use.
  jose().catch(() => undefined);
  const signing = signingKey(secrets.signing);
  const previous = (secrets.previousSigning ?? []).map(verificationKey);
  const verifying = new Map<string, TokenKey>();
  // Where each kid was configured: a kid met twice names both entries (the same key listed again, or one kid given to two keys).
  const settings = new Map<string, string>();
  for (const [index, key] of [signing, ...previous].entries()) {
    const setting = index === 0 ? "secrets.signing" : `secrets.previousSigning[${index - 1}]`;
    const first = settings.get(key.kid);
    if (first !== undefined) configError(`two signing keys share the kid "${key.kid}": ${first} and ${setting}`);
    settings.set(key.kid, setting);
    verifying.set(key.kid, key);
  }
  const published = [...verifying.values()].flatMap((key) => (key.publicJwk ? [key.publicJwk] : []));
  return { signing, verifying, jwks: signing.alg === "HS256" ? null : { keys: published } };
}
