import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { isLoopbackHost } from "../oauth/provider-config.js";

/** A rule of the group-to-role mapping: members of `group` get `role`; the lowest `priority` wins. */
export interface RoleMapping {
  /** The group's DN; compared case-insensitively after DN normalisation. */
  group: string;
  role: string;
  priority: number;
}

/**
 * Where a directory without `memberOf` keeps groups: `filter` holds `{{dn}}` (the user's DN, for
 * `groupOfNames` `member`) or `{{username}}` (the entry's `usernameAttribute` value, for
 * `posixGroup` `memberUid`), or both, each at most once.
 */
export interface GroupSearch {
  baseDn: string;
  filter: string;
}

/** The order logins with no `provider` try: `explicit` (local only) or `directory-first`. */
export type LoginOrder = "explicit" | "directory-first";

/**
 * The saved directory policy (`contract.md`, Directory policy): how directory users are found,
 * proven and given roles. Saved as data, so an operator changes it at run time.
 */
export interface DirectoryPolicy {
  enabled: boolean;
  /** `ldap://host[:port]` or `ldaps://host[:port]`. */
  serverUrl: string;
  /** With `ldap://`: StartTLS before any bind. Default true. */
  startTls: boolean;
  /** UNSAFE, development only: `ldap://` without StartTLS, on a loopback host. Default false. */
  allowPlaintext: boolean;
  /** UNSAFE: lets `allowPlaintext` reach a host that is not loopback. Default false. */
  allowPlaintextOnNetwork: boolean;
  /** PEM certificates the server's certificate must chain to; its host name is verified too. */
  caBundle: string | null;
  /** The service account that searches; null searches anonymously. */
  bindDn: string | null;
  connectTimeoutSecs: number;
  searchTimeoutSecs: number;
  userBaseDn: string;
  /** Holds exactly one `{{username}}`, filled escaped (RFC 4515). Default `(uid={{username}})`. */
  userFilter: string;
  /** The attribute that never changes for an entry (OpenLDAP `entryUUID`, AD `objectGUID`). */
  stableIdAttribute: string;
  usernameAttribute: string;
  displayAttribute: string;
  emailAttribute: string;
  groupAttribute: string;
  groupSearch: GroupSearch | null;
  mappings: RoleMapping[];
  /** The role of a user in no mapped group; null denies such a user (LDAP-5). */
  fallbackRole: string | null;
  /** Re-read the groups at each refresh. Default true. */
  refreshMapping: boolean;
  loginOrder: LoginOrder;
}

/** A policy as an operator sends it to be saved: any field may be left to its default or kept. */
export type DirectoryPolicyInput = Partial<DirectoryPolicy> & {
  /** The service account's password: write-only; empty or absent keeps the stored one. */
  bindPassword?: string;
};

/** A policy as it is shown: never the bind password, only whether one is stored. */
export type PublicDirectoryPolicy = DirectoryPolicy & { credentialConfigured: boolean };

/** A policy with its bind password opened: what a directory connects with. Never leaves the server. */
export type DirectorySettings = DirectoryPolicy & { bindPassword: string | null };

/** The policy before anything is saved: disabled, with the contract's defaults. */
export const defaultDirectoryPolicy: Readonly<DirectoryPolicy> = Object.freeze({
  enabled: false,
  serverUrl: "",
  startTls: true,
  allowPlaintext: false,
  allowPlaintextOnNetwork: false,
  caBundle: null,
  bindDn: null,
  connectTimeoutSecs: 5,
  searchTimeoutSecs: 8,
  userBaseDn: "",
  userFilter: "(uid={{username}})",
  stableIdAttribute: "entryUUID",
  usernameAttribute: "uid",
  displayAttribute: "displayName",
  emailAttribute: "mail",
  groupAttribute: "memberOf",
  groupSearch: null,
  mappings: [],
  fallbackRole: null,
  refreshMapping: true,
  loginOrder: "explicit",
});

/** The 42200 of a bad field: its message begins with the field's name. */
const invalid = (field: string, rule: string) => new AuthError(ErrorCode.ValidationFailed, `${field} ${rule}`);

const maxTextLength = 1024;
const attributeName = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
const placeholder = (name: string) => new RegExp(`\\{\\{${name}\\}\\}`, "g");

