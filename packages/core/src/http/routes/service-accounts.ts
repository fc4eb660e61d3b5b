import type { Auth } from "../../auth.js";
import {
  addClientSecret,
  addPublicKey,
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  removeServiceAccountCredential,
  updateServiceAccount,
} from "../../service-accounts/manage-service-accounts.js";
import { maxCredentialsOfKind } from "../../service-accounts/service-account-config.js";
import { type JsonSchema, answerObject, requestObject, roleNames } from "../openapi-schemas.js";
import type { ParameterDoc, Route, RouteContext } from "../route-types.js";
import { adminProof, adminProofOf } from "./admin.js";

/** Service accounts are on: every route below exists only then (otherwise 40400, as an unknown route). */
const serviceAccountsOn = (auth: Auth): boolean => auth.config.serviceAccounts.enabled;

const instant: JsonSchema = { type: "integer", minimum: 0, description: "Epoch milliseconds" };
const nullableInstant: JsonSchema = { type: ["integer", "null"], minimum: 0, description: "Epoch milliseconds" };

/** A service account as administrators see it: never a secret. */
const accountProperties: Record<string, JsonSchema> = {
  id: { type: "string" },
  clientId: { type: "string", description: "The OAuth `client_id` of the account: its id" },
  name: { type: "string" },
  roles: { type: "array", items: { type: "string" }, description: "The roles its tokens carry" },
  scopes: { type: "array", items: { type: "string" }, description: "The scopes its tokens may carry" },
  disabled: { type: "boolean" },
  createdAt: instant,
  createdBy: { type: ["string", "null"], description: "The administrator who made it" },
};

/** A client secret or public key as administrators see it: a secret's first characters, a key's `kid` and `alg`. */
const credentialProperties: Record<string, JsonSchema> = {
  id: { type: "string" },
  kind: { enum: ["secret", "jwk"] },
  start: {
    type: ["string", "null"],
    description: "A secret's first characters (`pcs_live_AbCd`), never enough to use it; null for a key",
  },
  kid: { type: ["string", "null"], description: "A key's `kid`; null for a secret" },
  alg: { type: ["string", "null"], description: "A key's `alg`; null for a secret" },
  createdAt: instant,
  expiresAt: nullableInstant,
  lastUsedAt: { ...nullableInstant, description: "Epoch milliseconds, written at most once a minute" },
};

const accountInfo: JsonSchema = answerObject(accountProperties);
const credentialInfo: JsonSchema = answerObject(credentialProperties);

const accountIdParameter: ParameterDoc = { name: "id", in: "path", description: "The service account's `id` (its `client_id`)" };

const nameField: JsonSchema = { type: "string", minLength: 1, maxLength: 64, description: "1 to 64 characters of visible text" };
const scopesField: JsonSchema = {
  type: "array",
  items: { type: "string", minLength: 1, maxLength: 128 },
  description: "Scopes of 1 to 128 visible ASCII characters, each of `serviceAccounts.scopes` when the host defines them",
};

/** The re-authentication codes of an administrator (STUP-3): missing, wrong password, wrong code, no local password, throttled. */
const reauthenticationCodes = [40001, 40100, 40103, 40900, 42900] as const;

const reauthenticates =
  "After the administrator's re-authentication (STUP-3): a recent sign-in, or their own `password` (and `totpCode`) in the body.";

/** The administrator's proof and the account of the path: what every change below passes its flow. */
const accountChange = (context: RouteContext) => ({ ...adminProofOf(context), id: context.params.id as string });

/**
 * The administrators' routes of service accounts (`docs/flows/service-accounts.md`, SA-1, SA-2):
 * make, list, read, change and delete accounts, and add or remove their client secrets and public
 * keys. Only with `serviceAccounts.enabled`, for the admin role; every change re-authenticates.
 */
