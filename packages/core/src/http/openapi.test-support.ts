import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import type { OpenApiDocument } from "./describe-routes.js";

/** The members of an OpenAPI document around its schemas: not JSON Schema keywords, so Ajv is told to let them be. */
const openApiMembers = ["openapi", "info", "servers", "tags", "paths", "components", "security", "webhooks", "externalDocs"];

/** A JSON pointer to a location of a document, as a URI fragment. */
export const pointerTo = (...segments: string[]): string =>
  `#${segments.map((segment) => `/${encodeURIComponent(segment.replaceAll("~", "~0").replaceAll("/", "~1"))}`).join("")}`;

/**
 * Compiles the schemas of an OpenAPI document with Ajv as JSON Schema 2020-12 (the dialect of
 * OpenAPI 3.1), strict, with the formats of `ajv-formats`; a schema's `$ref`s into
 * `#/components/schemas` resolve in the document itself. Each validator is compiled at its
 * first use and kept.
 *
 * @example
 * ```ts
 * const validatorAt = schemaValidators(openApiDocument(auth));
 * validatorAt(pointerTo("components", "schemas", "TokenSet"))(body.data);
 * ```
 */
export function schemaValidators(document: OpenApiDocument): (pointer: string) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  // ajv-formats is CommonJS: its function is both the module and its `default`.
  ajvFormats.default(ajv);
  ajv.addVocabulary(openApiMembers);
  const id = "urn:portcullis:openapi";
  ajv.addSchema(document, id);
  return (pointer) => {
    const validate = ajv.getSchema(`${id}${pointer}`);
    if (!validate) throw new Error(`No schema at ${pointer}`);
    return validate;
  };
}

/** The JSON pointers of every schema of a document: its components, request bodies and responses. */
export function schemaPointers(document: OpenApiDocument): string[] {
  const pointers = Object.keys(document.components.schemas).map((name) => pointerTo("components", "schemas", name));
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations) as [string, OperationShape][]) {
      const bodyTypes = Object.keys((operation.requestBody as { content?: object } | undefined)?.content ?? {});
      for (const type of bodyTypes) pointers.push(pointerTo("paths", path, method, "requestBody", "content", type, "schema"));
      for (const [status, response] of Object.entries(operation.responses)) {
        if (response.content)
          pointers.push(pointerTo("paths", path, method, "responses", status, "content", "application/json", "schema"));
      }
    }
  }
  return pointers;
}

/** The parts of an operation object the tests read. */
export interface OperationShape {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, { required?: boolean }> }>;
}
