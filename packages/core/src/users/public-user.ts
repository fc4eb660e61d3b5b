/** The user as the contract shows it in token sets, `/me` and the admin views. */
export interface PublicUser {
  id: string;
  username: string;
  roles: string[];
  totpEnabled: boolean;
  /** The account's email address, or null. */
  email: string | null;
  /** Whether `email` is proven to be the user's; only a verified address is unique to one account (EV-1). */
  emailVerified: boolean;
  /** When the account was created, epoch milliseconds. */
  createdAt: number;
}

/**
 * The `publicUser` option of `createAuth`: extra fields for the user object of every token set,
 * `/me` and the admin views, such as a single `role` for clients built for the original
 * service. It receives a copy of the contract's fields and answers a plain object (or a promise
 * of one); the contract's fields win over any field of the same name.
 */
export type PublicUserHook = (user: PublicUser) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** True for an object made by `{}` or `Object.create(null)`: not an array, a Date, a Map or a class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * The contract's user with the fields of the operator's hook added, the contract's winning. A hook
 * that throws is let through and one that answers anything but a plain object is a `TypeError`:
 * either is an internal error (50000, `onInternalError`), never a half-built user.
 */
export async function withHookFields(user: PublicUser, hook: PublicUserHook | undefined): Promise<PublicUser> {
  if (hook === undefined) return user;
  const extra: unknown = await hook({ ...user, roles: [...user.roles] });
  if (!isPlainObject(extra)) {
    throw new TypeError(`The publicUser hook must answer a plain object of extra fields; it answered ${kindOf(extra)}`);
  }
  return { ...extra, ...user };
}

/** What a value is, for a message: `null`, `undefined`, "an array", "an instance of Map", "a string". */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an instance of ${(value as object).constructor?.name ?? "another prototype"}`;
  return `a ${typeof value}`;
}
