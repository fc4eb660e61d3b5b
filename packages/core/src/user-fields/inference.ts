import type { Auth } from "../auth.js";
import type { PublicUser } from "../users/public-user.js";
import type { PublicFieldValues, TokenFieldValues, UserFieldDefinitions } from "./field.js";

/**
 * Where a service registers its auth instance once, so that types no generic can reach (Express's
 * global `req.auth`, Fastify's `request.auth`, `AccessContext` by default) know its additional
 * user fields, as TanStack Router's `Register` does.
 *
 * @example
 * ```ts
 * export const auth = createAuth({ ...config, user: { fields } });
 * declare module "@portcullis/core" {
 *   interface Register {
 *     auth: typeof auth;
 *   }
 * }
 * // req.auth?.user.plan is typed in every Express handler.
 * ```
 */
// biome-ignore lint/suspicious/noEmptyInterface: the service adds `auth` by declaration merging.
export interface Register {}

/** The auth instance the service registered in {@link Register}, else `Auth` with no fields. */
export type RegisteredAuth = Register extends { auth: infer Registered } ? Registered : Auth;

/** The field declaration of an auth instance's type (`typeof auth`); `{}` for one without fields. */
export type FieldsOf<A> = A extends { readonly "~fields"?: infer Fields }
  ? NonNullable<Fields> extends UserFieldDefinitions
    ? NonNullable<Fields>
    : // biome-ignore lint/complexity/noBannedTypes: no fields.
      {}
  : // biome-ignore lint/complexity/noBannedTypes: no fields.
    {};

/** The field declaration of the {@link Register registered} auth instance. */
export type RegisteredFields = FieldsOf<RegisteredAuth>;

/**
 * The user object of an auth instance (`/me`, token sets, admin views): the contract's fields and
 * the additional fields not declared `inMe: false`.
 *
 * @example
 * ```ts
 * type User = InferUser<typeof auth>; // { id, username, …, company: string | null, plan: "free" | "pro" }
 * ```
 */
export type InferUser<A> = PublicUser & PublicFieldValues<FieldsOf<A>>;

/**
 * Who a verified access token speaks for, as `req.auth.user` holds it: the user's id and roles,
 * and the additional fields declared `inToken: true`, read from the token (no storage read).
 */
export type AccessUser<Fields = RegisteredFields> = {
  readonly id: string;
  readonly roles: readonly string[];
} & TokenFieldValues<Fields>;
