import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { LoginResult } from "../flows/login-result.js";
import { completeFirstFactor } from "../flows/pending-login.js";
import { directoryProvider } from "../oauth/provider-config.js";
import type { UserRecord } from "../storage/types.js";
import { raiseTokenVersion } from "../users/token-version.js";
import { normalizeUsername } from "../users/username.js";
import type { Directory, DirectoryCandidate, DirectoryEntry } from "./directory.js";
import type { DirectoryPolicy, DirectorySettings } from "./policy.js";
import { readEnabledDirectorySettings } from "./policy-store.js";
import { rolesForGroups } from "./roles.js";

/** The configured directory and the saved policy, when directory login is on. */
export interface EnabledDirectory {
  directory: Directory;
  settings: DirectorySettings;
}

/**
 * The directory and its saved policy when a directory is configured and the policy is enabled
 * (and `wanted`); else null.
 */
export async function enabledDirectory(
  auth: Auth,
  wanted?: (policy: DirectoryPolicy) => boolean,
): Promise<EnabledDirectory | null> {
  if (auth.directory === null) return null;
  const settings = await readEnabledDirectorySettings(auth, wanted);
  return settings ? { directory: auth.directory, settings } : null;
}

const noRole = () => new AuthError(ErrorCode.Forbidden, "No role is granted to this directory account");

const collision = () =>
  new AuthError(ErrorCode.Conflict, "The directory username belongs to another account here; an administrator must resolve it");

/** The local username of a directory entry, or 40900 when its `usernameAttribute` value cannot be one. */
function localUsername(entry: DirectoryEntry): { username: string; usernameKey: string } {
  try {
    return normalizeUsername(entry.username);
  } catch {
    throw new AuthError(ErrorCode.Conflict, "The directory username cannot be used as a username here");
  }
}

/**
 * The local account of a directory entry, keyed by its stable id (so a renamed entry stays the
 * same user): made on first sign-in (source `directory`, no password, `roles`), otherwise
 * brought up to date with the entry's username and `roles`. A username held by another account,
 * local or another entry's, is 40900: never linked silently. Changed roles raise the token version
 * (TV-1), so the account's other sessions end rather than keep the old roles. A first sign-in makes
 * the account and its link in one write (`createAccount`), so the store may give the account an id
 * of its own form (an existing users table's integers) and no half-made account or link is left.
 */
export async function directoryAccount(auth: Auth, entry: DirectoryEntry, roles: string[]): Promise<UserRecord> {
  const { username, usernameKey } = localUsername(entry);
  const now = auth.now();
  let userId = (await auth.storage.identities.find(directoryProvider, entry.stableId))?.userId;
  if (userId === undefined) {
    const made = await createDirectoryAccount(
      auth,
      entry.stableId,
      directoryUser(randomId(auth), username, usernameKey, roles, now),
    );
    if (made !== null) return made;
    // A concurrent first sign-in of the same entry made the account; otherwise the name is taken.
    userId = (await auth.storage.identities.find(directoryProvider, entry.stableId))?.userId;
    if (userId === undefined) throw collision();
  }
  const existing = await auth.storage.users.findById(userId);
  if (existing) {
    if (existing.usernameKey === usernameKey && existing.username === username && sameRoles(existing.roles, roles)) {
      return existing;
    }
    const updated = await auth.storage.users.update(userId, { username, usernameKey, roles }, now);
    if (!updated) throw collision();
    if (sameRoles(existing.roles, roles)) return updated;
    return { ...updated, tokenVersion: await raiseTokenVersion(auth, userId, "roles_changed") };
  }
  // A link without its account: an earlier release stored the link first and was cut off before the account.
  const record = directoryUser(userId, username, usernameKey, roles, now);
  if (await auth.storage.users.create(record)) {
    auth.emit({ type: "user.created", userId, by: "directory", at: now });
    return record;
  }
  const raced = await auth.storage.users.findById(userId);
  if (raced) return raced;
  throw collision();
}