/** A string field: non-empty unless `optional` (then null for null or ""), at most `max` long, no control characters but line breaks where `multiline`. */
function text(value: unknown, field: string, { optional = false, max = maxTextLength, multiline = false } = {}): string | null {
  if (optional && (value === null || value === "")) return null;
  if (typeof value !== "string" || value.trim() === "") throw invalid(field, "must be a non-empty string");
  if (value.length > max) throw invalid(field, `must be at most ${max} characters`);
  if (/\p{Cc}/u.test(multiline ? value.replace(/\r?\n/g, "") : value))
    throw invalid(field, "must not contain control characters");
  return value;
}

function flag(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") throw invalid(field, "must be true or false");
  return value;
}

function seconds(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 120) {
    throw invalid(field, "must be a number of seconds above 0 and at most 120");
  }
  return value;
}

function attribute(value: unknown, field: string): string {
  const name = text(value, field, { max: 128 }) as string;
  if (!attributeName.test(name)) throw invalid(field, "must be an attribute name (a letter, then letters, digits or hyphens)");
  return name;
}

/**
 * A filter with its parentheses balanced: each of `placeholders` at most once and at least one of
 * them (the user filter: `{{username}}` exactly once).
 */
function filter(value: unknown, field: string, placeholders: string[]): string {
  const template = text(value, field) as string;
  const counts = placeholders.map((name) => (template.match(placeholder(name)) ?? []).length);
  if (counts.some((count) => count > 1) || counts.every((count) => count === 0)) {
    const names = placeholders.map((name) => `{{${name}}}`).join(" or ");
    throw invalid(
      field,
      placeholders.length === 1 ? `must contain ${names} exactly once` : `must contain ${names}, each at most once`,
    );
  }
  let depth = 0;
  for (const character of template) {
    depth += character === "(" ? 1 : character === ")" ? -1 : 0;
    if (depth < 0) break;
  }
  if (depth !== 0 || !template.startsWith("(") || !template.endsWith(")")) {
    throw invalid(field, "must be one LDAP filter in parentheses, balanced");
  }
  return template;
}

/** The server URL: ldap:// or ldaps://, a host, an optional port, and nothing else. */
function serverUrl(value: unknown): URL {
  const field = "serverUrl";
  let url: URL;
  try {
    url = new URL(text(value, field) as string);
  } catch (error) {
    if (error instanceof AuthError) throw error;
    throw invalid(field, "must be an ldap:// or ldaps:// URL");
  }
  if (url.protocol !== "ldap:" && url.protocol !== "ldaps:") throw invalid(field, "must be an ldap:// or ldaps:// URL");
  if (url.hostname === "") throw invalid(field, "must name a host");
  if (url.username || url.password) throw invalid(field, "must not hold credentials; use bindDn and bindPassword");
  if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash) {
    throw invalid(field, "must be only the scheme, host and port");
  }
  return url;
}

function loginOrder(value: unknown): LoginOrder {
  if (value !== "explicit" && value !== "directory-first") throw invalid("loginOrder", 'must be "explicit" or "directory-first"');
  return value;
}

function mappings(value: unknown): RoleMapping[] {
  if (!Array.isArray(value) || value.length > 1000) throw invalid("mappings", "must be a list of at most 1000 rules");
  return value.map((rule: unknown, index) => {
    const at = `mappings[${index}]`;
    if (typeof rule !== "object" || rule === null) throw invalid(at, "must be { group, role, priority }");
    const { group, role, priority } = rule as Record<string, unknown>;
    if (typeof priority !== "number" || !Number.isSafeInteger(priority)) throw invalid(`${at}.priority`, "must be an integer");
    return { group: text(group, `${at}.group`) as string, role: text(role, `${at}.role`, { max: 64 }) as string, priority };
  });
}

/**
 * Checks a policy to be saved and fills what it leaves out from `current` (the saved policy, or
 * the defaults). Every field is checked even when the policy is disabled; only `serverUrl` and
 * `userBaseDn` may stay empty then. A `bindPassword` is checked but not returned: the caller
 * seals it apart; `credentialConfigured` (as shown) is ignored.
 *
 * @throws {AuthError} 42200 whose message begins with the name of the first bad field.
 */
