import type { JsonSchema } from "../http/openapi-schemas.js";
import type { ResolvedField } from "./declaration.js";
import { isNullable } from "./values.js";

/** The JSON Schema of one declared field's value, null included where the field may be null. */
export function fieldValueSchema(field: ResolvedField): JsonSchema {
  const nullable = isNullable(field);
  const typed = (type: string, rest: JsonSchema) => ({ type: nullable ? [type, "null"] : type, ...rest });
  switch (field.kind) {
    case "string":
      return typed("string", {
        minLength: field.minLength,
        maxLength: field.maxLength,
        ...(field.pattern ? { pattern: field.pattern.source } : {}),
      });
    case "enum":
      return { enum: nullable ? [...field.values, null] : [...field.values] };
    case "integer":
      return typed("integer", { minimum: field.min, maximum: field.max });
    case "number":
      return typed("number", { minimum: field.min, maximum: field.max });
    case "boolean":
      return typed("boolean", {});
    case "stringArray":
      return typed("array", { maxItems: field.maxItems, items: { type: "string", maxLength: field.maxLength } });
  }
}

/**
 * The `PublicUser` component with the declared fields the user object shows (`inMe`): each
 * property typed, and required, since every user object holds every one (its default when unset).
 */
export function publicUserWithFields(schema: JsonSchema, fields: readonly ResolvedField[]): JsonSchema {
  const shown = fields.filter((field) => field.inMe);
  if (shown.length === 0) return schema;
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const field of shown) properties[field.name] = fieldValueSchema(field);
  return { ...schema, properties, required: [...((schema.required as string[]) ?? []), ...shown.map((field) => field.name)] };
}
