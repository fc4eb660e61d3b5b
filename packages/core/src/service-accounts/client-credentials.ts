import type { Auth } from "../auth.js";
import { constantTimeEqual, sha256 } from "../crypto/random.js";
import { AuthError, isAuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { ServiceAccountClient, ServiceAccountCredentialRecord } from "../storage/types.js";
import { takeAttempt } from "../throttle/throttle.js";
import { assertedClientId, jwtBearerAssertionType, verifyClientAssertion } from "./client-assertion.js";
import { serviceAccountsOf } from "./manage-service-accounts.js";
import { signServiceToken } from "./service-token.js";

/** The RFC 6749 §5.2 error of a refused token request. */
export type TokenErrorName =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope";

/**
 * The input of {@link issueClientCredentialsToken}: the token request's form parameters
 * (RFC 6749 §4.4.2) and its client authentication, as the HTTP layer read them.
 */
export interface ClientCredentialsInput {
  /** `grant_type`: must be `client_credentials`. */
  grantType: unknown;
  /** `scope`: space-separated scopes, some of the account's; absent for all of them. */
  scope?: unknown;
  /** The `Authorization: Basic` credentials, decoded (`client_secret_basic`, RFC 6749 §2.3.1); null without the header. */
  basic: { clientId: string; clientSecret: string } | null;
  /** `client_id` of the form, if any. */
  clientId?: unknown;
  /** `client_secret` of the form: refused (only `client_secret_basic` and `private_key_jwt` are accepted). */
  clientSecret?: unknown;
  /** `client_assertion_type` and `client_assertion` (`private_key_jwt`, RFC 7523 §2.2). */
  clientAssertionType?: unknown;
  clientAssertion?: unknown;
  /** The client address, for the throttle and events. */
  ip?: string;
}

/** A successful token response (RFC 6749 §5.1), as the route answers it. */
export interface ClientCredentialsToken {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  /** The scopes granted, space-separated. */
  scope: string;
}

/** How the request authenticated its client. */
type ClientProof =
  | { method: "client_secret_basic"; clientId: string; secret: string }
  | { method: "private_key_jwt"; clientId: string | undefined; assertion: string };

/** A refusal of the token endpoint: an {@link AuthError} whose `data.error` is the RFC 6749 error. */
export function tokenError(code: ErrorCode, error: TokenErrorName, description: string): AuthError {
  return new AuthError(code, description, { data: { error } });
}

const invalidClient = () => tokenError(ErrorCode.InvalidToken, "invalid_client", "Client authentication failed");

/** A hash no secret has, compared against when the client is unknown, so that its cost is a known client's. */
const unknownClientHash = sha256("portcullis: no such client");

/**
 * The client-credentials grant (`POST /auth/token`, RFC 6749 §4.4; SA-3): a service account
 * proves itself with a client secret in `Authorization: Basic` or a `private_key_jwt` assertion
 * signed by one of its registered keys, and gets a short access token (`serviceAccounts.tokenTtl`)
 * for the scopes asked, each one of its own (all of them when none is asked). No refresh token.
 *
 * Secrets are compared as SHA-256 digests in constant time with every secret the account holds, and
 * an unknown client costs the same work (SA-2). A disabled account, an expired secret or key, a
 * failed assertion or a replayed `jti` are all `invalid_client`, and each failure takes an attempt
 * from the address's `ip` budget (42900 once it is spent).
 *
 * @throws {AuthError} with `data.error` the RFC 6749 error: 40002/40001 `invalid_request`, 40101
 *   `invalid_client`, 40002 `unsupported_grant_type`, 42200 `invalid_scope`; 42900 throttled, 40400 off.
 */
export async function issueClientCredentialsToken(auth: Auth, input: ClientCredentialsInput): Promise<ClientCredentialsToken> {
  const store = serviceAccountsOf(auth);
  const proof = clientProofOf(input);
  const requestedScopes = scopesAsked(input.scope);
  const grantType = input.grantType;
  if (grantType === undefined || grantType === null || grantType === "") {
    throw tokenError(ErrorCode.MissingParameter, "invalid_request", "grant_type is required");
  }
  if (grantType !== "client_credentials") {
    throw tokenError(ErrorCode.MalformedParameter, "unsupported_grant_type", "Only grant_type=client_credentials is supported");
  }
  const clientId = proof.clientId ?? (await assertedClientId(proof.method === "private_key_jwt" ? proof.assertion : ""));
  const client = clientId === null ? null : await store.findServiceAccountClient(clientId);
  const credentialId = await authenticate(auth, client, proof);
  if (credentialId === null || client === null) {
    auth.emit({
      type: "service_account.token_refused",
      serviceAccountId: client?.account.id ?? null,
      reason: "invalid_client",
      at: auth.now(),
      ip: input.ip,
    });
    if (input.ip !== undefined) await takeAttempt(auth, "ip", input.ip);
    throw invalidClient();
  }
  const { account } = client;
  const scopes = requestedScopes ?? account.scopes;
  const outside = scopes.find((scope) => !account.scopes.includes(scope));
  if (outside !== undefined) {
    auth.emit({
      type: "service_account.token_refused",
      serviceAccountId: account.id,
      reason: "invalid_scope",
      at: auth.now(),
      ip: input.ip,
    });
    throw tokenError(ErrorCode.ValidationFailed, "invalid_scope", "A scope asked is not one of this client's");
  }
  const { token, expiresIn } = await signServiceToken(auth, account, scopes);
  recordUse(auth, credentialId);
  auth.emit({
    type: "service_account.token_issued",
    serviceAccountId: account.id,
    credentialId,
    scopes: [...scopes],
    at: auth.now(),
    ip: input.ip,
  });
  return { access_token: token, token_type: "Bearer", expires_in: expiresIn, scope: scopes.join(" ") };
}

/** Which client authentication the request used: exactly one of the two accepted (RFC 6749 §2.3). */
function clientProofOf(input: ClientCredentialsInput): ClientProof {
  const formClientId = formString(input.clientId, "client_id");
  const assertionType = formString(input.clientAssertionType, "client_assertion_type");
  const assertion = formString(input.clientAssertion, "client_assertion");
  if (formString(input.clientSecret, "client_secret") !== undefined) {
    throw tokenError(
      ErrorCode.MalformedParameter,
      "invalid_request",
      "Send the client secret in the Authorization header (client_secret_basic), not in the body",
    );
  }
  const asserts = assertionType !== undefined || assertion !== undefined;
  if (input.basic !== null && asserts) {
    throw tokenError(ErrorCode.MalformedParameter, "invalid_request", "Use one client authentication method, not two");
  }
  if (input.basic !== null) {
    if (formClientId !== undefined && formClientId !== input.basic.clientId) {
      throw tokenError(ErrorCode.MalformedParameter, "invalid_request", "client_id differs from the Authorization header's");
    }
    return { method: "client_secret_basic", clientId: input.basic.clientId, secret: input.basic.clientSecret };
  }
  if (!asserts) {
    throw tokenError(
      ErrorCode.InvalidToken,
      "invalid_client",
      "Client authentication is required: Authorization: Basic, or a private_key_jwt client assertion",
    );
  }
  if (assertionType !== jwtBearerAssertionType || assertion === undefined) {
    throw tokenError(
      ErrorCode.MalformedParameter,
      "invalid_request",
      `client_assertion_type must be ${jwtBearerAssertionType}, with a client_assertion`,
    );
  }
  return { method: "private_key_jwt", clientId: formClientId, assertion };
}

function formString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw tokenError(ErrorCode.MalformedParameter, "invalid_request", `${name} must be given once`);
  return value;
}

