/** A value an additional user field holds: JSON-safe, stored as it is by every store. */
export type FieldValue = string | number | boolean | string[] | null;

/** What a field is made of: the builder's function that made it. */
export type FieldKind = "string" | "integer" | "number" | "boolean" | "enum" | "stringArray";

/**
 * Who may set a field and where it is shown, common to every kind. Administrators (the admin
 * routes, `updateUser`, `createUser`, `ensureUser`) may always set every field.
 */
export interface FieldFlags {
  /** The value must be given when the account is made, and is never null (unless a `default` fills it). Default false. */
  required?: boolean;
  /** May be given at sign-up (`POST /auth/register`, `register`). Default false. */
  signUp?: boolean;
  /** The user may change it themselves (`PATCH /auth/me`, `updateProfile`). Default false. */
  selfEdit?: boolean;
  /**
   * Carried in access tokens (claim `fields`), so `req.auth.user` has it without a storage read.
   * Default false. Strings need a `maxLength` of at most 200, string arrays at most 10 items of 50:
   * every token travels in a request header.
   */
  inToken?: boolean;
  /** Shown in the user object of `/me`, token sets and the admin views. Default true. */
  inMe?: boolean;
}

/** Options of {@link field.string}. */
export interface StringFieldOptions extends FieldFlags {
  /** Default 0. */
  minLength?: number;
  /** In UTF-16 code units, as `String.length` counts. Default 255; at most 10,000. */
  maxLength?: number;
  /** The whole value must match (tested with `test`; give `^…$` anchors). No `g` or `y` flag. */
  pattern?: RegExp;
  /** The value of users who have none: at creation, and for users made before the field was declared. Default null. */
  default?: string | null;
}

/** Options of {@link field.integer} and {@link field.number}. */
export interface NumberFieldOptions extends FieldFlags {
  min?: number;
  max?: number;
  /** As for {@link StringFieldOptions.default}. */
  default?: number | null;
}

/** Options of {@link field.boolean}. */
export interface BooleanFieldOptions extends FieldFlags {
  /** As for {@link StringFieldOptions.default}. */
  default?: boolean | null;
}

/** Options of {@link field.enum}. */
export interface EnumFieldOptions<Value extends string = string> extends FieldFlags {
  /** As for {@link StringFieldOptions.default}: one of the values, or null. */
  default?: Value | null;
}

/** Options of {@link field.stringArray}. */
export interface StringArrayFieldOptions extends FieldFlags {
  /** Default 20; at most 1,000. */
  maxItems?: number;
  /** Of each item. Default 100; at most 1,000. */
  maxLength?: number;
  /** As for {@link StringFieldOptions.default}. */
  default?: readonly string[] | null;
}

/**
 * One declared field, as {@link field} makes it: its kind, its options, and for an enum its values.
 * `Value` and `Options` carry the declaration's types to the user objects (a phantom, never set).
 */
export interface UserField<Value extends FieldValue = FieldValue, Options extends FieldFlags = FieldFlags> {
  readonly kind: FieldKind;
  readonly options: Options;
  /** The values of an enum field; empty for the other kinds. */
  readonly values: readonly string[];
  /** @internal The type of the value, for inference only: never present. */
  readonly "~value"?: Value;
}

/** The `user.fields` option of `createAuth`: field names (lower camelCase) to their declarations. */
// biome-ignore lint/suspicious/noExplicitAny: any field's options, whatever their literal types.
export type UserFieldDefinitions = { readonly [name: string]: UserField<any, any> };

/** The value type of one declared field: without a non-null `default` and not `required`, it may be null. */
export type FieldValueOf<Field> = Field extends { readonly options: infer Options; readonly "~value"?: infer Value }
  ? Options extends { required: true }
    ? Value
    : Options extends { default: infer Default }
      ? null extends Default
        ? Value | null
        : Value
      : Value | null
  : never;

// Matched by shape, not as UserField<…>: options with no flag (`{ maxLength: 3 }`) share no key with FieldFlags.
type OptionsOf<Field> = Field extends { readonly options: infer Options } ? Options : never;

