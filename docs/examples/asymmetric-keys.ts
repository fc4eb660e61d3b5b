import { type Auth, type Storage, createAuth } from "@portcullis/core";
import { createRemoteJWKSet, jwtVerify } from "jose";

/** The keys of one deployment: the current Ed25519 private key, and public keys of earlier ones. */
export interface SigningKeys {
  /** PKCS#8 PEM of the current private key. */
  privateKey: string;
  /** SPKI PEM of keys that signed tokens still in circulation. */
  previousPublicKeys?: string[];
}

/**
 * An auth instance that signs access tokens with EdDSA (Ed25519) and publishes the public keys
 * at `/.well-known/jwks.json`. To rotate: make a new key the current one and move the old
 * public key to `previousPublicKeys` for at least one access-token lifetime (15 minutes).
 */
export function createAuthWithEdDSA(storage: Storage, keys: SigningKeys): Auth {
  return createAuth({
    storage,
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: {
      signing: { alg: "EdDSA", privateKey: keys.privateKey },
      previousSigning: (keys.previousPublicKeys ?? []).map((publicKey) => ({ alg: "EdDSA" as const, publicKey })),
      encryption: process.env.AUTH_ENCRYPTION_KEY ?? "",
    },
  });
}

/**
 * How another service checks these tokens with the published key set and jose. It checks the
 * signature and claims only: a revoked token is accepted until it expires, because only
 * `verifyAccessToken` (or `requireAuth`) consults the session and the token version.
 */
export async function verifyWithJwks(token: string, jwksUrl: URL): Promise<{ sub?: string; roles?: unknown }> {
  const keySet = createRemoteJWKSet(jwksUrl);
  const { payload } = await jwtVerify(token, keySet, {
    issuer: "https://api.example.com",
    audience: "example-api",
    typ: "at+jwt",
    algorithms: ["EdDSA"],
  });
  return payload as { sub?: string; roles?: unknown };
}
