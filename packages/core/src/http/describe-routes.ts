import type { Auth } from "../auth.js";
import { ErrorCode, defaultMessages } from "../errors/codes.js";
import { publicUserWithFields } from "../user-fields/json-schema.js";
import { coreVersion } from "../version.js";
import { envelopeStatus } from "./envelope.js";
import { type ComponentName, type JsonSchema, componentSchemas, schemaRef } from "./openapi-schemas.js";
import type { Route, RouteDoc, RouteTag } from "./route-types.js";

/** Options of {@link openApiDocument}. */
export interface OpenApiOptions {
  /**
   * The document's `servers`, e.g. `[{ url: "https://api.example.com" }]`. Default none: the
   * paths, which hold the base path, are then relative to the host that serves the document.
   * Give one when the adapter is mounted under a further prefix (`app.use("/svc", …)`).
   */
  servers?: { url: string; description?: string }[];
}

/** An OpenAPI 3.1 document, as plain JSON. */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers?: { url: string; description?: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, unknown> };
}

const tagDescriptions: Record<RouteTag, string> = {
  "Sign-in": "Password and directory login, and the second-factor step of a 40102 answer.",
  Tokens: "Refresh-token rotation and logout.",
  "Second factor": "TOTP enrolment and recovery codes of the signed-in user.",
  Passkeys: "WebAuthn sign-in, registration and management.",
  OAuth: "Sign-in with OAuth 2.0 and OpenID Connect providers.",
  Directory: "The directory (LDAP) policy, for the admin role.",
  Account: "The signed-in user.",
  "Step-up": "Re-authenticating a signed-in session, for a route that asks for a recent sign-in or more factors (40104; STUP-2).",
  Email: "Password reset by email and verified addresses: only with `email` configured.",
  Administration: "Users, for the admin role: list, create, read, disable or enable, set roles, end sessions, remove TOTP.",
  Organizations:
    "Organizations of users: members and their roles, invitations by email, domains, the session's active organization, and the instance administrators' view: only with `organizations.enabled`.",
  "API keys":
    "Personal API keys of the signed-in user, for scripts and services (`requireAuth` with `scopes` or `credentials` accepts them), and the administrators' view of anyone's: only with `apiKeys.enabled`.",
  "Service accounts":
    'Machine principals with no sign-in: the administrators\' management of them and of their client secrets and public keys, and the OAuth 2.0 token endpoint where they get access tokens by the client-credentials grant (`requireAuth` with `credentials: "service_account"` accepts them): only with `serviceAccounts.enabled`.',
  Impersonation:
    "An administrator acting as a user for support, in a short session of its own marked with the administrator (`act`): only with `impersonation.enabled`.",
  Metadata: "Documents about the service itself.",
};

/** The codes a route answers besides its own: the checks `handleRequest` makes before the handler. */
function codesOf(route: Route): number[] {
  const codes = new Set<number>([ErrorCode.Forbidden, ErrorCode.Internal, ...route.doc.codes]);
  if (route.method !== "GET") codes.add(ErrorCode.MalformedParameter);
  if (route.access !== "public") {
    codes.add(ErrorCode.InvalidToken);
    codes.add(ErrorCode.Unavailable);
  }
  return [...codes].sort((a, b) => a - b);
}

function envelopeSchema(code: number, data: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: { code: { const: code }, message: { type: "string" }, data },
    required: ["code", "message", "data"],
    additionalProperties: false,
  };
}

const errorSchema = (codes: number[]): JsonSchema => ({
  type: "object",
  allOf: [schemaRef("Error")],
  properties: { code: { enum: codes } },
});

function describeCode(doc: RouteDoc, code: number): string {
  if (code === 0) return doc.bare ? "Success: the body itself, not in the envelope" : "0: success";
  return `${code}: ${defaultMessages[code as ErrorCode]}`;
}

