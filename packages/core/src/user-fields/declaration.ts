import { fail } from "../config-values.js";
import type { FieldKind, FieldValue, UserField } from "./field.js";

/** A declared field with every option checked and filled in: what the flows and stores read. */
export interface ResolvedField {
  readonly name: string;
  readonly kind: FieldKind;
  /** An enum's values; empty for the other kinds. */
  readonly values: readonly string[];
  readonly required: boolean;
  readonly signUp: boolean;
  readonly selfEdit: boolean;
  readonly inToken: boolean;
  readonly inMe: boolean;
  /** The value of users who have none (null when not declared). */
  readonly default: FieldValue;
  /** Strings: the length range; string arrays: each item's. */
  readonly minLength: number;
  readonly maxLength: number;
  readonly pattern: RegExp | null;
  /** Numbers: the range. */
  readonly min: number;
  readonly max: number;
  /** String arrays: the most items. */
  readonly maxItems: number;
}

/** The `user` option of `createAuth`. */
export interface UserConfig<Fields> {
  /** Additional fields of every user, made with `field` (see `docs/flows/user-fields.md`). */
  fields?: Fields;
}

/**
 * Names no field may take: the user's own fields, the names of the request bodies that carry
 * fields, what `req.auth.user` holds beside them, and what every object inherits.
 */
const reservedNames = new Set([
  "id",
  "username",
  "usernameKey",
  "password",
  "passwordHash",
  "roles",
  "disabled",
  "tokenVersion",
  "source",
  "email",
  "emailVerified",
  "verifiedEmailKey",
  "createdAt",
  "updatedAt",
  "totpEnabled",
  "hasPassword",
  "sessions",
  "passkeys",
  "identities",
  "fields",
  "user",
  ...Object.getOwnPropertyNames(Object.prototype),
]);

const fieldKinds: readonly FieldKind[] = ["string", "integer", "number", "boolean", "enum", "stringArray"];
const knownOptions: Record<FieldKind, readonly string[]> = {
  string: ["minLength", "maxLength", "pattern"],
  integer: ["min", "max"],
  number: ["min", "max"],
  boolean: [],
  enum: [],
  stringArray: ["maxItems", "maxLength"],
};
const flagNames = ["required", "signUp", "selfEdit", "inToken", "inMe"] as const;

/** The longest string, and the largest string array, a field carried in tokens may hold. */
export const tokenStringLimit = 200;
export const tokenArrayLimit = { items: 10, length: 50 };
/** At most this many fields: each is a column of the users table. */
const maxFields = 50;

/**
 * Checks the `user.fields` declaration of `createAuth` and fills in its defaults. Every mistake is
 * a `TypeError` naming the field and what to fix: a name that is no lower camelCase identifier
 * (`^[a-z][A-Za-z0-9]{0,62}$`) or is one of the user's own (`username`, `roles`, …), an unknown
 * kind or option, a limit out of range, a default the field itself would refuse, an `inToken`
 * field that could make tokens long.
 */
export function resolveUserFields(user: unknown): readonly ResolvedField[] {
  if (user === undefined) return [];
  if (typeof user !== "object" || user === null || Array.isArray(user)) fail("user must be an object: { fields }");
  const unknown = Object.keys(user).filter((key) => key !== "fields");
  if (unknown.length > 0) fail(`user has an unknown option ${JSON.stringify(unknown[0])}; it takes { fields }`);
  const fields = (user as { fields?: unknown }).fields;
  if (fields === undefined) return [];
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    fail("user.fields must be an object of fields made with field.string(), field.enum(), …");
  }
  const entries = Object.entries(fields);
  if (entries.length > maxFields) fail(`user.fields declares ${entries.length} fields; at most ${maxFields}`);
  return Object.freeze(entries.map(([name, declared]) => Object.freeze(resolveField(name, declared))));
}