/** Every declared field's value, by name: what the store holds of a user. */
export type UserFieldValues<Fields> = { -readonly [Name in keyof Fields]: FieldValueOf<Fields[Name]> };

/** The fields declared `inToken: true`: what access tokens carry and `req.auth.user` holds. */
export type TokenFieldValues<Fields> = {
  readonly [Name in keyof Fields as OptionsOf<Fields[Name]> extends { inToken: true } ? Name : never]: FieldValueOf<Fields[Name]>;
};

/** The fields shown in the user object (`/me`, token sets, admin views): all but those declared `inMe: false`. */
export type PublicFieldValues<Fields> = {
  -readonly [Name in keyof Fields as OptionsOf<Fields[Name]> extends { inMe: false } ? never : Name]: FieldValueOf<Fields[Name]>;
};

/** What sign-up accepts: the fields declared `signUp: true`, each optional. */
export type SignUpFieldInput<Fields> = {
  -readonly [Name in keyof Fields as OptionsOf<Fields[Name]> extends { signUp: true } ? Name : never]?: FieldValueOf<
    Fields[Name]
  >;
};

/** What the user's own profile update accepts: the fields declared `selfEdit: true`, each optional. */
export type SelfEditFieldInput<Fields> = {
  -readonly [Name in keyof Fields as OptionsOf<Fields[Name]> extends { selfEdit: true } ? Name : never]?: FieldValueOf<
    Fields[Name]
  >;
};

/** What an administrator or the service may set: any declared field, each optional. */
export type AdminFieldInput<Fields> = { -readonly [Name in keyof Fields]?: FieldValueOf<Fields[Name]> };

function make<Value extends FieldValue, Options extends FieldFlags>(
  kind: FieldKind,
  options: Options | undefined,
  values: readonly string[] = [],
): UserField<Value, Options> {
  return Object.freeze({ kind, options: Object.freeze({ ...(options ?? {}) }) as Options, values: Object.freeze([...values]) });
}

/**
 * The builder of additional user fields, declared once in `createAuth({ user: { fields } })`.
 * Each function checks nothing itself: `createAuth` checks the whole declaration and throws a
 * `TypeError` naming the field and the option to fix.
 *
 * @example
 * ```ts
 * import { createAuth, field } from "@portcullis/core";
 * const auth = createAuth({
 *   ...config,
 *   user: {
 *     fields: {
 *       company: field.string({ maxLength: 100, signUp: true, selfEdit: true }),
 *       plan: field.enum(["free", "pro"], { default: "free", inToken: true }),
 *     },
 *   },
 * });
 * ```
 * @see docs/flows/user-fields.md
 */
export const field = {
  /** A string: `minLength`, `maxLength` (default 255), an optional `pattern`. */
  string<const Options extends StringFieldOptions = Record<never, never>>(options?: Options): UserField<string, Options> {
    return make("string", options);
  },
  /** A safe integer between `min` and `max` (inclusive). */
  integer<const Options extends NumberFieldOptions = Record<never, never>>(options?: Options): UserField<number, Options> {
    return make("integer", options);
  },
  /** A finite number between `min` and `max` (inclusive). */
  number<const Options extends NumberFieldOptions = Record<never, never>>(options?: Options): UserField<number, Options> {
    return make("number", options);
  },
  /** `true` or `false`. */
  boolean<const Options extends BooleanFieldOptions = Record<never, never>>(options?: Options): UserField<boolean, Options> {
    return make("boolean", options);
  },
  /** One of the given strings (1 to 100 values of 1 to 100 characters each). */
  enum<
    const Values extends readonly [string, ...string[]],
    const Options extends EnumFieldOptions<Values[number]> = Record<never, never>,
  >(values: Values, options?: Options): UserField<Values[number], Options> {
    return make("enum", options, values);
  },
  /** A list of strings: at most `maxItems` (default 20) of at most `maxLength` (default 100) characters each. */
  stringArray<const Options extends StringArrayFieldOptions = Record<never, never>>(
    options?: Options,
  ): UserField<string[], Options> {
    return make("stringArray", options);
  },
};
