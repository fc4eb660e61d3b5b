import type { Auth } from "../auth.js";
import { sha256 } from "../crypto/random.js";
import { jose } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { PublicJwk } from "../storage/types.js";

/** The `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2). */
export const jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** The JWK members a private key has and a public one never does. */
const privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

const algorithmsOf: Record<string, readonly PublicJwk["alg"][]> = {
  RSA: ["RS256", "PS256"],
  "EC:P-256": ["ES256"],
  "EC:P-384": ["ES384"],
  "OKP:Ed25519": ["EdDSA"],
};

const invalidKey = (why: string) => new AuthError(ErrorCode.ValidationFailed, `jwk ${why}`);

/**
 * Reads a public key a service account registers for `private_key_jwt` (SA-2): an RSA key of
 * 2048 bits or more (`alg` RS256 or PS256, which it must name), an EC key on P-256 (ES256) or
 * P-384 (ES384), or an Ed25519 key (EdDSA); never a private key (a member such as `d` is
 * refused, so a private key pasted by mistake is not stored). Its `kid` is kept, or set to its
 * RFC 7638 thumbprint. The stored key holds only the members named here.
 *
 * @throws {AuthError} 40001 missing, 42200 not such a public key.
 */
export async function readPublicJwk(value: unknown): Promise<PublicJwk> {
  if (value === undefined || value === null) throw new AuthError(ErrorCode.MissingParameter, "jwk is required");
  if (typeof value !== "object" || Array.isArray(value))
    throw new AuthError(ErrorCode.MalformedParameter, "jwk must be an object");
  const jwk = value as Record<string, unknown>;
  if (privateMembers.some((member) => member in jwk)) {
    throw invalidKey("must be a public key: it holds a private member; register the public half only");
  }
  const family = jwk.kty === "RSA" ? "RSA" : `${String(jwk.kty)}:${String(jwk.crv)}`;
  const allowed = algorithmsOf[family];
  if (allowed === undefined) throw invalidKey("must be an RSA key, an EC key on P-256 or P-384, or an Ed25519 key");
  const alg = jwk.alg ?? (allowed.length === 1 ? allowed[0] : undefined);
  if (!allowed.includes(alg as PublicJwk["alg"])) {
    throw invalidKey(`must name its alg, one of ${allowed.join(", ")}`);
  }
  const members = jwk.kty === "RSA" ? ["n", "e"] : jwk.kty === "EC" ? ["x", "y"] : ["x"];
  if (!members.every((member) => typeof jwk[member] === "string" && /^[A-Za-z0-9_-]+$/.test(jwk[member] as string))) {
    throw invalidKey(`must hold ${members.join(" and ")} in base64url`);
  }
  if (jwk.kty === "RSA" && Buffer.from(jwk.n as string, "base64url").length < 256) {
    throw invalidKey("must be an RSA key of 2048 bits or more");
  }
  if (jwk.kid !== undefined && (typeof jwk.kid !== "string" || !/^[\x21-\x7e]{1,128}$/.test(jwk.kid))) {
    throw invalidKey("kid must be 1 to 128 visible ASCII characters");
  }
  const publicJwk = Object.fromEntries([
    ["kty", jwk.kty],
    ...(jwk.crv === undefined ? [] : [["crv", jwk.crv]]),
    ...members.map((member) => [member, jwk[member]]),
  ]) as Omit<PublicJwk, "kid" | "alg">;
  const { importJWK, calculateJwkThumbprint } = await jose();
  try {
    await importJWK({ ...publicJwk, alg: alg as string }, alg as string);
  } catch {
    throw invalidKey("is not a valid public key");
  }
  const kid = (jwk.kid as string | undefined) ?? (await calculateJwkThumbprint(publicJwk));
  return { ...publicJwk, kid, alg: alg as PublicJwk["alg"] };
}

/** What {@link verifyClientAssertion} checks an assertion against. */
export interface AssertionExpectations {
  /** The `client_id` the request names, when it names one: it must be the assertion's `iss` and `sub`. */
  clientId: string | undefined;
  /** The accepted `aud` values: the issuer and the token endpoint's URL. */
  audiences: readonly string[];
}

/** The claims of a client assertion that were checked. */
interface AssertionClaims {
  iss: string;
  sub: string;
  jti: string;
  exp: number;
}

/** The longest lifetime an assertion may claim: 5 minutes, so a captured one is soon useless (and its `jti` kept no longer). */
const maxAssertionLifetimeSeconds = 300;

/**
 * The client an assertion claims to be (its `sub`), read without trusting it: which account's
 * keys to check it with. Null for what is not a JWT naming a client.
 */