function resolveField(name: string, declared: unknown): ResolvedField {
  const at = `user.fields.${name}`;
  if (!/^[a-z][A-Za-z0-9]{0,62}$/.test(name)) {
    fail(`${at}: a field name must be a lower camelCase identifier of 1 to 63 letters and digits, such as "company"`);
  }
  if (reservedNames.has(name)) fail(`${at}: "${name}" is a name of the user's own; choose another`);
  const candidate = declared as Partial<UserField> | null;
  if (typeof candidate !== "object" || candidate === null || !fieldKinds.includes(candidate.kind as FieldKind)) {
    fail(
      `${at} must be made with field.string(), field.integer(), field.number(), field.boolean(), field.enum() or field.stringArray()`,
    );
  }
  const kind = candidate.kind as FieldKind;
  const options = (candidate.options ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (key !== "default" && !(flagNames as readonly string[]).includes(key) && !knownOptions[kind].includes(key)) {
      fail(`${at} has an unknown option ${JSON.stringify(key)} for a ${kind} field`);
    }
  }
  const flag = (key: (typeof flagNames)[number], fallback: boolean) => {
    const value = options[key];
    if (value === undefined) return fallback;
    if (typeof value !== "boolean") fail(`${at}.${key} must be true or false`);
    return value;
  };
  const values = kind === "enum" ? enumValues(at, candidate.values) : [];
  const isString = kind === "string";
  const resolved: ResolvedField = {
    name,
    kind,
    values,
    required: flag("required", false),
    signUp: flag("signUp", false),
    selfEdit: flag("selfEdit", false),
    inToken: flag("inToken", false),
    inMe: flag("inMe", true),
    default: null,
    minLength: isString ? count(at, "minLength", options.minLength, 0, 10_000) : 0,
    maxLength: isString
      ? count(at, "maxLength", options.maxLength, 255, 10_000)
      : kind === "stringArray"
        ? count(at, "maxLength", options.maxLength, 100, 1_000)
        : 0,
    pattern: isString ? patternOf(at, options.pattern) : null,
    min: bound(at, "min", options.min, kind, -Number.MAX_VALUE),
    max: bound(at, "max", options.max, kind, Number.MAX_VALUE),
    maxItems: kind === "stringArray" ? count(at, "maxItems", options.maxItems, 20, 1_000) : 0,
  };
  if (resolved.minLength > resolved.maxLength) fail(`${at}.minLength must not exceed its maxLength`);
  if (resolved.min > resolved.max) fail(`${at}.min must not exceed its max`);
  if (resolved.inToken && kind === "string" && resolved.maxLength > tokenStringLimit) {
    fail(`${at} is inToken: its maxLength must be at most ${tokenStringLimit}, since every token travels in a request header`);
  }
  if (
    resolved.inToken &&
    kind === "stringArray" &&
    (resolved.maxItems > tokenArrayLimit.items || resolved.maxLength > tokenArrayLimit.length)
  ) {
    fail(
      `${at} is inToken: at most ${tokenArrayLimit.items} items (maxItems) of ${tokenArrayLimit.length} characters (maxLength)`,
    );
  }
  const fallback = options.default === undefined ? null : options.default;
  if (fallback !== null) {
    const problem = valueProblem(resolved, fallback);
    if (problem !== null) fail(`${at}.default ${problem.message}`);
  }
  return {
    ...resolved,
    default: Array.isArray(fallback) ? (Object.freeze([...fallback]) as string[]) : (fallback as FieldValue),
  };
}

function enumValues(at: string, values: unknown): readonly string[] {
  if (
    !Array.isArray(values) ||
    values.length === 0 ||
    values.length > 100 ||
    !values.every((value) => typeof value === "string" && value.length > 0 && value.length <= 100) ||
    new Set(values).size !== values.length
  ) {
    fail(`${at} must list 1 to 100 different values of 1 to 100 characters: field.enum(["free", "pro"])`);
  }
  return Object.freeze([...values]);
}

function count(at: string, key: string, value: unknown, fallback: number, most: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > most) {
    fail(`${at}.${key} must be a whole number from 0 to ${most}; got ${JSON.stringify(value)}`);
  }
  return value as number;
}