/** A new directory account: source `directory`, no password, no address. */
function directoryUser(id: string, username: string, usernameKey: string, roles: string[], now: number): UserRecord {
  return {
    id,
    username,
    usernameKey,
    passwordHash: null,
    roles,
    disabled: false,
    tokenVersion: 0,
    source: "directory",
    email: null,
    emailVerified: false,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Makes `user` and its link to the directory entry `subject` as one account (IM-1's one write):
 * null, writing nothing, when the username is taken or the entry is linked already (a concurrent
 * first sign-in). The store may answer an id of its own; the account answered carries it.
 */
async function createDirectoryAccount(auth: Auth, subject: string, user: UserRecord): Promise<UserRecord | null> {
  const { createdAt } = user;
  const link = { provider: directoryProvider, subject, email: null, emailVerified: false, createdAt, lastUsedAt: createdAt };
  const created = await auth.storage.users.createAccount({
    user,
    totp: null,
    recoveryCodeHashes: [],
    passkeys: [],
    identities: [link],
  });
  if (created === false) return null;
  const stored = typeof created === "string" ? { ...user, id: created } : user;
  auth.emit({ type: "user.created", userId: stored.id, by: "directory", at: createdAt });
  return stored;
}

/** Whether two role lists are the same, in the same order. */
export function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((role, index) => role === b[index]);
}

/**
 * Signs a user in against the directory (LDAP-1 … LDAP-5): the directory finds the one entry
 * and binds as it with the password; the entry's groups give its roles (a user in no mapped
 * group and no fallback role is 40300, told only now that the password was proven); the local
 * account is made or brought up to date; then the second factor and tokens as for a local
 * password (`amr` `["pwd"]`). "no_entry" when no entry has the username, for `directory-first`
 * to try local accounts; "failed" for a wrong password or an ambiguous username. `beforeBind`
 * runs between the directory's search and its bind (the login takes the found entry's throttle
 * attempt there, RL-1).
 *
 * @throws {AuthError} 40300 no role or a disabled account, 40900 a username collision, 42900 what
 *   `beforeBind` throws, 50300 the directory is unavailable.
 */
export async function signInWithDirectory(
  auth: Auth,
  { directory, settings }: EnabledDirectory,
  attempt: {
    username: string;
    password: string;
    deviceToken: string | undefined;
    ip: string | undefined;
    userAgent?: string | undefined;
    beforeBind: (entry: DirectoryCandidate) => Promise<void>;
  },
): Promise<LoginResult | "no_entry" | "failed"> {
  const { username, password, deviceToken, ip, userAgent, beforeBind } = attempt;
  const result = await directory.authenticate(settings, username, password, { beforeBind });
  if (result.status === "no_entry") return "no_entry";
  if (result.status !== "authenticated") return "failed";
  const granted = rolesForGroups(settings, result.entry.groups);
  if (granted === null) {
    const account = await auth.storage.identities.find(directoryProvider, result.entry.stableId);
    auth.emit({ type: "login.failed", userId: account?.userId ?? null, reason: "no_role", at: auth.now(), ip });
    throw noRole();
  }
  const user = await directoryAccount(auth, result.entry, granted.roles);
  return completeFirstFactor(auth, user, ["pwd"], ip, { deviceToken, userAgent });
}

/**
 * The roles a directory user is to have at a refresh (LDAP-5): their current roles when the
 * policy does not re-read groups at refresh; otherwise their entry is read again by stable id and
 * mapped afresh. Null when the user is to lose the session: directory login is off, the entry is
 * gone, or it is in no mapped group and there is no fallback role.
 *
 * @throws {AuthError} 50300 the directory is unavailable.
 */
export async function directoryRolesAtRefresh(auth: Auth, user: UserRecord): Promise<string[] | null> {
  const enabled = await enabledDirectory(auth);
  if (!enabled) return null;
  if (!enabled.settings.refreshMapping) return user.roles;
  const stableId = await directoryLinkOf(auth, user.id);
  if (stableId === undefined) return null;
  const entry = await enabled.directory.lookup(enabled.settings, { stableId });
  return entry ? (rolesForGroups(enabled.settings, entry.groups)?.roles ?? null) : null;
}

/**
 * Whether `password` is a directory user's, for re-authentication: the entry the account is linked
 * to is read by its stable id (so a rename since the last sign-in does not matter), and the
 * directory binds as the entry its username finds, which must be that same entry. False when
 * directory login is off or the entry is gone.
 *
 * @throws {AuthError} 50300 the directory is unavailable.
 */
export async function directoryPasswordMatches(auth: Auth, user: UserRecord, password: string): Promise<boolean> {
  const enabled = await enabledDirectory(auth);
  const stableId = enabled ? await directoryLinkOf(auth, user.id) : undefined;
  if (!enabled || stableId === undefined) return false;
  const entry = await enabled.directory.lookup(enabled.settings, { stableId });
  if (!entry) return false;
  const result = await enabled.directory.authenticate(enabled.settings, entry.username, password);
  return result.status === "authenticated" && result.entry.stableId === stableId;
}

/** The stable id of the directory entry an account is linked to, if any. */
async function directoryLinkOf(auth: Auth, userId: string): Promise<string | undefined> {
  const identities = await auth.storage.identities.listByUser(userId);
  return identities.find((identity) => identity.provider === directoryProvider)?.subject;
}

/**
 * A directory user signing in another way (a passkey, a linked provider) as the directory has
 * them now (LDAP-5): what a refresh would make of them, so the directory decides here too. One gone
 * from the directory, in no mapped group, or whose directory login is off, is refused; changed
 * roles are stored and raise the token version (TV-1). Other users, and disabled accounts (refused
 * next, without asking the directory), are returned as they are.
 *
 * @throws {AuthError} 40300 no role, 50300 the directory is unavailable.
 */
export async function directoryUserNow(auth: Auth, user: UserRecord, ip: string | undefined): Promise<UserRecord> {
  if (user.source !== "directory" || user.disabled) return user;
  const roles = await directoryRolesAtRefresh(auth, user);
  if (roles === null) {
    auth.emit({ type: "login.failed", userId: user.id, reason: "no_role", at: auth.now(), ip });
    throw noRole();
  }
  if (sameRoles(roles, user.roles)) return user;
  const updated = (await auth.storage.users.update(user.id, { roles }, auth.now())) ?? user;
  return { ...updated, tokenVersion: await raiseTokenVersion(auth, user.id, "roles_changed") };
}
