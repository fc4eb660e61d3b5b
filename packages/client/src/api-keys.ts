import { type Reauthenticate, withReauthentication } from "./reauthentication.js";
import type { Session } from "./session.js";
import type { ReauthenticationProof } from "./types.js";

/** An API key as its owner sees it (`GET /auth/api-keys`): never its secret. Times are epoch milliseconds. */
export interface ApiKey {
  id: string;
  name: string;
  /** The key's first characters (`pc_live_AbCd`), to tell keys apart; never enough to use it. */
  start: string;
  scopes: string[];
  createdAt: number;
  expiresAt: number;
  /** Written at most once a minute (AK-4). */
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** The organization the key belongs to, or null for the user's own key. */
  orgId: string | null;
}

/** A key just made (`POST /auth/api-keys`): its secret, shown this once (AK-2). */
export interface CreatedApiKey extends ApiKey {
  /** `pc_<environment>_…`: the server keeps only its SHA-256 and can never show it again. */
  key: string;
}

/** What {@link ApiKeysClient.create} takes. */
export interface CreateApiKeyInput {
  /** 1 to 64 characters of visible text. */
  name: string;
  /** Strings your server's routes ask with `requireAuth(auth, { scopes })`; default none. */
  scopes?: string[];
  /** Whole seconds or a string such as `"30d"`; default the server's `apiKeys.defaultTtl`. */
  expiresIn?: number | string;
}

/** The signed-in user's API keys (`/auth/api-keys…`, where the server has `apiKeys.enabled`), for scripts and services. */
export interface ApiKeysClient {
  /**
   * Makes a key (`POST /auth/api-keys`), with a recent sign-in or the password (and a TOTP code when
   * TOTP is on): here, or through the client's `reauthenticate` on its 40001. Show `key` to the user
   * now: it is never answered again.
   *
   * @throws {AuthClientError} `not_signed_in`, 40001 re-authentication needed, 40100 wrong password, 40103 wrong code, 40400 API keys are off, 40900 too many keys, 42200 a bad name, scope or lifetime.
   * @example
   * ```ts
   * const { key } = await client.apiKeys.create({ name: "CI", scopes: ["reports:read"], expiresIn: "30d" });
   * ```
   */
  create(input: CreateApiKeyInput, proof?: ReauthenticationProof): Promise<CreatedApiKey>;
  /**
   * The user's keys (`GET /auth/api-keys`), newest first, revoked and expired ones included.
   *
   * @throws {AuthClientError} `not_signed_in`, 40400 API keys are off.
   * @example
   * ```ts
   * for (const key of await client.apiKeys.list()) render(key.name, key.start, key.lastUsedAt);
   * ```
   */
  list(): Promise<ApiKey[]>;
  /**
   * Renames one of the user's live keys (`PATCH /auth/api-keys/:id`).
   *
   * @throws {AuthClientError} 40400 no such live key of the user's, 42200 a bad name.
   * @example
   * ```ts
   * await client.apiKeys.rename(key.id, "nightly");
   * ```
   */
  rename(id: string, name: string): Promise<void>;
  /**
   * Revokes one of the user's keys (`DELETE /auth/api-keys/:id`): refused from its next request on.
   *
   * @throws {AuthClientError} 40400 no such key of the user's, or revoked already.
   * @example
   * ```ts
   * await client.apiKeys.revoke(key.id);
   * ```
   */
  revoke(id: string): Promise<void>;
  /**
   * The keys of an organization the signed-in user administers (AK-6): made, listed and revoked
   * by its administrators; each carries `orgId`.
   */
  ofOrganization(orgId: string): OrganizationApiKeysClient;
}

/** An organization's API keys, for its administrators (`/auth/orgs/:orgId/api-keys`). */
export interface OrganizationApiKeysClient {
  /** Makes a key of the organization, after re-authentication; its secret is answered this once. */
  create(input: CreateApiKeyInput, proof?: ReauthenticationProof): Promise<CreatedApiKey>;
  /** The organization's keys, newest first, revoked and expired ones included. */
  list(): Promise<ApiKey[]>;
  /** Revokes one of the organization's keys. */
  revoke(id: string): Promise<void>;
}

/**
 * Makes the {@link ApiKeysClient} of a session; `reauthenticate` answers the 40001 of a creation.
 *
 * @example
 * ```ts
 * const apiKeys = createApiKeysClient(session, reauthenticate);
 * ```
 */
export function createApiKeysClient(session: Session, reauthenticate: Reauthenticate | undefined): ApiKeysClient {
  const path = (id: string) => `/auth/api-keys/${encodeURIComponent(id)}`;
  return {
    create: ({ name, scopes, expiresIn }, proof = {}) =>
      withReauthentication(reauthenticate, { operation: "apiKeys.create", accepts: ["password", "totpCode"] }, proof, (given) =>
        session.call<CreatedApiKey>({ method: "POST", path: "/auth/api-keys", body: { name, scopes, expiresIn, ...given } }),
      ),
    list: () => session.call<ApiKey[]>({ method: "GET", path: "/auth/api-keys" }),
    async rename(id, name) {
      await session.call({ method: "PATCH", path: path(id), body: { name } });
    },
    async revoke(id) {
      await session.call({ method: "DELETE", path: path(id) });
    },
    ofOrganization(orgId) {
      const base = `/auth/orgs/${encodeURIComponent(orgId)}/api-keys`;
      return {
        create: ({ name, scopes, expiresIn }, proof = {}) =>
          withReauthentication(
            reauthenticate,
            { operation: "apiKeys.create", accepts: ["password", "totpCode"] },
            proof,
            (given) => session.call<CreatedApiKey>({ method: "POST", path: base, body: { name, scopes, expiresIn, ...given } }),
          ),
        list: () => session.call<ApiKey[]>({ method: "GET", path: base }),
        async revoke(id) {
          await session.call({ method: "DELETE", path: `${base}/${encodeURIComponent(id)}` });
        },
      };
    },
  };
}
