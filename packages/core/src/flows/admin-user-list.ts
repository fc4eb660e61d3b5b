import type { Auth } from "../auth.js";
import { keyedTag } from "../crypto/keyed-tag.js";
import { constantTimeEqual } from "../crypto/random.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { hasLoneSurrogate, longerThan, maxUsernameLength, usernameKeyOf } from "../users/username.js";
import { type AdminUser, adminUserView } from "./admin-users.js";
import { optionalString } from "./input.js";

/** The input of {@link listUsers}. */
export interface ListUsersInput {
  /** The `nextCursor` of the page before; absent for the first page. */
  cursor?: string;
  /** Users per page, 1 to {@link maxPageSize}. Default {@link defaultPageSize}. */
  limit?: number;
  /** A username prefix, compared as lookup keys are: NFKC, then lower case (`Zo` finds `zoë`, `ZOË`). */
  q?: string;
}

/** A page of users in the order of their lookup keys (code point order). */
export interface UserPage {
  users: AdminUser[];
  /** What to send as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** Users per page when the caller does not say. */
export const defaultPageSize = 20;
/** The most users one page holds. */
export const maxPageSize = 100;

const cursorPurpose = "portcullis user list cursor v1";
const cursorShape = /^([A-Za-z0-9_-]{1,1000})\.([A-Za-z0-9_-]{22})$/;
const badCursor = () => new AuthError(ErrorCode.MalformedParameter, "The cursor is not one this listing gave");

/** The cursor after `lastKey` in the listing of `prefix`: the key, and a tag binding it to the prefix. */
function cursorAfter(auth: Auth, prefix: string, lastKey: string): string {
  const tag = keyedTag(auth.secretBox, cursorPurpose, `${prefix}\u0000${lastKey}`);
  return `${Buffer.from(lastKey).toString("base64url")}.${tag}`;
}

/** The key a cursor of the listing of `prefix` continues after; 40002 for anything this listing did not give. */
function keyAfter(auth: Auth, prefix: string, cursor: string): string {
  const parts = cursorShape.exec(cursor);
  if (!parts) throw badCursor();
  const key = Buffer.from(parts[1] as string, "base64url").toString("utf8");
  if (!constantTimeEqual(parts[2] as string, keyedTag(auth.secretBox, cursorPurpose, `${prefix}\u0000${key}`))) {
    throw badCursor();
  }
  return key;
}

/** The lookup-key prefix of `q`: 40002 for text that is not a username's beginning. */
function prefixOf(q: string | undefined): string {
  if (q === undefined) return "";
  if (longerThan(q, maxUsernameLength) || hasLoneSurrogate(q)) {
    throw new AuthError(ErrorCode.MalformedParameter, `q must be a username prefix of at most ${maxUsernameLength} characters`);
  }
  return usernameKeyOf(q);
}

/**
 * One page of users for an administrator (`GET /auth/admin/users`), in the order of their
 * lookup keys, optionally only those whose key starts with the key of `q`. Storage answers it
 * from the index on the key (no scan of every user on SQL). The cursor is opaque: the last key of
 * the page and a 128-bit tag under a key derived from the encryption key, bound to `q`, so a
 * cursor made up, altered or sent with another `q` is 40002; it stays good while the encryption
 * key does. Paging from each `nextCursor` visits every matching user once.
 *
 * @throws {AuthError} 40002 a limit outside 1 to 100, a `q` that cannot begin a username, a cursor
 *   that is not this listing's.
 * @example
 * ```ts
 * let page = await listUsers(auth, { q: "al", limit: 50 });
 * while (page.nextCursor) page = await listUsers(auth, { q: "al", limit: 50, cursor: page.nextCursor });
 * ```
 */
export async function listUsers(auth: Auth, input: ListUsersInput = {}): Promise<UserPage> {
  const limit = input.limit ?? defaultPageSize;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
    throw new AuthError(ErrorCode.MalformedParameter, `limit must be a whole number from 1 to ${maxPageSize}`);
  }
  const prefix = prefixOf(optionalString(input.q, "q"));
  const cursor = optionalString(input.cursor, "cursor");
  const afterUsernameKey = cursor === undefined ? undefined : keyAfter(auth, prefix, cursor);
  const found = await auth.storage.users.list({
    limit: limit + 1,
    ...(afterUsernameKey === undefined ? {} : { afterUsernameKey }),
    ...(prefix === "" ? {} : { usernameKeyPrefix: prefix }),
  });
  const page = found.slice(0, limit);
  const last = page.at(-1);
  return {
    users: await Promise.all(page.map((user) => adminUserView(auth, user))),
    nextCursor: found.length > limit && last ? cursorAfter(auth, prefix, last.usernameKey) : null,
  };
}