/** The scopes a request asks (RFC 6749 §3.3), or null when it asks none. */
function scopesAsked(value: unknown): string[] | null {
  const text = formString(value, "scope");
  if (text === undefined) return null;
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(text)) {
    throw tokenError(ErrorCode.ValidationFailed, "invalid_scope", "scope must be scopes separated by single spaces");
  }
  return [...new Set(text.split(" "))];
}

/** The id of the credential that proves the client, or null when none does (or the account is disabled). */
async function authenticate(auth: Auth, client: ServiceAccountClient | null, proof: ClientProof): Promise<string | null> {
  const now = auth.now();
  const live = (client?.credentials ?? []).filter((each) => each.expiresAt === null || each.expiresAt > now);
  if (proof.method === "client_secret_basic") {
    const matched = matchSecret(live, proof.secret);
    return client !== null && !client.account.disabled ? matched : null;
  }
  if (client === null || client.account.disabled) return null;
  const keys = live.flatMap((each) => (each.kind === "jwk" ? [{ id: each.id, publicJwk: each.publicJwk }] : []));
  try {
    return await verifyClientAssertion(auth, proof.assertion, keys, {
      accountId: client.account.id,
      clientId: proof.clientId,
      audiences: audiencesOf(auth),
    });
  } catch (error) {
    if (isAuthError(error, ErrorCode.InvalidToken)) return null;
    throw error;
  }
}

/**
 * The secret among `credentials` that `presented` is, compared as SHA-256 digests in constant
 * time with every one of them, and with a placeholder when there are none (SA-2): the time taken
 * tells neither which secret nor whether the client exists.
 */
function matchSecret(credentials: readonly ServiceAccountCredentialRecord[], presented: string): string | null {
  const digest = sha256(presented);
  let matched: string | null = null;
  const secrets = credentials.flatMap((each) => (each.kind === "secret" ? [each] : []));
  for (const candidate of secrets.length === 0 ? [{ id: null, secretHash: unknownClientHash }] : secrets) {
    if (constantTimeEqual(digest, candidate.secretHash)) matched = candidate.id;
  }
  return matched;
}

/** The `aud` values a client assertion may name: the issuer, and the token endpoint's URL. */
function audiencesOf(auth: Auth): string[] {
  const { issuer, basePath } = auth.config;
  const endpoint = auth.config.serviceAccounts.tokenEndpoint ?? `${new URL(issuer).origin}${basePath}/auth/token`;
  return [issuer, endpoint];
}

const useIntervalMs = 60_000;
const recorded = new WeakMap<Auth, Map<string, number>>();

/** Records a credential's use at most once a minute per instance (and per store, by its conditional write); failures go to `onInternalError`. */
function recordUse(auth: Auth, credentialId: string): void {
  const now = auth.now();
  let uses = recorded.get(auth);
  if (uses === undefined) {
    uses = new Map();
    recorded.set(auth, uses);
  }
  const last = uses.get(credentialId);
  if (last !== undefined && now - last < useIntervalMs) return;
  if (uses.size >= 10_000) uses.clear();
  uses.set(credentialId, now);
  serviceAccountsOf(auth)
    .recordServiceAccountCredentialUse(credentialId, now, useIntervalMs)
    .catch((error: unknown) => {
      try {
        auth.onInternalError(error, "service-account-credential-use");
      } catch {
        // Nobody is left to tell: the answer must not change for it.
      }
    });
}
