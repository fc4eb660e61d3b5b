import {
  createApiKey,
  listApiKeys,
  listUserApiKeys,
  maxApiKeyNameLength,
  maxScopes,
  renameApiKey,
  revokeApiKey,
  revokeUserApiKey,
} from "../../api-keys/manage-api-keys.js";
import {
  createOrganizationApiKey,
  listOrganizationApiKeys,
  revokeOrganizationApiKey,
} from "../../api-keys/organization-api-keys.js";
import type { Auth } from "../../auth.js";
import { type JsonSchema, answerObject, requestObject } from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext } from "../route-types.js";
import { adminProof, adminProofOf } from "./admin.js";
import { proofFields, reauthentication, signedIn } from "./shared.js";

/** API keys are on: every route below exists only then (otherwise 40400, as an unknown route). */
const apiKeysOn = (auth: Auth): boolean => auth.config.apiKeys.enabled;

const instant: JsonSchema = { type: "integer", minimum: 0, description: "Epoch milliseconds" };

/** An API key as its owner and administrators see it: never its secret. */
const apiKeyProperties: Record<string, JsonSchema> = {
  id: { type: "string" },
  name: { type: "string" },
  start: {
    type: "string",
    description: "The key's first characters (`pc_live_AbCd`), to tell keys apart; never enough to use it",
  },
  scopes: { type: "array", items: { type: "string" } },
  createdAt: instant,
  expiresAt: instant,
  lastUsedAt: { type: ["integer", "null"], minimum: 0, description: "Epoch milliseconds, written at most once a minute (AK-4)" },
  revokedAt: { type: ["integer", "null"], minimum: 0, description: "Epoch milliseconds" },
  orgId: { type: ["string", "null"], description: "The organization the key belongs to; null for a user's own key" },
};

const apiKeyInfo: JsonSchema = answerObject(apiKeyProperties);

const keyIdParameter = (name: string): ParameterDoc => ({ name, in: "path", description: "The key's `id`" });

const nameField: JsonSchema = {
  type: "string",
  minLength: 1,
  maxLength: maxApiKeyNameLength,
  description: `1 to ${maxApiKeyNameLength} characters of visible text`,
};

const newKeyBody: JsonSchema = requestObject(
  {
    name: nameField,
    scopes: {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: 128 },
      maxItems: maxScopes,
      description: `At most ${maxScopes} scopes of 1 to 128 visible ASCII characters, each of \`apiKeys.scopes\` when the host defines them`,
    },
    expiresIn: {
      oneOf: [
        { type: "integer", minimum: 1 },
        { type: "string", minLength: 1 },
      ],
      description:
        'The lifetime: whole seconds or a string such as `"30d"`; default `apiKeys.defaultTtl`, at most `apiKeys.maxTtl`',
    },
    ...proofFields,
  },
  ["name"],
);

const createdKey: JsonSchema = answerObject({
  ...apiKeyProperties,
  key: { type: "string", description: "The secret, `pc_<environment>_…`: shown this once, never again (AK-2)" },
});

/** The input of a new key from a request's body. */
const newKeyInput = (context: RouteContext) => ({
  ...reauthentication(context),
  userId: signedIn(context),
  name: context.body.name as string,
  scopes: context.body.scopes as string[] | undefined,
  expiresIn: context.body.expiresIn as number | string | undefined,
});

/** An organization's keys exist with API keys and organizations both on. */
const organizationKeysOn = (auth: Auth): boolean => auth.config.apiKeys.enabled && auth.config.organizations.enabled;

const orgIdParameter: ParameterDoc = { name: "orgId", in: "path", description: "The organization's id" };

/** The re-authentication codes (STUP-3): missing, wrong password, wrong code, no local password, throttled. */
const reauthenticationCodes = [40001, 40100, 40103, 40900, 42900] as const;

/**
 * The API keys' routes (`docs/flows/api-keys.md`, AK-1…AK-5): a signed-in user's own keys, and
 * the administrators' view of anyone's. Only with `apiKeys.enabled`. Every one of them asks an
 * access token: an API key is refused here (40101), so a stolen key cannot make more keys.
 */
