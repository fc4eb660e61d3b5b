import { jose } from "../dependencies.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AmrValue } from "../step-up/amr.js";
import type { FieldValue } from "../user-fields/field.js";
import type { AccessUser, RegisteredFields } from "../user-fields/inference.js";
import type { TokenKey, TokenKeys } from "./keys.js";

/** The claims of a Portcullis access token (contract: Tokens). */
export interface AccessTokenClaims {
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
  /** How the session was proven (RFC 8176 values; STUP-1): by its sign-in, or its latest re-authentication. */
  amr: AmrValue[];
  /**
   * When `amr` was proven, epoch seconds (STUP-1). Absent only from tokens of releases before
   * it was added, which {@link AccessContext} reads as 0: older than any `maxAge`.
   */
  auth_time?: number;
  nbf?: number;
  /** The additional user fields declared `inToken`, by name; absent when none is declared. */
  fields?: Record<string, FieldValue>;
  /** The id of the session's active organization (OR-7); absent when none is active. */
  org?: string;
  /** The member's roles in `org`; present exactly when `org` is. */
  org_roles?: string[];
  /** The administrator acting as `sub` in an impersonated session (RFC 8693 §4.1; IMP-1); absent otherwise. */
  act?: { sub: string };
  /** Claims a token may carry beyond these; Portcullis signs none. */
  [claim: string]: unknown;
}

/**
 * Who a verified access token speaks for: what `requireAuth` puts on the request. It is frozen,
 * arrays and claims included: the same object answers every request that presents the same
 * token, so no handler can change what the next one sees. `Fields` is the auth instance's field
 * declaration: by default the {@link Register registered} one's.
 */
export interface AccessContext<Fields = RegisteredFields> {
  /** What tells it from an API key's context (`ApiKeyContext`, `kind: "api_key"`) on a route that accepts both. */
  readonly kind: "access_token";
  readonly userId: string;
  /**
   * The user as the token tells it: `id`, `roles`, and the additional fields declared `inToken`
   * (read from the token's `fields` claim, defaults filled in; no storage read). A field changed
   * since the token was minted shows its new value from the next refresh on.
   */
  readonly user: AccessUser<Fields>;
  readonly sessionId: string;
  readonly roles: readonly string[];
  /**
   * How the session was proven (RFC 8176 values: `pwd`, `otp`, `hwk`, `swk`, `user`, `fed`, and
   * `mfa` when two factors were): by the sign-in that began it, or by its latest re-authentication
   * (STUP-1). `requireAuth`'s `amr` and `secondFactor` options read it.
   */
  readonly amr: readonly AmrValue[];
  /**
   * When `amr` was proven, epoch seconds (the `auth_time` claim; STUP-1): the sign-in that began
   * the session, or its latest re-authentication. `requireAuth`'s `maxAge` option reads it. 0 for a
   * token minted before tokens carried it.
   */
  readonly authTime: number;
  readonly tokenVersion: number;
  /**
   * The session's active organization and the member's roles there (the `org` and `org_roles`
   * claims; OR-7), or null when none is active. `requireAuth`'s `org` option reads it. A token
   * whose membership ended or changed is refused (40101), and its refresh carries the current one.
   */
  readonly org: ActiveOrganization | null;
  /**
   * The administrator acting as the user, in a session an administrator began to impersonate them
   * (the `act` claim; IMP-1); null in the user's own sessions. Such a session cannot change
   * credentials or second factors; a route of yours may refuse it or record who acted.
   */
  readonly actor: { readonly userId: string } | null;
  readonly claims: Readonly<AccessTokenClaims>;
}

/** An access token's organization: its id and the member's roles in it (OR-7). */
export interface ActiveOrganization {
  readonly id: string;
  readonly roles: readonly string[];
}

