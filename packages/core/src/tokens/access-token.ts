import { type JWTPayload, SignJWT, jwtVerify } from "jose";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AuthMethod } from "../storage/types.js";
import type { TokenKey, TokenKeys } from "./keys.js";

/** The claims of a Portcullis access token (contract: Tokens). */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  aud: string;
  sub: string;
  iat: number;
  exp: number;
  jti: string;
  /** The session the token belongs to. */
  sid: string;
  /** The user's token version when the token was minted. */
  tv: number;
  roles: string[];
  amr: AuthMethod[];
}

/** Signs access-token claims with the current key, header `typ: at+jwt` and its `kid`. */
export async function signAccessToken(keys: TokenKeys, claims: AccessTokenClaims): Promise<string> {
  const { kid, alg, signKey } = keys.signing;
  return new SignJWT(claims).setProtectedHeader({ alg, kid, typ: "at+jwt" }).sign(await signKey);
}

/** What verification checks the token against. */
export interface VerifyExpectations {
  keys: TokenKeys;
  issuer: string;
  audience: string;
  /** Epoch milliseconds. */
  now: number;
  clockToleranceSeconds: number;
}

const invalidToken = (cause?: unknown) => new AuthError(ErrorCode.InvalidToken, undefined, { cause });

/**
 * Verifies an access token's signature and claims (AT-1 … AT-4): the `kid` must name a
 * configured key and the `alg` must be that key's own, so `none`, HS256-with-a-public-key and
 * headers such as `jku`, `jwk`, `x5u` or `x5c` never choose a key; unknown `crit` is refused;
 * `typ`, `iss` and `aud` must match exactly (`aud` one string, not a list holding it); `exp`
 * is required. Every failure is {@link AuthError} 40101 with the cause kept.
 */
export async function verifyAccessTokenClaims(token: string, expected: VerifyExpectations): Promise<AccessTokenClaims> {
  // The header is attacker JSON: a `kid` that is not one of the configured strings selects nothing (AT-2).
  const byKid: ReadonlyMap<unknown, TokenKey> = expected.keys.verifying;
  try {
    const { payload, protectedHeader } = await jwtVerify(
      token,
      (header) => {
        const selected = byKid.get(header.kid);
        if (!selected || header.alg !== selected.alg) throw invalidToken();
        return selected.verifyKey;
      },
      {
        algorithms: [...new Set([...expected.keys.verifying.values()].map((key) => key.alg))],
        issuer: expected.issuer,
        audience: expected.audience,
        typ: "at+jwt",
        requiredClaims: ["exp", "iat", "sub", "jti", "sid", "tv"],
        currentDate: new Date(expected.now),
        clockTolerance: expected.clockToleranceSeconds,
      },
    );
    // jose also accepts "application/at+jwt" and other casings, and an `aud` list that merely
    // contains the audience; AT-4 asks for the exact values.
    if (protectedHeader.typ !== "at+jwt" || payload.aud !== expected.audience || !isAccessTokenClaims(payload)) {
      throw invalidToken();
    }
    return payload;
  } catch (error) {
    throw error instanceof AuthError ? error : invalidToken(error);
  }
}

function isAccessTokenClaims(payload: JWTPayload): payload is AccessTokenClaims {
  const claims = payload as Partial<AccessTokenClaims>;
  return (
    typeof claims.sub === "string" &&
    typeof claims.sid === "string" &&
    typeof claims.jti === "string" &&
    Number.isSafeInteger(claims.tv) &&
    Array.isArray(claims.roles) &&
    claims.roles.every((role) => typeof role === "string") &&
    Array.isArray(claims.amr) &&
    claims.amr.every((method) => typeof method === "string")
  );
}