export async function assertedClientId(assertion: string): Promise<string | null> {
  try {
    const claims = (await jose()).decodeJwt(assertion);
    return typeof claims.sub === "string" && claims.sub !== "" && claims.iss === claims.sub ? claims.sub : null;
  } catch {
    return null;
  }
}

/**
 * Verifies a `private_key_jwt` client assertion (RFC 7523 §3, SA-3) with one of the account's
 * registered keys: the key its `kid` names (or each when it names none), under that key's own
 * `alg` only (never `none` nor an HMAC); `iss` and `sub` the client; `aud` the issuer or the
 * token endpoint; `exp` required, at most 5 minutes ahead; `nbf` and `iat` not in the future;
 * `jti` required and accepted once (kept in the counters store until the assertion expires), so a
 * captured assertion cannot be replayed. Answers the key that verified it.
 *
 * @throws {AuthError} 40101 for any assertion that fails.
 */
export async function verifyClientAssertion(
  auth: Auth,
  assertion: string,
  keys: readonly { id: string; publicJwk: PublicJwk }[],
  expected: AssertionExpectations & { accountId: string },
): Promise<string> {
  const { compactVerify, decodeProtectedHeader, importJWK } = await jose();
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw invalidAssertion();
  }
  if (header.crit !== undefined) throw invalidAssertion();
  const candidates = keys.filter(
    ({ publicJwk }) =>
      signatureAlgorithmsOf(publicJwk).includes(header.alg as string) &&
      (header.kid === undefined || header.kid === publicJwk.kid),
  );
  for (const { id, publicJwk } of candidates) {
    let payload: Uint8Array;
    try {
      const key = await importJWK(publicJwk, publicJwk.alg);
      ({ payload } = await compactVerify(assertion, key, { algorithms: signatureAlgorithmsOf(publicJwk) }));
    } catch {
      continue;
    }
    const claims = checkedClaims(auth, payload, expected);
    await spendAssertionId(auth, expected.accountId, claims);
    return id;
  }
  throw invalidAssertion();
}

const invalidAssertion = () => new AuthError(ErrorCode.InvalidToken, "The client assertion is invalid");

/**
 * The JWS `alg` values a registered key verifies: its own, and for an Ed25519 key (`EdDSA`) also
 * RFC 9864's fully-specified `Ed25519`, which clients such as oauth4webapi sign with.
 */
function signatureAlgorithmsOf(publicJwk: PublicJwk): string[] {
  return publicJwk.alg === "EdDSA" ? ["EdDSA", "Ed25519"] : [publicJwk.alg];
}

function checkedClaims(
  auth: Auth,
  payload: Uint8Array,
  expected: AssertionExpectations & { accountId: string },
): AssertionClaims {
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(payload).toString("utf8")) as Record<string, unknown>;
  } catch {
    throw invalidAssertion();
  }
  const now = Math.floor(auth.now() / 1000);
  const tolerance = auth.config.clockToleranceSeconds;
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  const valid =
    claims.iss === expected.accountId &&
    claims.sub === expected.accountId &&
    (expected.clientId === undefined || expected.clientId === expected.accountId) &&
    audiences.length > 0 &&
    audiences.some((aud) => typeof aud === "string" && expected.audiences.includes(aud)) &&
    typeof claims.jti === "string" &&
    claims.jti.length > 0 &&
    claims.jti.length <= 256 &&
    typeof claims.exp === "number" &&
    Number.isFinite(claims.exp) &&
    claims.exp > now - tolerance &&
    claims.exp <= now + maxAssertionLifetimeSeconds + tolerance &&
    notInFuture(claims.nbf, now, tolerance) &&
    notInFuture(claims.iat, now, tolerance);
  if (!valid) throw invalidAssertion();
  return claims as unknown as AssertionClaims;
}

function notInFuture(value: unknown, now: number, tolerance: number): boolean {
  return value === undefined || (typeof value === "number" && Number.isFinite(value) && value <= now + tolerance);
}

/** Records the assertion's `jti` as spent until it expires; a second use is refused (RFC 7523 §3 item 7). */
async function spendAssertionId(auth: Auth, accountId: string, claims: AssertionClaims): Promise<void> {
  const now = auth.now();
  const windowMs = Math.max(1000, (claims.exp + auth.config.clockToleranceSeconds) * 1000 - now);
  const hit = await auth.storage.counters.hit(`assertion:${sha256(`${accountId}\n${claims.jti}`)}`, 1, windowMs, now);
  if (!hit.allowed) throw invalidAssertion();
}
