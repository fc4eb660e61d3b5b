import type { Auth } from "../auth.js";
import type { DirectoryCheck } from "../directory/directory.js";
import type { PublicDirectoryPolicy, RoleMapping } from "../directory/policy.js";
import { readDirectorySettings, readPublicPolicy, settingsFrom, writeDirectorySettings } from "../directory/policy-store.js";
import { rolesForGroups } from "../directory/roles.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { revoked } from "../users/token-state.js";
import { requiredString } from "./input.js";

/**
 * The saved directory policy, as an operator may see it: every field, and
 * `credentialConfigured` in place of the service account's password, which is never returned.
 * Before any save, the defaults with `enabled: false`.
 *
 * @example
 * ```ts
 * const { enabled, serverUrl, credentialConfigured } = await getDirectoryPolicy(auth);
 * ```
 */
export async function getDirectoryPolicy(auth: Auth): Promise<PublicDirectoryPolicy> {
  return readPublicPolicy(auth);
}

/**
 * Saves the directory policy, in effect from the next login or refresh without a restart. Fields
 * left out keep their saved values; an absent or empty `bindPassword` keeps the stored one, and
 * a given one is stored encrypted with the configured encryption key. Every directory user's
 * token version is raised (TV-1), so sessions made under the old policy end at their next
 * request, and `directory_policy.saved` is emitted.
 *
 * @throws {AuthError} 42200 with a message that starts with the first bad field's name.
 * @example
 * ```ts
 * await saveDirectoryPolicy(auth, {
 *   enabled: true,
 *   serverUrl: "ldaps://ldap.example.com",
 *   bindDn: "cn=portcullis,ou=services,dc=example,dc=com",
 *   bindPassword: process.env.LDAP_BIND_PASSWORD,
 *   userBaseDn: "ou=people,dc=example,dc=com",
 *   mappings: [{ group: "cn=admins,ou=groups,dc=example,dc=com", role: "admin", priority: 1 }],
 * });
 * ```
 */
export async function saveDirectoryPolicy(auth: Auth, input: unknown): Promise<PublicDirectoryPolicy> {
  const settings = await settingsFrom(auth, input);
  await writeDirectorySettings(auth, settings);
  const now = auth.now();
  const directoryUsers = await auth.storage.users.incrementTokenVersionsBySource("directory", now);
  revoked(auth, { kind: "all" });
  auth.emit({ type: "directory_policy.saved", enabled: settings.enabled, directoryUsers, at: now });
  return readPublicPolicy(auth);
}

/**
 * Tries a directory policy end to end without saving it: connect, TLS, bind as the service
 * account, search the user base. With no fields (`{}`) it tries the saved policy; otherwise the
 * given fields over the saved ones, as a save would make them. A policy that does not validate,
 * or no directory given to `createAuth`, is `{ ok: false, category: "configuration" }`.
 *
 * @example
 * ```ts
 * const result = await testDirectoryPolicy(auth, { serverUrl: "ldaps://ldap2.example.com" });
 * if (!result.ok) console.warn(result.category, result.message);
 * ```
 */
export async function testDirectoryPolicy(auth: Auth, input: unknown = {}): Promise<DirectoryCheck> {
  if (auth.directory === null) {
    return { ok: false, category: "configuration", message: "No directory is configured: pass directory to createAuth" };
  }
  let settings: Awaited<ReturnType<typeof settingsFrom>>;
  try {
    settings = await settingsFrom(auth, input);
  } catch (error) {
    if (error instanceof AuthError && error.code === ErrorCode.ValidationFailed) {
      return { ok: false, category: "configuration", message: error.message };
    }
    throw error;
  }
  return auth.directory.check(settings);
}

/** What {@link previewDirectoryUser} shows of a directory user. */
export interface DirectoryUserPreview {
  username: string;
  displayName: string | null;
  email: string | null;
  /** The group DNs the policy reads for the user. */
  groups: string[];
  /** The mapping that gives the roles; null for the fallback role or a denied user. */
  matchedRule: RoleMapping | null;
  /** The roles the user would sign in with; empty when the user would be denied. */
  roles: string[];
}

/**
 * Shows what the saved policy makes of a directory user, read with the service account (no
 * password of theirs): their identity, groups, the mapping that matched and the roles they would
 * sign in with. Works while the policy is disabled, to check it before enabling it.
 *
 * @throws {AuthError} 40001 no username, 40400 no directory (or no saved server) or no entry with this username, 50300 the directory is unavailable.
 * @example
 * ```ts
 * const { groups, matchedRule, roles } = await previewDirectoryUser(auth, { username: "alice" });
 * ```
 */
export async function previewDirectoryUser(auth: Auth, input: { username: string }): Promise<DirectoryUserPreview> {
  const username = requiredString(input.username, "username");
  const settings = await readDirectorySettings(auth);
  if (auth.directory === null || settings.serverUrl === "") throw new AuthError(ErrorCode.NotFound, "No directory is configured");
  const entry = await auth.directory.lookup(settings, { username });
  if (!entry) throw new AuthError(ErrorCode.NotFound, "No directory entry has this username");
  const granted = rolesForGroups(settings, entry.groups);
  return {
    username: entry.username,
    displayName: entry.displayName,
    email: entry.email,
    groups: entry.groups,
    matchedRule: granted?.matchedRule ?? null,
    roles: granted?.roles ?? [],
  };
}
