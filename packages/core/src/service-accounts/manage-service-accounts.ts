import { readScopes } from "../api-keys/manage-api-keys.js";
import type { Auth } from "../auth.js";
import { durationSeconds } from "../config-values.js";
import { randomId } from "../crypto/ids.js";
import { sha256 } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { checkRoles } from "../flows/create-user.js";
import { readVisibleText, requiredString } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type {
  ServiceAccountChanges,
  ServiceAccountCredentialRecord,
  ServiceAccountRecord,
  ServiceAccountStore,
} from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { revoked } from "../users/token-state.js";
import { readPublicJwk } from "./client-assertion.js";
import { newClientSecret, startOfClientSecret } from "./client-secret.js";
import { maxCredentialsOfKind } from "./service-account-config.js";
import { serviceAccountCacheId } from "./service-token.js";

/** A service account as administrators see it: its credentials described, never a secret. Times are epoch milliseconds. */
export interface ServiceAccountInfo {
  id: string;
  /** The OAuth `client_id` of the account: its id. */
  clientId: string;
  name: string;
  roles: string[];
  scopes: string[];
  disabled: boolean;
  createdAt: number;
  createdBy: string | null;
}

/** A credential of a service account as administrators see it: a secret's first characters, a key's `kid` and `alg`. */
export interface ServiceAccountCredentialInfo {
  id: string;
  kind: "secret" | "jwk";
  /** A secret's first characters (`pcs_live_AbCd`); null for a key. */
  start: string | null;
  /** A key's `kid` and `alg`; null for a secret. */
  kid: string | null;
  alg: string | null;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/** One service account with its credentials (`GET /auth/admin/service-accounts/:id`). */
export interface ServiceAccountDetails extends ServiceAccountInfo {
  credentials: ServiceAccountCredentialInfo[];
}

/** The view of a stored account. */
export function serviceAccountInfo(account: ServiceAccountRecord): ServiceAccountInfo {
  const { id, name, roles, scopes, disabled, createdAt, createdBy } = account;
  return { id, clientId: id, name, roles: [...roles], scopes: [...scopes], disabled, createdAt, createdBy };
}

/** The view of a stored credential. */
export function serviceAccountCredentialInfo(credential: ServiceAccountCredentialRecord): ServiceAccountCredentialInfo {
  const { id, kind, createdAt, expiresAt, lastUsedAt } = credential;
  return {
    id,
    kind,
    start: credential.kind === "secret" ? credential.start : null,
    kid: credential.kind === "jwk" ? credential.publicJwk.kid : null,
    alg: credential.kind === "jwk" ? credential.publicJwk.alg : null,
    createdAt,
    expiresAt,
    lastUsedAt,
  };
}

/** The service account store, or 40400 when service accounts are off: their routes answer as unknown ones. */
export function serviceAccountsOf(auth: Auth): ServiceAccountStore {
  const store = auth.config.serviceAccounts.enabled ? auth.storage.serviceAccounts : undefined;
  if (store === undefined) throw new AuthError(ErrorCode.NotFound, "Service accounts are not enabled");
  return store;
}

/** The longest service account name, in characters. */
const maxNameLength = 64;

const noSuchAccount = () => new AuthError(ErrorCode.NotFound, "No such service account");

/** Who makes an administrative change: an administrator who re-authenticates (STUP-3). */
export interface AdministratorProof extends ReauthenticationProof {
  /** The administrator (the route asks `adminRole` of their access token). */
  adminUserId: string;
}

/** Checks the administrator and their re-authentication; answers their id. */
async function proveAdministrator(auth: Auth, input: AdministratorProof): Promise<string> {
  const admin = await signedInUser(auth, input.adminUserId);
  await requireRecentAuthentication(auth, admin, input);
  return admin.id;
}

/** The input of {@link createServiceAccount}. */
export interface CreateServiceAccountInput extends AdministratorProof {
  name: string;
  /** The roles its tokens carry. Default none. */
  roles?: string[];
  /** The scopes its tokens may carry (each of `serviceAccounts.scopes` when set). Default none. */
  scopes?: string[];
}

/**
 * Makes a service account (`POST /auth/admin/service-accounts`; SA-1), by an administrator who
 * re-authenticates: a principal with no password and no sign-in, which gets tokens only at
 * `POST /auth/token` once it holds a client secret or a public key.
 *
 * @throws {AuthError} 40400 service accounts off, 40001/40100/40103 re-authentication, 42200 a bad name, roles or scopes.
 * @example
 * ```ts
 * const account = await createServiceAccount(auth, { adminUserId, sessionId, name: "billing", scopes: ["invoices:read"] });
 * ```
 */
export async function createServiceAccount(auth: Auth, input: CreateServiceAccountInput): Promise<ServiceAccountInfo> {
  const store = serviceAccountsOf(auth);
  const name = readVisibleText(input.name, "name", maxNameLength);
  const roles = checkRoles(input.roles ?? []);
  const scopes = readScopes(input.scopes, auth.config.serviceAccounts.scopes);
  const by = await proveAdministrator(auth, input);
  const now = auth.now();
  const account: ServiceAccountRecord = {
    id: randomId(auth),
    name,
    roles,
    scopes,
    disabled: false,
    tokenVersion: 0,
    createdAt: now,
    createdBy: by,
  };
  await store.createServiceAccount(account);
  auth.emit({ type: "service_account.created", serviceAccountId: account.id, by, at: now });
  return serviceAccountInfo(account);
}

/** Every service account, oldest first (`GET /auth/admin/service-accounts`). */
export async function listServiceAccounts(auth: Auth): Promise<ServiceAccountInfo[]> {
  return (await serviceAccountsOf(auth).listServiceAccounts()).map(serviceAccountInfo);
}

/**
 * One service account with its credentials (`GET /auth/admin/service-accounts/:id`).
 *
 * @throws {AuthError} 40400 no such account.
 */
export async function getServiceAccount(auth: Auth, input: { id: string }): Promise<ServiceAccountDetails> {
  const client = await serviceAccountsOf(auth).findServiceAccountClient(requiredString(input.id, "id"));
  if (client === null) throw noSuchAccount();
  return { ...serviceAccountInfo(client.account), credentials: client.credentials.map(serviceAccountCredentialInfo) };
}

/** The input of {@link updateServiceAccount}: what to change; absent fields are kept. */
export interface UpdateServiceAccountInput extends AdministratorProof {
  id: string;
  name?: string;
  roles?: string[];
  scopes?: string[];
  disabled?: boolean;
  /** End every token issued so far (each is refused from its next request), as a change of roles does. */
  endTokens?: boolean;
}

/**
 * Changes a service account (`PATCH /auth/admin/service-accounts/:id`) after the administrator
 * re-authenticates. New roles or scopes, disabling it, or `endTokens` raise its token version, so
 * every token issued before is refused from its next request (SA-4), here at once and elsewhere
 * through the revocation channel or within `tokenStateCacheSeconds`.
 *
 * @throws {AuthError} 40400 no such account, 40001 nothing to change, 42200 a bad value, 40001/40100/40103 re-authentication.
 */
export async function updateServiceAccount(auth: Auth, input: UpdateServiceAccountInput): Promise<ServiceAccountInfo> {
  const store = serviceAccountsOf(auth);
  const id = requiredString(input.id, "id");
  const changes: ServiceAccountChanges = {};
  if (input.name !== undefined) changes.name = readVisibleText(input.name, "name", maxNameLength);
  if (input.roles !== undefined) changes.roles = checkRoles(input.roles);
  if (input.scopes !== undefined) changes.scopes = readScopes(input.scopes, auth.config.serviceAccounts.scopes);
  if (input.disabled !== undefined) {
    if (typeof input.disabled !== "boolean") throw new AuthError(ErrorCode.MalformedParameter, "disabled must be true or false");
    changes.disabled = input.disabled;
  }
  if (input.endTokens !== undefined && typeof input.endTokens !== "boolean") {
    throw new AuthError(ErrorCode.MalformedParameter, "endTokens must be true or false");
  }
  if (Object.keys(changes).length === 0 && input.endTokens !== true) {
    throw new AuthError(ErrorCode.MissingParameter, "name, roles, scopes, disabled or endTokens is required");
  }
  const endsTokens =
    input.endTokens === true || changes.roles !== undefined || changes.scopes !== undefined || changes.disabled === true;
  const by = await proveAdministrator(auth, input);
  const account = await store.updateServiceAccount(id, { ...changes, raiseTokenVersion: endsTokens });
  if (account === null) throw noSuchAccount();
  if (endsTokens) revoked(auth, { kind: "session", sessionId: serviceAccountCacheId(id) });
  auth.emit({ type: "service_account.updated", serviceAccountId: id, by, tokensEnded: endsTokens, at: auth.now() });
  return serviceAccountInfo(account);
}

/**
 * Deletes a service account with its credentials (`DELETE /auth/admin/service-accounts/:id`) after
 * the administrator re-authenticates; its tokens are refused from their next request.
 *
 * @throws {AuthError} 40400 no such account, 40001/40100/40103 re-authentication.
 */
export async function deleteServiceAccount(auth: Auth, input: AdministratorProof & { id: string }): Promise<{ deleted: true }> {
  const store = serviceAccountsOf(auth);
  const id = requiredString(input.id, "id");
  const by = await proveAdministrator(auth, input);
  if (!(await store.deleteServiceAccount(id))) throw noSuchAccount();
  revoked(auth, { kind: "session", sessionId: serviceAccountCacheId(id) });
  auth.emit({ type: "service_account.deleted", serviceAccountId: id, by, at: auth.now() });
  return { deleted: true };
}

/** The lifetime a request asks for a secret, in seconds, or null for none (`serviceAccounts.secretTtl` by default). */
function secretLifetimeOf(auth: Auth, value: unknown): number | null {
  if (value === undefined || value === null) return auth.config.serviceAccounts.secretTtlSeconds;
  try {
    return durationSeconds(value as never, "expiresIn");
  } catch {
    throw new AuthError(ErrorCode.ValidationFailed, 'expiresIn must be whole seconds or a string such as "90d"');
  }
}

/** What {@link addClientSecret} answers: the secret itself, shown this once (SA-2), and its view. */
export interface AddedClientSecret extends ServiceAccountCredentialInfo {
  /** The secret: `pcs_<environment>_…`. Stored only as its SHA-256; it cannot be shown again. */
  clientSecret: string;
}

/**
 * Adds a client secret to a service account (`POST /auth/admin/service-accounts/:id/secrets`)
 * after the administrator re-authenticates: answered once, stored as its SHA-256 only (SA-2). An
 * account holds two unexpired secrets at most, so that one can replace the other: add the new one,
 * move the client to it, then remove the old one.
 *
 * @throws {AuthError} 40400 no such account, 40900 two secrets held already, 42200 a bad lifetime, 40001/40100/40103 re-authentication.
 */
export async function addClientSecret(
  auth: Auth,
  input: AdministratorProof & { id: string; expiresIn?: number | string },
): Promise<AddedClientSecret> {
  const store = serviceAccountsOf(auth);
  const id = requiredString(input.id, "id");
  const lifetime = secretLifetimeOf(auth, input.expiresIn);
  const by = await proveAdministrator(auth, input);
  const secret = newClientSecret(auth.config.serviceAccounts.environment, auth.randomBytes);
  const now = auth.now();
  const credential: ServiceAccountCredentialRecord = {
    id: randomId(auth),
    serviceAccountId: id,
    kind: "secret",
    secretHash: sha256(secret),
    start: startOfClientSecret(secret),
    createdAt: now,
    expiresAt: lifetime === null ? null : now + lifetime * 1000,
    lastUsedAt: null,
  };
  await addCredential(auth, store, credential, by);
  return { ...serviceAccountCredentialInfo(credential), clientSecret: secret };
}

/**
 * Registers a public key for `private_key_jwt` (`POST /auth/admin/service-accounts/:id/keys`)
 * after the administrator re-authenticates: an RSA key of 2048 bits or more, an EC key on P-256 or P-384, or an Ed25519 key, public only. Two
 * keys at most, as for secrets.
 *
 * @throws {AuthError} 40400 no such account, 40900 two keys held already or a `kid` the account holds, 42200 not such a public key.
 */
export async function addPublicKey(
  auth: Auth,
  input: AdministratorProof & { id: string; jwk: unknown },
): Promise<ServiceAccountCredentialInfo> {
  const store = serviceAccountsOf(auth);
  const id = requiredString(input.id, "id");
  const publicJwk = await readPublicJwk(input.jwk);
  const by = await proveAdministrator(auth, input);
  const held = await store.findServiceAccountClient(id);
  if (held === null) throw noSuchAccount();
  if (held.credentials.some((each) => each.kind === "jwk" && each.publicJwk.kid === publicJwk.kid)) {
    throw new AuthError(ErrorCode.Conflict, "The account holds a key of this kid already");
  }
  const credential: ServiceAccountCredentialRecord = {
    id: randomId(auth),
    serviceAccountId: id,
    kind: "jwk",
    publicJwk,
    createdAt: auth.now(),
    expiresAt: null,
    lastUsedAt: null,
  };
  await addCredential(auth, store, credential, by);
  return serviceAccountCredentialInfo(credential);
}

async function addCredential(
  auth: Auth,
  store: ServiceAccountStore,
  credential: ServiceAccountCredentialRecord,
  by: string,
): Promise<void> {
  const outcome = await store.addServiceAccountCredential(credential, maxCredentialsOfKind, credential.createdAt);
  if (outcome === "unknown_account") throw noSuchAccount();
  if (outcome === "limit") {
    const what = credential.kind === "secret" ? "client secrets" : "public keys";
    throw new AuthError(ErrorCode.Conflict, `A service account holds at most ${maxCredentialsOfKind} ${what}: remove one first`);
  }
  auth.emit({
    type: "service_account.credential_added",
    serviceAccountId: credential.serviceAccountId,
    credentialId: credential.id,
    kind: credential.kind,
    by,
    at: credential.createdAt,
  });
}

/**
 * Removes a client secret or public key (`DELETE /auth/admin/service-accounts/:id/credentials/:credentialId`)
 * after the administrator re-authenticates: refused at the token endpoint from now on. Tokens
 * already issued with it stay valid to their short expiry; `updateServiceAccount`'s `endTokens`
 * ends them too.
 *
 * @throws {AuthError} 40400 no such account or credential, 40001/40100/40103 re-authentication.
 */
export async function removeServiceAccountCredential(
  auth: Auth,
  input: AdministratorProof & { id: string; credentialId: string },
): Promise<{ removed: true }> {
  const store = serviceAccountsOf(auth);
  const id = requiredString(input.id, "id");
  const credentialId = requiredString(input.credentialId, "credentialId");
  const by = await proveAdministrator(auth, input);
  if (!(await store.removeServiceAccountCredential(id, credentialId))) {
    throw new AuthError(ErrorCode.NotFound, "No such credential of this service account");
  }
  auth.emit({ type: "service_account.credential_removed", serviceAccountId: id, credentialId, by, at: auth.now() });
  return { removed: true };
}
