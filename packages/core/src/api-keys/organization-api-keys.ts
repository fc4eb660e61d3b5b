import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import { membershipOf, requireAdministrator } from "../organizations/organization-access.js";
import { signedInUser } from "../users/signed-in-user.js";
import {
  type ApiKeyInfo,
  type CreateApiKeyInput,
  type CreatedApiKey,
  apiKeyInfo,
  apiKeysOf,
  makeApiKey,
  revokeWith,
} from "./manage-api-keys.js";

/** The input of {@link createOrganizationApiKey}. */
export interface CreateOrganizationApiKeyInput extends CreateApiKeyInput {
  orgId: string;
}

/**
 * Makes a key of an organization (`POST /auth/orgs/:orgId/api-keys`; AK-6), by one of its
 * administrators who re-authenticates: as a user's key (a name, scopes, a lifetime, answered once,
 * stored as its SHA-256), with `orgId` set, so a route sees `req.auth.orgId`. The key acts for the
 * administrator who made it, and works only while they are an administrator of the organization:
 * demoted or removed, their keys are refused from the next request (within
 * `tokenStateCacheSeconds`).
 *
 * @throws {AuthError} 40400 keys or organizations off, or not a member; 40300 not an administrator;
 *   as {@link createApiKey} otherwise.
 * @example
 * ```ts
 * const { key } = await createOrganizationApiKey(auth, { userId, sessionId, orgId, name: "Billing export" });
 * ```
 */
export async function createOrganizationApiKey(auth: Auth, input: CreateOrganizationApiKeyInput): Promise<CreatedApiKey> {
  apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  const { organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  return makeApiKey(auth, user, input, organization.id);
}

/**
 * An organization's keys, revoked and expired ones included, newest first
 * (`GET /auth/orgs/:orgId/api-keys`), for its administrators: never a secret.
 *
 * @throws {AuthError} 40400 keys or organizations off, or not a member; 40300 not an administrator.
 */
export async function listOrganizationApiKeys(auth: Auth, input: { userId: string; orgId: string }): Promise<ApiKeyInfo[]> {
  const store = apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  const { organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  return (await store.listOrganizationApiKeys(organization.id)).map(apiKeyInfo);
}

/**
 * Revokes a key of the organization (`DELETE /auth/orgs/:orgId/api-keys/:id`), by one of its
 * administrators: refused from its next request on (AK-2).
 *
 * @throws {AuthError} 40400 no such unrevoked key of the organization (or not a member); 40300 not an administrator.
 */
export async function revokeOrganizationApiKey(
  auth: Auth,
  input: { userId: string; orgId: string; id: string },
): Promise<{ revoked: true }> {
  const store = apiKeysOf(auth);
  const user = await signedInUser(auth, input.userId);
  const { organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const id = requiredString(input.id, "id");
  const key = (await store.listOrganizationApiKeys(organization.id)).find((each) => each.id === id);
  if (key === undefined) throw new AuthError(ErrorCode.NotFound, "No such API key");
  return revokeWith(auth, store, key.userId, id, user.id);
}
