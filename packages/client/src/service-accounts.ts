import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import type { ReauthenticationProof } from "./types.js";

/** A service account as administrators see it (`/auth/admin/service-accounts…`): never a secret. Times are epoch milliseconds. */
export interface ServiceAccount {
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

/** A client secret or public key of a service account: a secret's first characters, a key's `kid` and `alg`. */
export interface ServiceAccountCredential {
  id: string;
  kind: "secret" | "jwk";
  /** A secret's first characters (`pcs_live_AbCd`); null for a key. */
  start: string | null;
  kid: string | null;
  alg: string | null;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/** One service account with its credentials (`GET /auth/admin/service-accounts/:id`). */
export interface ServiceAccountWithCredentials extends ServiceAccount {
  credentials: ServiceAccountCredential[];
}

/** A client secret just added: the secret itself, shown this once (SA-2). */
export interface AddedServiceAccountSecret extends ServiceAccountCredential {
  /** `pcs_<environment>_…`: the server keeps only its SHA-256 and can never show it again. */
  clientSecret: string;
}

/** What {@link ServiceAccountsClient.create} takes. */
export interface CreateServiceAccountInput {
  /** 1 to 64 characters of visible text. */
  name: string;
  /** The roles its tokens carry; default none. */
  roles?: string[];
  /** The scopes its tokens may carry (each of the server's `serviceAccounts.scopes` when it lists them); default none. */
  scopes?: string[];
}

/** What {@link ServiceAccountsClient.update} changes; absent fields are kept. */
export interface UpdateServiceAccountInput {
  name?: string;
  roles?: string[];
  scopes?: string[];
  disabled?: boolean;
  /** End every token issued so far (as new roles or scopes, or disabling, do). */
  endTokens?: boolean;
}

/**
 * The administrators' management of service accounts (`/auth/admin/service-accounts…`, where the
 * server has `serviceAccounts.enabled`; the signed-in user needs the server's `adminRole`). Every
 * change asks the administrator's re-authentication: a recent sign-in, or `proof` (here or through
 * the client's `reauthenticate` on its 40001). The accounts themselves get tokens at
 * `POST /auth/token` with an OAuth 2.0 client (the client-credentials grant), not through this client.
 */
export interface ServiceAccountsClient {
  /**
   * Makes a service account (`POST /auth/admin/service-accounts`).
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40100/40103 a wrong proof, 40300 not an administrator, 40400 service accounts are off, 42200 a bad name, role or scope.
   * @example
   * ```ts
   * const account = await client.serviceAccounts.create({ name: "billing", scopes: ["invoices:read"] });
   * ```
   */
  create(input: CreateServiceAccountInput, proof?: ReauthenticationProof): Promise<ServiceAccount>;
  /**
   * Every service account, oldest first (`GET /auth/admin/service-accounts`).
   *
   * @example
   * ```ts
   * for (const account of await client.serviceAccounts.list()) render(account.name, account.disabled);
   * ```
   */
  list(): Promise<ServiceAccount[]>;
  /**
   * One account with its credentials (`GET /auth/admin/service-accounts/:id`).
   *
   * @throws {AuthClientError} 40400 no such account.
   * @example
   * ```ts
   * const { credentials } = await client.serviceAccounts.get(id);
   * ```
   */
  get(id: string): Promise<ServiceAccountWithCredentials>;
  /**
   * Renames, disables or enables an account, sets its roles or scopes, or ends its tokens (`PATCH /auth/admin/service-accounts/:id`).
   *
   * @throws {AuthClientError} 40001 nothing to change or re-authentication needed, 40400 no such account, 42200 a bad value.
   * @example
   * ```ts
   * await client.serviceAccounts.update(id, { disabled: true });
   * ```
   */
  update(id: string, changes: UpdateServiceAccountInput, proof?: ReauthenticationProof): Promise<ServiceAccount>;
  /**
   * Deletes an account with its credentials (`DELETE /auth/admin/service-accounts/:id`): its tokens are refused from their next request.
   *
   * @throws {AuthClientError} 40001 re-authentication needed, 40400 no such account.
   * @example
   * ```ts
   * await client.serviceAccounts.remove(id);
   * ```
   */
  remove(id: string, proof?: ReauthenticationProof): Promise<void>;
  /**
   * Adds a client secret (`POST /auth/admin/service-accounts/:id/secrets`): show `clientSecret` now, it is never answered again.
   *
   * @throws {AuthClientError} 40400 no such account, 40900 two secrets held already, 42200 a bad lifetime.
   * @example
   * ```ts
   * const { clientSecret } = await client.serviceAccounts.addSecret(id, { expiresIn: "90d" });
   * ```
   */
  addSecret(
    id: string,
    options?: { expiresIn?: number | string },
    proof?: ReauthenticationProof,
  ): Promise<AddedServiceAccountSecret>;
  /**
   * Registers a public key for `private_key_jwt` (`POST /auth/admin/service-accounts/:id/keys`).
   *
   * @throws {AuthClientError} 40400 no such account, 40900 two keys held already or its `kid` taken, 42200 not an accepted public key.
   * @example
   * ```ts
   * await client.serviceAccounts.addPublicKey(id, await exportJWK(publicKey));
   * ```
   */
  addPublicKey(id: string, jwk: Record<string, unknown>, proof?: ReauthenticationProof): Promise<ServiceAccountCredential>;
  /**
   * Removes a client secret or public key (`DELETE /auth/admin/service-accounts/:id/credentials/:credentialId`).
   *
   * @throws {AuthClientError} 40400 no such account or credential.
   * @example
   * ```ts
   * await client.serviceAccounts.removeCredential(id, oldSecret.id);
   * ```
   */
  removeCredential(id: string, credentialId: string, proof?: ReauthenticationProof): Promise<void>;
}

/** The optional body of a DELETE: the proof when there is one, else none. */
const proofBody = (proof: ReauthenticationProof) => (proof.password || proof.totpCode ? proof : undefined);

/**
 * Makes the {@link ServiceAccountsClient} of a session; `reauthenticate` answers the 40001 of a change.
 *
 * @example
 * ```ts
 * const serviceAccounts = createServiceAccountsClient(session, reauthenticate);
 * ```
 */
export function createServiceAccountsClient(session: Session, reauthenticate: Reauthenticate | undefined): ServiceAccountsClient {
  const root = "/auth/admin/service-accounts";
  const path = (id: string) => `${root}/${encodeURIComponent(id)}`;
  /** A change re-authenticated here or through `reauthenticate`. */
  const change = <T>(proof: ReauthenticationProof, send: (given: ReauthenticationProof) => Promise<T>) =>
    withReauthentication(reauthenticate, { operation: "serviceAccounts.change", accepts: ["password", "totpCode"] }, proof, send);
  return {
    create: ({ name, roles, scopes }, proof = {}) =>
      change(proof, (given) =>
        session.call<ServiceAccount>({ method: "POST", path: root, body: { name, roles, scopes, ...given } }),
      ),
    list: () => session.call<ServiceAccount[]>({ method: "GET", path: root }),
    get: (id) => session.call<ServiceAccountWithCredentials>({ method: "GET", path: path(id) }),
    update: (id, { name, roles, scopes, disabled, endTokens }, proof = {}) =>
      change(proof, (given) =>
        session.call<ServiceAccount>({
          method: "PATCH",
          path: path(id),
          body: { name, roles, scopes, disabled, endTokens, ...given },
        }),
      ),
    async remove(id, proof = {}) {
      await change(proof, (given) => session.call({ method: "DELETE", path: path(id), body: proofBody(given) }));
    },
    addSecret: (id, { expiresIn } = {}, proof = {}) =>
      change(proof, (given) =>
        session.call<AddedServiceAccountSecret>({ method: "POST", path: `${path(id)}/secrets`, body: { expiresIn, ...given } }),
      ),
    addPublicKey: (id, jwk, proof = {}) =>
      change(proof, (given) =>
        session.call<ServiceAccountCredential>({ method: "POST", path: `${path(id)}/keys`, body: { jwk, ...given } }),
      ),
    async removeCredential(id, credentialId, proof = {}) {
      const target = `${path(id)}/credentials/${encodeURIComponent(credentialId)}`;
      await change(proof, (given) => session.call({ method: "DELETE", path: target, body: proofBody(given) }));
    },
  };
}