export const serviceAccountRoutes: readonly Route[] = [
  {
    method: "POST",
    path: "/auth/admin/service-accounts",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "createServiceAccount",
      tag: "Service accounts",
      summary: "Make a service account",
      description: `${reauthenticates} A principal with no password and no sign-in: it gets access tokens only at \`POST /auth/token\`, once it holds a client secret or a public key.`,
      body: requestObject({ name: nameField, roles: roleNames, scopes: scopesField, ...adminProof }, ["name"]),
      data: accountInfo,
      codes: [...reauthenticationCodes, 42200],
    },
    async handle(context) {
      const { body } = context;
      const input = {
        ...adminProofOf(context),
        name: body.name as string,
        roles: body.roles as string[] | undefined,
        scopes: body.scopes as string[] | undefined,
      };
      return { data: await createServiceAccount(context.auth, input) };
    },
  },
  {
    method: "GET",
    path: "/auth/admin/service-accounts",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "listServiceAccounts",
      tag: "Service accounts",
      summary: "Every service account, oldest first",
      description: "Never a secret (SA-2).",
      data: { type: "array", items: accountInfo },
      codes: [],
    },
    async handle(context) {
      return { data: await listServiceAccounts(context.auth) };
    },
  },
  {
    method: "GET",
    path: "/auth/admin/service-accounts/:id",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "getServiceAccount",
      tag: "Service accounts",
      summary: "One service account with its credentials",
      description: "Its client secrets by their first characters, its public keys by `kid` and `alg`: never a secret (SA-2).",
      parameters: [accountIdParameter],
      data: answerObject({ ...accountProperties, credentials: { type: "array", items: credentialInfo } }),
      codes: [40400],
    },
    async handle(context) {
      return { data: await getServiceAccount(context.auth, { id: context.params.id as string }) };
    },
  },
  {
    method: "PATCH",
    path: "/auth/admin/service-accounts/:id",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "updateServiceAccount",
      tag: "Service accounts",
      summary: "Rename, disable or enable a service account, set its roles or scopes, or end its tokens",
      description: `${reauthenticates} New roles or scopes, disabling it, or \`endTokens\` end every token issued so far: each is refused from its next request (SA-4), on this instance at once, on others through the revocation channel or within \`tokenStateCacheSeconds\`. Absent fields are kept; none at all is 40001.`,
      parameters: [accountIdParameter],
      body: requestObject({
        name: nameField,
        roles: roleNames,
        scopes: scopesField,
        disabled: { type: "boolean" },
        endTokens: { type: "boolean", description: "End every token issued so far" },
        ...adminProof,
      }),
      data: accountInfo,
      codes: [...reauthenticationCodes, 40400, 42200],
    },
    async handle(context) {
      const { body } = context;
      const input = {
        ...accountChange(context),
        name: body.name as string | undefined,
        roles: body.roles as string[] | undefined,
        scopes: body.scopes as string[] | undefined,
        disabled: body.disabled as boolean | undefined,
        endTokens: body.endTokens as boolean | undefined,
      };
      return { data: await updateServiceAccount(context.auth, input) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/service-accounts/:id",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "deleteServiceAccount",
      tag: "Service accounts",
      summary: "Delete a service account with its credentials",
      description: `${reauthenticates} (The body is optional JSON.) Its tokens are refused from their next request (SA-4).`,
      parameters: [accountIdParameter],
      body: requestObject(adminProof),
      data: answerObject({ deleted: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      return { data: await deleteServiceAccount(context.auth, accountChange(context)) };
    },
  },
  {
    method: "POST",
    path: "/auth/admin/service-accounts/:id/secrets",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "addClientSecret",
      tag: "Service accounts",
      summary: "Add a client secret to a service account, shown this once",
      description: `${reauthenticates} \`clientSecret\` is answered only here and stored only as its SHA-256 (SA-2); the client sends it in \`Authorization: Basic\` at \`POST /auth/token\`. An account holds ${maxCredentialsOfKind} unexpired secrets at most (40900), so that one can replace the other.`,
      parameters: [accountIdParameter],
      body: requestObject({
        expiresIn: {
          oneOf: [
            { type: "integer", minimum: 1 },
            { type: "string", minLength: 1 },
          ],
          description:
            'The lifetime: whole seconds or a string such as `"90d"`; default `serviceAccounts.secretTtl` (none: until removed)',
        },
        ...adminProof,
      }),
      data: answerObject({
        ...credentialProperties,
        clientSecret: { type: "string", description: "The secret, `pcs_<environment>_…`: shown this once, never again (SA-2)" },
      }),
      codes: [...reauthenticationCodes, 40400, 42200],
    },
    async handle(context) {
      const input = { ...accountChange(context), expiresIn: context.body.expiresIn as number | string | undefined };
      return { data: await addClientSecret(context.auth, input) };
    },
  },
  {
    method: "POST",
    path: "/auth/admin/service-accounts/:id/keys",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "addPublicKey",
      tag: "Service accounts",
      summary: "Register a public key of a service account, for private_key_jwt",
      description: `${reauthenticates} An RSA key of 2048 bits or more naming its \`alg\` (RS256 or PS256), an EC key on P-256 (ES256) or P-384 (ES384), or an Ed25519 key (EdDSA); never a private key (42200). Its \`kid\` is kept, or set to its RFC 7638 thumbprint. The client signs its \`client_assertion\` at \`POST /auth/token\` with the private half (RFC 7523). ${maxCredentialsOfKind} keys at most, and one \`kid\` once (40900).`,
      parameters: [accountIdParameter],
      body: requestObject({ jwk: { type: "object", description: "The public key as a JWK (RFC 7517)" }, ...adminProof }, ["jwk"]),
      data: credentialInfo,
      codes: [...reauthenticationCodes, 40400, 42200],
    },
    async handle(context) {
      return { data: await addPublicKey(context.auth, { ...accountChange(context), jwk: context.body.jwk }) };
    },
  },
  {
    method: "DELETE",
    path: "/auth/admin/service-accounts/:id/credentials/:credentialId",
    access: "admin",
    enabled: serviceAccountsOn,
    doc: {
      operationId: "removeServiceAccountCredential",
      tag: "Service accounts",
      summary: "Remove a client secret or public key of a service account",
      description: `${reauthenticates} (The body is optional JSON.) Refused at the token endpoint from now on; tokens already issued with it live to their short expiry, unless \`PATCH\` with \`endTokens\` ends them.`,
      parameters: [accountIdParameter, { name: "credentialId", in: "path", description: "The credential's `id`" }],
      body: requestObject(adminProof),
      data: answerObject({ removed: { const: true } }),
      codes: [...reauthenticationCodes, 40400],
    },
    async handle(context) {
      const input = { ...accountChange(context), credentialId: context.params.credentialId as string };
      return { data: await removeServiceAccountCredential(context.auth, input) };
    },
  },
];