/** The response headers of the answers with these codes. */
function headersOf(doc: RouteDoc, status: number, codes: number[]): Record<string, unknown> | undefined {
  const headers: Record<string, unknown> = {};
  if (codes.includes(ErrorCode.TooManyAttempts)) {
    headers["Retry-After"] = {
      description: "Seconds to wait, with code 42900",
      required: status === 429,
      schema: { type: "integer", minimum: 1 },
    };
  }
  if (doc.setsCookie && codes.includes(0)) headers["Set-Cookie"] = { description: doc.setsCookie, schema: { type: "string" } };
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/**
 * The partial successes a route may answer, each with its `data`: 40102, and 40105 where this auth
 * requires a second factor of someone (`secondFactor.required`; STUP-4).
 */
function partialSuccessesOf(auth: Auth, doc: RouteDoc): Map<number, JsonSchema> {
  const answers = new Map<number, JsonSchema>();
  if (doc.secondFactor) answers.set(ErrorCode.SecondFactorRequired, doc.secondFactor);
  if (doc.enrolment && auth.config.secondFactor.required !== null) {
    answers.set(ErrorCode.SecondFactorEnrolmentRequired, doc.enrolment);
  }
  return answers;
}

/** RFC 6749 §5.2's error answer, of a route with `errors: "oauth"`. */
const oauthErrorSchema = (errors: string[]): JsonSchema => ({
  type: "object",
  properties: {
    error: { enum: errors },
    error_description: { type: "string", description: "What went wrong, for the developer: never a secret" },
  },
  required: ["error", "error_description"],
});

/** The statuses of a route with `errors: "oauth"` (see `oauthErrorResponse`), whatever `statusMode` says, with their `error` values. */
const oauthStatuses: [status: number, errors: string[], description: string][] = [
  [
    400,
    ["invalid_request", "invalid_client", "unsupported_grant_type", "invalid_scope"],
    "The request is refused (RFC 6749 §5.2); `invalid_client` here when the client did not use `Authorization: Basic`",
  ],
  [401, ["invalid_client"], "Client authentication with `Authorization: Basic` failed"],
  [429, ["temporarily_unavailable"], "Too many failed attempts from this address: retry after `Retry-After` seconds"],
  [500, ["server_error"], "An internal error, reported to `onInternalError`"],
  [503, ["temporarily_unavailable"], "A dependency (the store) is unavailable; try again later"],
];

/** The responses of a route answering RFC 6749's JSON: its `data` bare with 200, and §5.2's errors. */
function oauthResponsesOf(doc: RouteDoc): Record<string, unknown> {
  const noStore = {
    "Cache-Control": { description: "`no-store` (RFC 6749 §5.1)", required: true, schema: { const: "no-store" } },
    Pragma: { description: "`no-cache` (RFC 6749 §5.1)", required: true, schema: { const: "no-cache" } },
  };
  const responses: Record<string, unknown> = {
    "200": {
      description: "The access token (RFC 6749 §5.1), not in the envelope",
      headers: noStore,
      content: { "application/json": { schema: doc.data } },
    },
  };
  for (const [status, errors, description] of oauthStatuses) {
    const headers: Record<string, unknown> = { ...noStore };
    if (status === 401) {
      headers["WWW-Authenticate"] = { description: '`Basic realm="<issuer>"`', required: true, schema: { type: "string" } };
    }
    if (status === 429)
      headers["Retry-After"] = { description: "Seconds to wait", required: true, schema: { type: "integer", minimum: 1 } };
    responses[String(status)] = { description, headers, content: { "application/json": { schema: oauthErrorSchema(errors) } } };
  }
  return responses;
}

/** The responses of a route, grouped by the status each code travels with in this auth's `statusMode`. */
function responsesOf(auth: Auth, route: Route): Record<string, unknown> {
  const { doc } = route;
  if (route.errors === "oauth") return oauthResponsesOf(doc);
  const partial = partialSuccessesOf(auth, doc);
  const byStatus = new Map<number, number[]>();
  for (const code of [0, ...partial.keys(), ...codesOf(route)]) {
    const status = envelopeStatus(auth, code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schemas: JsonSchema[] = [];
    const data = doc.dataFor?.(auth) ?? doc.data;
    if (codes.includes(0)) schemas.push(doc.bare ? data : envelopeSchema(0, data));
    for (const [code, data] of partial) if (codes.includes(code)) schemas.push(envelopeSchema(code, data));
    const errors = codes.filter((code) => code !== 0 && !partial.has(code));
    if (errors.length > 0) schemas.push(errorSchema(errors));
    const headers = headersOf(doc, status, codes);
    responses[String(status)] = {
      description: codes.map((code) => describeCode(doc, code)).join("; "),
      ...(headers ? { headers } : {}),
      content: { "application/json": { schema: schemas.length === 1 ? schemas[0] : { oneOf: schemas } } },
    };
  }
  if (doc.redirect) {
    responses["302"] = {
      description: doc.redirect,
      headers: {
        Location: { description: "Where to send the browser", required: true, schema: { type: "string", format: "uri" } },
        ...(doc.setsCookie ? { "Set-Cookie": { description: doc.setsCookie, schema: { type: "string" } } } : {}),
      },
    };
  }
  return responses;
}

function operationOf(auth: Auth, route: Route): Record<string, unknown> {
  const { doc } = route;
  const role = route.access === "admin" ? `Needs a bearer token whose roles hold \`${auth.config.adminRole}\`.` : undefined;
  const description = [doc.description, role].filter(Boolean).join(" ");
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(description ? { description } : {}),
    tags: [doc.tag],
    ...(doc.parameters
      ? {
          parameters: doc.parameters.map((parameter) => ({
            name: parameter.name,
            in: parameter.in,
            description: parameter.description,
            required: parameter.in === "path" || parameter.required === true,
            schema: parameter.schema ?? { type: "string" },
          })),
        }
      : {}),
    ...(doc.body
      ? {
          requestBody: {
            required: route.method !== "DELETE",
            content: { [route.body === "form" ? "application/x-www-form-urlencoded" : "application/json"]: { schema: doc.body } },
          },
        }
      : {}),
    ...(route.access === "public" ? {} : { security: [{ bearerAuth: [] }] }),
    ...(route.errors === "oauth" ? { security: [{ clientSecretBasic: [] }, {}] } : {}),
    ...(role ? { "x-portcullis-role": auth.config.adminRole } : {}),
    responses: responsesOf(auth, route),
  };
}

/** The component schemas a value refers to, and those they refer to in turn. */
function referencedSchemas(value: unknown): Record<string, JsonSchema> {
  const names = new Set<ComponentName>();
  const pending = [JSON.stringify(value)];
  for (let text = pending.pop(); text !== undefined; text = pending.pop()) {
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
      const component = name as ComponentName;
      if (names.has(component)) continue;
      names.add(component);
      pending.push(JSON.stringify(componentSchemas[component]));
    }
  }
  return Object.fromEntries([...names].sort().map((name) => [name, componentSchemas[name]]));
}

