import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { type ResolvedField, valueProblem } from "./declaration.js";
import type { FieldValue } from "./field.js";

/** Who sets fields, which decides which of them they may set. */
export type FieldWriter = "signUp" | "selfEdit" | "admin";

const refusedBy: Record<Exclude<FieldWriter, "admin">, string> = {
  signUp: "cannot be set at sign-up",
  selfEdit: "cannot be changed by the user",
};

/** Whether a field may hold null: neither `required` nor given a non-null `default`. */
export function isNullable(field: ResolvedField): boolean {
  return !field.required && field.default === null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Reads the `fields` of a request or a flow's input for `writer`: each name must be declared
 * (40002 otherwise), one `writer` may set (42200 naming it: sign-up takes `signUp` fields, the
 * user's own update `selfEdit` ones, administrators and the service any), and its value of the
 * field's type (40002) within its limits (42200). Null clears a field that may be null. Answers
 * the given fields only, copied.
 *
 * @throws {AuthError} 40002 `fields` that is no object, an undeclared name, a value of the wrong
 *   type; 42200 a field this writer may not set, a value out of its limits, null for a field that
 *   cannot be null. Each message names the field as `fields.<name>`.
 */
export function readFieldInput(
  declared: readonly ResolvedField[],
  input: unknown,
  writer: FieldWriter,
): Record<string, FieldValue> {
  if (input === undefined || input === null) return {};
  if (!isPlainObject(input)) throw new AuthError(ErrorCode.MalformedParameter, "fields must be an object");
  const byName = new Map(declared.map((field) => [field.name, field]));
  const read: Record<string, FieldValue> = {};
  for (const [name, value] of Object.entries(input)) {
    const field = byName.get(name);
    if (field === undefined)
      throw new AuthError(ErrorCode.MalformedParameter, `fields.${JSON.stringify(name).slice(1, -1)} is not a declared field`);
    if (writer !== "admin" && !field[writer])
      throw new AuthError(ErrorCode.ValidationFailed, `fields.${name} ${refusedBy[writer]}`);
    if (value === undefined) continue;
    if (value === null) {
      if (!isNullable(field)) throw new AuthError(ErrorCode.ValidationFailed, `fields.${name} cannot be null`);
      read[name] = null;
      continue;
    }
    const problem = valueProblem(field, value);
    if (problem !== null) {
      const code = problem.code === "malformed" ? ErrorCode.MalformedParameter : ErrorCode.ValidationFailed;
      throw new AuthError(code, `fields.${name} ${problem.message}`);
    }
    read[name] = Array.isArray(value) ? [...value] : (value as FieldValue);
  }
  return read;
}

/**
 * The fields of a new account: each given value, else the field's default, else null.
 *
 * @throws {AuthError} 40001 a `required` field without a value or default, named.
 */
export function newUserFields(declared: readonly ResolvedField[], given: Record<string, FieldValue>): Record<string, FieldValue> {
  const fields: Record<string, FieldValue> = {};
  for (const field of declared) {
    const value = given[field.name] ?? copyValue(field.default);
    if (value === null && !isNullable(field)) throw new AuthError(ErrorCode.MissingParameter, `fields.${field.name} is required`);
    fields[field.name] = value;
  }
  return fields;
}

function copyValue(value: FieldValue): FieldValue {
  return Array.isArray(value) ? [...value] : value;
}

/**
 * Every declared field's value of a stored user (or of a token's claim): the stored value when it
 * is one of the field's, else its default (a user made before the field was declared, a column
 * added later, a value a narrower declaration now refuses), else null. Undeclared names are left out.
 */
export function storedFieldValues(declared: readonly ResolvedField[], stored: unknown): Record<string, FieldValue> {
  const source = isPlainObject(stored) ? stored : {};
  const fields: Record<string, FieldValue> = {};
  for (const field of declared) {
    const value = Object.hasOwn(source, field.name) ? source[field.name] : undefined;
    const held = value !== undefined && value !== null && valueProblem(field, value) === null;
    fields[field.name] = held ? copyValue(value as FieldValue) : copyValue(field.default);
  }
  return fields;
}

/** The values of the fields with `flag` set, of values already read with {@link storedFieldValues}. */
export function fieldsWhere(
  declared: readonly ResolvedField[],
  values: Record<string, FieldValue>,
  flag: "inToken" | "inMe",
): Record<string, FieldValue> {
  const picked: Record<string, FieldValue> = {};
  for (const field of declared) if (field[flag]) picked[field.name] = copyValue(values[field.name] ?? null);
  return picked;
}

/**
 * The fields of `given` whose value differs from the user's (defaults filled in), or null when
 * none does: what an update writes.
 */
export function changedFields(
  auth: { readonly userFields: readonly ResolvedField[] },
  user: { fields?: Record<string, FieldValue> },
  given: Record<string, FieldValue> | undefined,
): Record<string, FieldValue> | null {
  if (given === undefined) return null;
  const current = storedFieldValues(auth.userFields, user.fields);
  const changed = Object.entries(given).filter(([name, value]) => JSON.stringify(current[name]) !== JSON.stringify(value));
  return changed.length === 0 ? null : Object.fromEntries(changed);
}
