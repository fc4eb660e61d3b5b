import type { Auth } from "../../auth.js";
import { type OpenApiDocument, describeRoutes } from "../describe-routes.js";
import { schemaRef } from "../openapi-schemas.js";
import type { Route } from "../route-types.js";

const served = new WeakMap<Auth, OpenApiDocument>();

/** The document `GET <basePath>/auth/openapi.json` serves: made once per auth, without `servers`. */
function servedDocument(auth: Auth, table: readonly Route[]): OpenApiDocument {
  let document = served.get(auth);
  if (!document) {
    document = describeRoutes(auth, table);
    served.set(auth, document);
  }
  return document;
}

/**
 * Documents about the service itself: the OpenAPI document of the routes, and the JWKS.
 *
 * @param table Gives the assembled route table, which the OpenAPI document describes and this
 *   route is part of: the assembly passes it (a function, as the table is still being assembled
 *   when this is called), so that this file need not import the assembly.
 */
export const metadataRoutes = (table: () => readonly Route[]): readonly Route[] => [
  {
    method: "GET",
    path: "/auth/openapi.json",
    access: "public",
    enabled: (auth) => auth.config.openApi,
    doc: {
      operationId: "openApiDocument",
      tag: "Metadata",
      summary: "This OpenAPI document",
      description: "Served with `http.openApi: true`; `Cache-Control: public, max-age=300`.",
      data: {
        type: "object",
        properties: { openapi: { type: "string", pattern: "^3\\.1\\." }, info: { type: "object" }, paths: { type: "object" } },
        required: ["openapi", "info", "paths"],
      },
      bare: true,
      codes: [],
    },
    async handle({ auth }) {
      return { data: servedDocument(auth, table()), bare: { cacheControl: "public, max-age=300" } };
    },
  },
  {
    method: "GET",
    path: "/.well-known/jwks.json",
    atRoot: true,
    access: "public",
    enabled: (auth) => auth.keys.jwks !== null,
    doc: {
      operationId: "jwks",
      tag: "Metadata",
      summary: "The public keys that verify access tokens",
      description: "Served only when tokens are signed with EdDSA or ES256, at the root. `Cache-Control: public, max-age=300`.",
      data: schemaRef("JwkSet"),
      bare: true,
      codes: [],
    },
    async handle({ auth }) {
      return { data: auth.keys.jwks, bare: { cacheControl: "public, max-age=300" } };
    },
  },
];