/** The component schemas with the user object's declared fields typed (`user.fields` of `createAuth`). */
function withUserFields(schemas: Record<string, JsonSchema>, auth: Auth): Record<string, JsonSchema> {
  const { PublicUser } = schemas;
  return PublicUser === undefined ? schemas : { ...schemas, PublicUser: publicUserWithFields(PublicUser, auth.userFields) };
}

function descriptionOf(auth: Auth): string {
  const statuses =
    auth.config.statusMode === "always-200"
      ? 'This service runs with `http.statusMode: "always-200"`: every envelope travels with HTTP status 200, so read `code`.'
      : "The HTTP status follows the code: 0, 40102 and 40105 are 200, every other code its first three digits (40001 is 400).";
  return [
    "The sign-in routes of a Portcullis service. Every answer is the envelope `{ code, message, data? }`: `code` 0 is success, 40102 asks for the second factor with `data.tempToken`, 40105 (where a second factor is required) asks to enrol one with `data.tempToken`, and any other code is a refusal, with a `requestId` on 50000 and 50300.",
    statuses,
    "Every route requires TLS (40300 otherwise, unless the client is on loopback). Request bodies are `application/json`, 64 KiB at most unless a route says otherwise. A path under the base path's `/auth` that no operation here names answers 40400. Answers carry `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`; 42900 carries `Retry-After`.",
  ].join("\n\n");
}

/**
 * The OpenAPI 3.1 document of a route table as this auth serves it: what `openApiDocument`
 * answers for the assembled table, and what `GET <basePath>/auth/openapi.json` serves. The table
 * is a parameter so that the route serving the document need not import the table it is part of.
 *
 * @example
 * ```ts
 * const document = describeRoutes(auth, routes, { servers: [{ url: "https://api.example.com" }] });
 * ```
 */
export function describeRoutes(auth: Auth, table: readonly Route[], options: OpenApiOptions = {}): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<RouteTag>();
  for (const route of table) {
    if (route.enabled && !route.enabled(auth)) continue;
    const path = (route.atRoot ? route.path : `${auth.config.basePath}${route.path}`).replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operationOf(auth, route) };
    tags.add(route.doc.tag);
  }
  return {
    openapi: "3.1.1",
    info: { title: "Portcullis authentication API", version: coreVersion, description: descriptionOf(auth) },
    ...(options.servers ? { servers: options.servers } : {}),
    tags: [...tags].map((name) => ({ name, description: tagDescriptions[name] })),
    paths,
    components: {
      schemas: withUserFields(referencedSchemas({ paths, error: schemaRef("Error") }), auth),
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "An access token of a token set, in `Authorization: Bearer`; never in a query string.",
        },
        ...(table.some((route) => route.errors === "oauth" && route.enabled?.(auth) !== false)
          ? {
              clientSecretBasic: {
                type: "http",
                scheme: "basic",
                description:
                  "A service account's `client_id` and client secret, each form-urlencoded, in `Authorization: Basic` (RFC 6749 §2.3.1). The token endpoint takes a `private_key_jwt` client assertion in the body instead.",
              },
            }
          : {}),
      },
    },
  };
}