export const apiKeyRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/api-keys",
    access: "bearer",
    enabled: apiKeysOn,
    doc: {
      operationId: "createApiKey",
      tag: "API keys",
      summary: "Make an API key for the signed-in user, shown this once",
      description:
        "After re-authentication (STUP-3): a recent sign-in, or `password` (and `totpCode`) in the body. `key` is answered only here and stored only as its SHA-256 (AK-2). The key acts for the user with the scopes given until it expires (`expiresIn`, default `apiKeys.defaultTtl`, at most `apiKeys.maxTtl`), is revoked, the account is disabled or its token version is raised. At most `apiKeys.maxPerUser` live keys (40900). Only an access token may call it: an API key is refused (40101).",
      body: newKeyBody,
      data: createdKey,
      codes: [...reauthenticationCodes, 42200],
    },
    async handle(context) {
      return { data: await createApiKey(context.auth, newKeyInput(context)) };
    },
  },
  {
    method: "GET",
    path: "/auth/api-keys",
    access: "bearer",
    enabled: apiKeysOn,
    doc: {
      operationId: "listApiKeys",
      tag: "API keys",
      summary: "The signed-in user's API keys, newest first",
      description: "Revoked and expired keys included; never a key's secret (AK-2).",
      data: { type: "array", items: apiKeyInfo },
      codes: [],
    },
    async handle(context) {
      return { data: await listApiKeys(context.auth, { userId: signedIn(context) }) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/api-keys/:id",
    access: "bearer",
    enabled: apiKeysOn,
    doc: {
      operationId: "renameApiKey",
      tag: "API keys",
      summary: "Rename one of the signed-in user's live API keys",
      description: "A key of another user, a revoked or an unknown one is 40400.",
      parameters: [keyIdParameter("id")],
      body: requestObject({ name: nameField }, ["name"]),
      data: answerObject({ renamed: { const: true } }),
      codes: [40001, 40400, 42200],
    },
    async handle(context) {
      const input = { userId: signedIn(context), id: context.params.id as string, name: context.body.name as string };
      return { data: await renameApiKey(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/api-keys/:id",
    access: "bearer",
    enabled: apiKeysOn,
    doc: {
      operationId: "revokeApiKey",
      tag: "API keys",
      summary: "Revoke one of the signed-in user's API keys",
      description:
        "The key is refused from its next request on (AK-2): on this instance at once, on others through the revocation channel or within `tokenStateCacheSeconds`. A key of another user, a revoked or an unknown one is 40400.",
      parameters: [keyIdParameter("id")],
      data: answerObject({ revoked: { const: true } }),
      codes: [40400],
    },
    async handle(context) {
      return { data: await revokeApiKey(context.auth, { userId: signedIn(context), id: context.params.id as string }) };
    },
  },
  {
    method: "GET",
    path: "/auth/admin/users/:id/api-keys",
    access: "admin",
    enabled: apiKeysOn,
    doc: {
      operationId: "listUserApiKeys",
      tag: "API keys",
      summary: "Any user's API keys, newest first",
      description: "For the instance's admin role. Never a key's secret (AK-2).",
      parameters: [{ name: "id", in: "path", description: "The user's id" }],
      data: { type: "array", items: apiKeyInfo },
      codes: [],
    },
    async handle(context) {
      return { data: await listUserApiKeys(context.auth, { userId: context.params.id as string }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/users/:id/api-keys/:keyId",
    access: "admin",
    enabled: apiKeysOn,
    doc: {
      operationId: "revokeUserApiKey",
      tag: "API keys",
      summary: "Revoke any user's API key",
      description:
        "For the instance's admin role, after the administrator's re-authentication: a recent sign-in, or their own `password` or `totpCode` in an optional JSON body. The key is refused from its next request on (AK-2).",
      parameters: [{ name: "id", in: "path", description: "The user's id" }, keyIdParameter("keyId")],
      body: requestObject(adminProof),
      data: answerObject({ revoked: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      const input = { ...adminProofOf(context), userId: context.params.id as string, id: context.params.keyId as string };
      return { data: await revokeUserApiKey(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/orgs/:orgId/api-keys",
    access: "bearer",
    enabled: organizationKeysOn,
    doc: {
      operationId: "createOrganizationApiKey",
      tag: "API keys",
      summary: "Make a key of an organization, shown this once",
      description:
        "For the organization's administrators, after re-authentication (STUP-3), as `POST /auth/api-keys`; the key carries the organization (`orgId`, AK-6) and works only while its maker is one of the organization's administrators. A non-member gets 40400, as for an unknown organization (OR-2); a member who is no administrator 40300.",
      parameters: [orgIdParameter],
      body: newKeyBody,
      data: createdKey,
      codes: [...reauthenticationCodes, 40400, 42200],
    },
    async handle(context) {
      const input = { ...newKeyInput(context), orgId: context.params.orgId as string };
      return { data: await createOrganizationApiKey(context.auth, input) };
    },
  },
  {
    method: "GET",
    path: "/auth/orgs/:orgId/api-keys",
    access: "bearer",
    enabled: organizationKeysOn,
    doc: {
      operationId: "listOrganizationApiKeys",
      tag: "API keys",
      summary: "An organization's API keys, newest first",
      description: "For the organization's administrators. Revoked and expired keys included; never a key's secret (AK-2).",
      parameters: [orgIdParameter],
      data: { type: "array", items: apiKeyInfo },
      codes: [40400],
    },
    async handle(context) {
      const input = { userId: signedIn(context), orgId: context.params.orgId as string };
      return { data: await listOrganizationApiKeys(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/orgs/:orgId/api-keys/:id",
    access: "bearer",
    enabled: organizationKeysOn,
    doc: {
      operationId: "revokeOrganizationApiKey",
      tag: "API keys",
      summary: "Revoke a key of an organization",
      description:
        "For the organization's administrators. The key is refused from its next request on (AK-2). A key of another organization, a revoked or an unknown one is 40400.",
      parameters: [orgIdParameter, keyIdParameter("id")],
      data: answerObject({ revoked: { const: true } }),
      codes: [40400],
    },
    async handle(context) {
      const input = { userId: signedIn(context), orgId: context.params.orgId as string, id: context.params.id as string };
      return { data: await revokeOrganizationApiKey(context.auth, input) };
    },
  },
];
