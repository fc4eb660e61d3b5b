import type { Auth } from "../auth.js";
import { type OpenApiDocument, type OpenApiOptions, describeRoutes } from "./describe-routes.js";
import { routes } from "./routes/index.js";

/**
 * The OpenAPI 3.1 document of the routes this auth serves, built from the route table: only the
 * routes its configuration turns on (passkeys, OAuth providers, the JWKS of an asymmetric
 * signing key, the document route itself), under its `http.basePath`, with the HTTP status each
 * business code travels with in its `http.statusMode`. Each operation's request body, `data`
 * and codes come from the route's own `doc`, so the document changes with the routes; the HTTP
 * tests check the server's real answers against it.
 *
 * @example
 * ```ts
 * import { writeFile } from "node:fs/promises";
 * const document = openApiDocument(auth, { servers: [{ url: "https://api.example.com" }] });
 * await writeFile("openapi.json", JSON.stringify(document, null, 2));
 * ```
 */
export function openApiDocument(auth: Auth, options: OpenApiOptions = {}): OpenApiDocument {
  return describeRoutes(auth, routes, options);
}