export function validateDirectoryPolicy(input: unknown, current: DirectoryPolicy = defaultDirectoryPolicy): DirectoryPolicy {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalid("policy", "must be an object");
  }
  const known = new Set([...Object.keys(defaultDirectoryPolicy), "bindPassword", "credentialConfigured"]);
  const unknown = Object.keys(input).find((key) => !known.has(key));
  if (unknown !== undefined) throw invalid(unknown.slice(0, 64), "is not a directory policy field");
  const {
    bindPassword,
    credentialConfigured: _shown,
    ...changes
  } = input as DirectoryPolicyInput & { credentialConfigured?: unknown };
  if (
    bindPassword !== undefined &&
    bindPassword !== null &&
    (typeof bindPassword !== "string" || bindPassword.length > maxTextLength)
  ) {
    throw invalid("bindPassword", `must be a string of at most ${maxTextLength} characters; empty keeps the saved one`);
  }
  const merged = { ...current, ...changes };

  const enabled = flag(merged.enabled, "enabled");
  const url = merged.serverUrl === "" && !enabled ? null : serverUrl(merged.serverUrl);
  const startTls = flag(merged.startTls, "startTls");
  const allowPlaintext = flag(merged.allowPlaintext, "allowPlaintext");
  const allowPlaintextOnNetwork = flag(merged.allowPlaintextOnNetwork, "allowPlaintextOnNetwork");
  if (url?.protocol === "ldap:" && !startTls) {
    if (!allowPlaintext) throw invalid("startTls", "must be true for ldap:// unless allowPlaintext is set (development only)");
    if (!isLoopbackHost(url.hostname.toLowerCase()) && !allowPlaintextOnNetwork) {
      throw invalid("allowPlaintext", "is refused for a host that is not loopback unless allowPlaintextOnNetwork is set");
    }
  }
  const caBundle = text(merged.caBundle, "caBundle", { optional: true, max: 256 * 1024, multiline: true });
  if (caBundle !== null && !caBundle.includes("-----BEGIN CERTIFICATE-----")) {
    throw invalid("caBundle", "must be PEM certificates (-----BEGIN CERTIFICATE-----)");
  }
  const groupSearch = merged.groupSearch;
  if (groupSearch !== null && (typeof groupSearch !== "object" || Array.isArray(groupSearch))) {
    throw invalid("groupSearch", "must be null or { baseDn, filter }");
  }
  const policy: DirectoryPolicy = {
    enabled,
    serverUrl: url === null ? "" : `${url.protocol}//${url.host.toLowerCase()}`,
    startTls,
    allowPlaintext,
    allowPlaintextOnNetwork,
    caBundle,
    bindDn: text(merged.bindDn, "bindDn", { optional: true }),
    connectTimeoutSecs: seconds(merged.connectTimeoutSecs, "connectTimeoutSecs"),
    searchTimeoutSecs: seconds(merged.searchTimeoutSecs, "searchTimeoutSecs"),
    userBaseDn: merged.userBaseDn === "" && !enabled ? "" : (text(merged.userBaseDn, "userBaseDn") as string),
    userFilter: filter(merged.userFilter, "userFilter", ["username"]),
    stableIdAttribute: attribute(merged.stableIdAttribute, "stableIdAttribute"),
    usernameAttribute: attribute(merged.usernameAttribute, "usernameAttribute"),
    displayAttribute: attribute(merged.displayAttribute, "displayAttribute"),
    emailAttribute: attribute(merged.emailAttribute, "emailAttribute"),
    groupAttribute: attribute(merged.groupAttribute, "groupAttribute"),
    groupSearch:
      groupSearch === null
        ? null
        : {
            baseDn: text(groupSearch.baseDn, "groupSearch.baseDn") as string,
            filter: filter(groupSearch.filter, "groupSearch.filter", ["dn", "username"]),
          },
    mappings: mappings(merged.mappings),
    fallbackRole: text(merged.fallbackRole, "fallbackRole", { optional: true, max: 64 }),
    refreshMapping: flag(merged.refreshMapping, "refreshMapping"),
    loginOrder: loginOrder(merged.loginOrder),
  };
  return policy;
}