/** Signs access-token claims with the current key, header `typ: at+jwt` and its `kid`. */
export async function signAccessToken(keys: TokenKeys, claims: AccessTokenClaims): Promise<string> {
  return keys.signing.sign(claims);
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
 * headers such as `jku`, `jwk`, `x5u` or `x5c` never choose a key; any `crit` is refused (jose
 * would accept `b64`);
 * `typ`, `iss` and `aud` must match exactly (`aud` one string, not a list holding it); `exp`
 * is required and checked, like `nbf`, against `now` with the clock tolerance. Every failure
 * is {@link AuthError} 40101 with the cause kept. Signatures are checked by jose.
 */
export async function verifyAccessTokenClaims(token: string, expected: VerifyExpectations): Promise<AccessTokenClaims> {
  return verifyTokenClaims(token, expected, isAccessTokenClaims);
}

/**
 * Verifies a token this instance signed, as {@link verifyAccessTokenClaims} does, for claims of the
 * shape `isShape` accepts: a person's access token, or a service account's (SA-4), whose claims
 * differ so that neither passes for the other.
 */
export async function verifyTokenClaims<T extends { iss: string; aud: string; exp: number; nbf?: number }>(
  token: string,
  expected: VerifyExpectations,
  isShape: (payload: unknown) => payload is T,
): Promise<T> {
  // The header is attacker JSON: a `kid` that is not one of the configured strings selects nothing (AT-2).
  const byKid: ReadonlyMap<unknown, TokenKey> = expected.keys.verifying;
  let verified: Awaited<ReturnType<TokenKey["verifySignature"]>>;
  try {
    const header = (await jose()).decodeProtectedHeader(token);
    const selected = byKid.get(header.kid);
    // The key's verifier accepts its own algorithm only: a header naming another fails there (AT-1).
    if (!selected || header.crit !== undefined) throw invalidToken();
    verified = await selected.verifySignature(token);
  } catch (error) {
    throw error instanceof AuthError ? error : invalidToken(error);
  }
  const { header, payload } = verified;
  if (header.typ !== "at+jwt" || !isShape(payload)) throw invalidToken();
  if (payload.iss !== expected.issuer) throw invalidToken(new ClaimMismatch("token_issuer", expected.issuer, payload.iss));
  if (payload.aud !== expected.audience) throw invalidToken(new ClaimMismatch("token_audience", expected.audience, payload.aud));
  if (!isCurrent(payload, expected.now, expected.clockToleranceSeconds)) throw invalidToken();
  return payload;
}

/**
 * The cause of a 40101 for a token signed with a configured key whose `iss` or `aud` is not
 * this service's: what the operator is told (`check.failed`), since it usually means two
 * services share a key but not their settings.
 */
export class ClaimMismatch extends Error {
  override readonly name = "ClaimMismatch";
  readonly check: "token_issuer" | "token_audience";
  readonly expected: string;
  readonly received: string | null;

  constructor(check: "token_issuer" | "token_audience", expected: string, received: unknown) {
    super(`The token's ${check === "token_issuer" ? "iss" : "aud"} is not the configured one`);
    this.check = check;
    this.expected = expected;
    this.received = typeof received === "string" ? received : received === undefined ? null : JSON.stringify(received);
  }
}

/** `exp` not yet passed and `nbf`, if any, reached, both within the tolerance, in whole seconds as RFC 7519 counts them (AT-3). */
function isCurrent(claims: { exp: number; nbf?: number }, now: number, toleranceSeconds: number): boolean {
  const nowSeconds = Math.floor(now / 1000);
  if (claims.exp <= nowSeconds - toleranceSeconds) return false;
  return claims.nbf === undefined || (Number.isFinite(claims.nbf) && claims.nbf <= nowSeconds + toleranceSeconds);
}

/**
 * Whether a payload has the claims every token this instance signs has, of their types: `sub`,
 * `jti`, `iat`, `exp`, `tv` and `roles`. A person's token and a service account's add their own.
 */
export function hasCommonClaims(
  payload: unknown,
): payload is Pick<AccessTokenClaims, "sub" | "jti" | "iat" | "exp" | "tv" | "roles"> {
  const claims = payload as Partial<AccessTokenClaims>;
  return (
    typeof payload === "object" &&
    payload !== null &&
    typeof claims.sub === "string" &&
    typeof claims.jti === "string" &&
    Number.isFinite(claims.iat) &&
    Number.isFinite(claims.exp) &&
    Number.isSafeInteger(claims.tv) &&
    Array.isArray(claims.roles) &&
    claims.roles.every((role) => typeof role === "string")
  );
}

function isAccessTokenClaims(payload: unknown): payload is AccessTokenClaims {
  const claims = payload as Partial<AccessTokenClaims>;
  return (
    hasCommonClaims(payload) &&
    typeof claims.sid === "string" &&
    Array.isArray(claims.amr) &&
    claims.amr.every((method) => typeof method === "string") &&
    (claims.auth_time === undefined || Number.isFinite(claims.auth_time)) &&
    (claims.act === undefined || (typeof claims.act === "object" && claims.act !== null && typeof claims.act.sub === "string")) &&
    (claims.org === undefined
      ? claims.org_roles === undefined
      : typeof claims.org === "string" &&
        Array.isArray(claims.org_roles) &&
        claims.org_roles.every((role) => typeof role === "string"))
  );
}