function bound(at: string, key: string, value: unknown, kind: FieldKind, fallback: number): number {
  if (value === undefined) return kind === "integer" ? Math.sign(fallback) * Number.MAX_SAFE_INTEGER : fallback;
  const valid = kind === "integer" ? Number.isSafeInteger(value) : Number.isFinite(value);
  if (!valid)
    fail(`${at}.${key} must be ${kind === "integer" ? "a safe integer" : "a finite number"}; got ${JSON.stringify(value)}`);
  return value as number;
}

function patternOf(at: string, value: unknown): RegExp | null {
  if (value === undefined) return null;
  if (!(value instanceof RegExp)) fail(`${at}.pattern must be a RegExp`);
  if (value.global || value.sticky) fail(`${at}.pattern must not have the g or y flag: test() would remember where it stopped`);
  return value;
}

/** Why a value is refused, as the code to answer: 40002 for the wrong type, 42200 for a value out of the field's limits. */
export interface ValueProblem {
  code: "malformed" | "refused";
  message: string;
}

/**
 * Why `value` is not a value of `field` (null is not checked here), or null when it is one: the
 * wrong JSON type is `malformed`; a value of the right type outside the declared limits is `refused`.
 */
export function valueProblem(field: ResolvedField, value: unknown): ValueProblem | null {
  const malformed = (message: string): ValueProblem => ({ code: "malformed", message });
  const refused = (message: string): ValueProblem => ({ code: "refused", message });
  switch (field.kind) {
    case "string":
    case "enum": {
      if (typeof value !== "string") return malformed("must be a string");
      if (field.kind === "enum")
        return field.values.includes(value) ? null : refused(`must be one of ${field.values.join(", ")}`);
      if (value.length < field.minLength) return refused(`must be at least ${field.minLength} characters`);
      if (value.length > field.maxLength) return refused(`must be at most ${field.maxLength} characters`);
      if (field.pattern !== null && !field.pattern.test(value)) return refused("does not have the required form");
      return null;
    }
    case "integer":
    case "number": {
      if (typeof value !== "number") return malformed("must be a number");
      if (field.kind === "integer" ? !Number.isSafeInteger(value) : !Number.isFinite(value)) {
        return refused(field.kind === "integer" ? "must be a whole number" : "must be a finite number");
      }
      if (value < field.min || value > field.max) return refused(`must be from ${field.min} to ${field.max}`);
      return null;
    }
    case "boolean":
      return typeof value === "boolean" ? null : malformed("must be true or false");
    case "stringArray": {
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string"))
        return malformed("must be an array of strings");
      if (value.length > field.maxItems) return refused(`must have at most ${field.maxItems} items`);
      if (value.some((item: string) => item.length > field.maxLength))
        return refused(`items must be at most ${field.maxLength} characters`);
      return null;
    }
  }
}

/** The ways a configuration makes accounts without an administrator or the service's code. */
export interface AccountSources {
  signUp: boolean;
  providers: boolean;
  directory: boolean;
}

/**
 * Refuses a `required` field without a `default` that some configured way of making accounts
 * could not fill: sign-up when the field is not `signUp`, a provider's first sign-in, the
 * directory. Such an account could never be made (40001 at every attempt); a `default` fills it.
 */
export function checkRequiredFields(fields: readonly ResolvedField[], sources: AccountSources): void {
  for (const field of fields) {
    if (!field.required || field.default !== null) continue;
    const unfilled = [
      sources.signUp && !field.signUp ? "sign-up (the field is not signUp)" : null,
      sources.providers ? "a provider's first sign-in" : null,
      sources.directory ? "the directory" : null,
    ].filter((way) => way !== null);
    if (unfilled.length > 0) {
      fail(
        `user.fields.${field.name} is required without a default, which ${unfilled.join(" and ")} cannot give: give it a default`,
      );
    }
  }
}
