import {
  AuthError,
  type Directory,
  type DirectoryAuthenticateOptions,
  type DirectoryAuthentication,
  type DirectoryCallOptions,
  type DirectoryCheck,
  type DirectoryEntry,
  type DirectoryFailureCategory,
  type DirectorySettings,
  ErrorCode,
} from "@portcullis/core";
import { fillFilter } from "./escape.js";
import { type LdapConnection, type LdapEntry, LdapFailure, openLdapConnection } from "./ldap-client.js";

/** Attributes whose values are bytes, not text: their stable id is lower-case hex. */
const binaryAttributes = new Set(["objectguid", "objectsid", "msds-consistencyguid"]);

/** LDAP result codes (RFC 4511 appendix A) the sign-in acts on. */
const resultCode = { sizeLimitExceeded: 4, invalidCredentials: 49 } as const;

/** A setting that cannot work, found before any connection. */
class ConfigurationFailure extends Error {
  override readonly name = "ConfigurationFailure";
}

/** What a caller's hook threw: it leaves the directory as it is, never as 50300. */
class CallerFailure extends Error {
  override readonly name = "CallerFailure";
}

/** The 50300 every unusable directory comes to: a fixed message, the reason kept as `cause`. */
function unavailable(cause: unknown): AuthError {
  return new AuthError(ErrorCode.Unavailable, "The directory is unavailable", { cause });
}

function isResult(error: unknown, code: number): boolean {
  return error instanceof LdapFailure && error.kind === "result" && error.resultCode === code;
}

/**
 * Connects to the policy's server, with StartTLS first when it asks for it (LDAP-4); never on in
 * plaintext after a failed StartTLS. `signal` aborting closes the connection, whatever it is doing.
 */
async function openSecured(settings: DirectorySettings, signal: AbortSignal | undefined): Promise<LdapConnection> {
  const plain = settings.serverUrl.startsWith("ldap://");
  if (plain && !settings.startTls && !settings.allowPlaintext) {
    throw new ConfigurationFailure("ldap:// without StartTLS needs allowPlaintext");
  }
  const connection = await openLdapConnection({
    url: settings.serverUrl,
    ca: settings.caBundle,
    connectTimeoutMs: settings.connectTimeoutSecs * 1000,
    operationTimeoutMs: settings.searchTimeoutSecs * 1000,
    ...(signal ? { signal } : {}),
  });
  if (plain && settings.startTls) {
    try {
      await connection.startTls();
    } catch (error) {
      await connection.close();
      throw error;
    }
  }
  return connection;
}

/** Binds as the service account, or stays anonymous when the policy has no `bindDn`; never an unauthenticated bind (LDAP-3). */
async function bindServiceAccount(connection: LdapConnection, settings: DirectorySettings): Promise<void> {
  if (settings.bindDn === null) return;
  if (!settings.bindPassword) throw new ConfigurationFailure("bindDn is set without a bindPassword");
  await connection.bind(settings.bindDn, settings.bindPassword);
}

/** Runs `use` on a connection bound as the service account, and always closes it. */
async function withServiceConnection<T>(
  settings: DirectorySettings,
  signal: AbortSignal | undefined,
  use: (connection: LdapConnection) => Promise<T>,
): Promise<T> {
  let connection: LdapConnection | null = null;
  try {
    connection = await openSecured(settings, signal);
    await bindServiceAccount(connection, settings);
    return await use(connection);
  } catch (error) {
    if (error instanceof CallerFailure) throw error.cause;
    throw error instanceof AuthError ? error : unavailable(error);
  } finally {
    await connection?.close();
  }
}

function entryAttributes(settings: DirectorySettings): string[] {
  return [
    settings.stableIdAttribute,
    settings.usernameAttribute,
    settings.displayAttribute,
    settings.emailAttribute,
    settings.groupAttribute,
  ];
}

/** The entries `filter` finds under the user base: at most two, enough to tell one from several. */
async function findEntries(
  connection: LdapConnection,
  settings: DirectorySettings,
  filter: string,
): Promise<LdapEntry[] | "ambiguous"> {
  try {
    return await connection.search(settings.userBaseDn, {
      scope: "sub",
      filter,
      attributes: entryAttributes(settings),
      sizeLimit: 2,
    });
  } catch (error) {
    if (isResult(error, resultCode.sizeLimitExceeded)) return "ambiguous";
    throw error;
  }
}

function text(entry: LdapEntry, attribute: string): string | null {
  const value = entry.attributes.get(attribute.toLowerCase())?.[0];
  return value === undefined ? null : value.toString("utf8");
}

/** The stable id: text as it is, or lower-case hex for a binary attribute. */
function stableIdOf(entry: LdapEntry, settings: DirectorySettings): string {
  const name = settings.stableIdAttribute.toLowerCase();
  const value = entry.attributes.get(name)?.[0];
  if (value === undefined) throw new ConfigurationFailure(`the entry has no ${settings.stableIdAttribute}`);
  return binaryAttributes.has(name) ? value.toString("hex") : value.toString("utf8");
}

/** The group DNs of an entry: its `groupAttribute` values and what the policy's group search finds. */
async function groupsOf(connection: LdapConnection, settings: DirectorySettings, entry: LdapEntry): Promise<string[]> {
  const groups = (entry.attributes.get(settings.groupAttribute.toLowerCase()) ?? []).map((value) => value.toString("utf8"));
  if (settings.groupSearch !== null) {
    const filter = fillFilter(settings.groupSearch.filter, {
      dn: entry.dn,
      username: text(entry, settings.usernameAttribute) ?? "",
    });
    const found = await connection.search(settings.groupSearch.baseDn, {
      scope: "sub",
      filter,
      attributes: ["1.1"],
      sizeLimit: 0,
    });
    groups.push(...found.map((group) => group.dn));
  }
  return [...new Set(groups)];
}

async function directoryEntryOf(
  connection: LdapConnection,
  settings: DirectorySettings,
  entry: LdapEntry,
): Promise<DirectoryEntry> {
  const username = text(entry, settings.usernameAttribute);
  if (username === null) throw new ConfigurationFailure(`the entry has no ${settings.usernameAttribute}`);
  return {
    dn: entry.dn,
    stableId: stableIdOf(entry, settings),
    username,
    displayName: text(entry, settings.displayAttribute),
    email: text(entry, settings.emailAttribute),
    groups: await groupsOf(connection, settings, entry),
  };
}

/** Reads the entry at `dn` with the bound account; null when it cannot be read. */
async function readEntry(connection: LdapConnection, settings: DirectorySettings, dn: string): Promise<LdapEntry | null> {
  const [entry] = await connection.search(dn, {
    scope: "base",
    filter: "(objectClass=*)",
    attributes: entryAttributes(settings),
    sizeLimit: 1,
  });
  return entry ?? null;
}

async function authenticate(
  settings: DirectorySettings,
  username: string,
  password: string,
  options: DirectoryAuthenticateOptions = {},
): Promise<DirectoryAuthentication> {
  // LDAP-3: an empty password would be an unauthenticated bind, which a server may accept as anonymous.
  if (username === "" || password === "") return { status: "invalid_credentials" };
  return withServiceConnection(settings, options.signal, async (connection) => {
    const found = await findEntries(connection, settings, fillFilter(settings.userFilter, { username }));
    if (found === "ambiguous" || found.length > 1) return { status: "ambiguous" };
    const [candidate] = found;
    if (candidate === undefined) return { status: "no_entry" };
    if (options.beforeBind) {
      const username = text(candidate, settings.usernameAttribute);
      if (username === null) throw new ConfigurationFailure(`the entry has no ${settings.usernameAttribute}`);
      const told = { dn: candidate.dn, stableId: stableIdOf(candidate, settings), username };
      await options.beforeBind(told).catch((error: unknown) => {
        throw new CallerFailure("beforeBind threw", { cause: error });
      });
    }
    try {
      // LDAP-2: the DN the directory returned, the password exactly as typed.
      await connection.bind(candidate.dn, password);
    } catch (error) {
      if (isResult(error, resultCode.invalidCredentials)) return { status: "invalid_credentials" };
      throw error;
    }
    await bindServiceAccount(connection, settings);
    const entry = await readEntry(connection, settings, candidate.dn);
    // The DN bound must name the entry the search found, whatever the client made of its escapes.
    if (entry === null || stableIdOf(entry, settings) !== stableIdOf(candidate, settings)) {
      throw new ConfigurationFailure("the bound DN does not read back as the entry found");
    }
    return { status: "authenticated", entry: await directoryEntryOf(connection, settings, entry) };
  });
}

/** The filter for one stable id: bytes from hex for a binary attribute, text otherwise; null for a malformed hex id. */
function stableIdFilter(settings: DirectorySettings, stableId: string): string | null {
  const binary = binaryAttributes.has(settings.stableIdAttribute.toLowerCase());
  if (binary && !/^(?:[0-9a-f]{2})+$/.test(stableId)) return null;
  return fillFilter(`(${settings.stableIdAttribute}={{id}})`, { id: binary ? Buffer.from(stableId, "hex") : stableId });
}

async function lookup(
  settings: DirectorySettings,
  by: { username: string } | { stableId: string },
  options: DirectoryCallOptions = {},
): Promise<DirectoryEntry | null> {
  const filter =
    "username" in by
      ? by.username === ""
        ? null
        : fillFilter(settings.userFilter, { username: by.username })
      : stableIdFilter(settings, by.stableId);
  if (filter === null) return null;
  return withServiceConnection(settings, options.signal, async (connection) => {
    const found = await findEntries(connection, settings, filter);
    if (found === "ambiguous" || found.length !== 1) return null;
    const entry = found[0] as LdapEntry;
    if ("stableId" in by && !(await foundByUserFilter(connection, settings, entry))) return null;
    return directoryEntryOf(connection, settings, entry);
  });
}

/**
 * Whether the login search (`userFilter`, with the entry's own username) finds this entry and no
 * other: an entry the filter no longer admits (an account disabled through the filter, a group it
 * requires) is no longer a user, at refresh as at login.
 */
async function foundByUserFilter(connection: LdapConnection, settings: DirectorySettings, entry: LdapEntry): Promise<boolean> {
  const username = text(entry, settings.usernameAttribute);
  if (username === null) return false;
  const found = await findEntries(connection, settings, fillFilter(settings.userFilter, { username }));
  if (found === "ambiguous" || found.length !== 1) return false;
  return stableIdOf(found[0] as LdapEntry, settings) === stableIdOf(entry, settings);
}

/** What failed, told without a secret: error and result codes, never a password or a server message. */
function failureDetail(error: unknown): string {
  if (error instanceof LdapFailure) {
    if (error.kind === "result") return `LDAP result ${error.resultCode}`;
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? `${error.message} (${code})` : error.message;
  }
  return "unexpected error";
}

async function check(settings: DirectorySettings, options: DirectoryCallOptions = {}): Promise<DirectoryCheck> {
  const failed = (category: DirectoryFailureCategory, message: string): DirectoryCheck => ({ ok: false, category, message });
  const categoryOf = (error: unknown, step: "connection" | "bind" | "search"): DirectoryFailureCategory => {
    if (!(error instanceof LdapFailure)) return "configuration";
    if (error.kind === "timeout" || error.kind === "tls") return error.kind;
    return error.kind === "result" ? step : "connection";
  };
  if (settings.userBaseDn === "") return failed("configuration", "userBaseDn is not set");
  let connection: LdapConnection | null = null;
  try {
    try {
      connection = await openSecured(settings, options.signal);
    } catch (error) {
      if (error instanceof ConfigurationFailure) return failed("configuration", error.message);
      return failed(categoryOf(error, "connection"), `Connecting to ${settings.serverUrl} failed: ${failureDetail(error)}`);
    }
    try {
      await bindServiceAccount(connection, settings);
    } catch (error) {
      if (error instanceof ConfigurationFailure) return failed("configuration", error.message);
      return failed(categoryOf(error, "bind"), `The service account bind failed: ${failureDetail(error)}`);
    }
    try {
      await connection.search(settings.userBaseDn, {
        scope: "base",
        filter: "(objectClass=*)",
        attributes: ["1.1"],
        sizeLimit: 1,
      });
    } catch (error) {
      return failed(categoryOf(error, "search"), `Searching userBaseDn failed: ${failureDetail(error)}`);
    }
    return { ok: true };
  } finally {
    await connection?.close();
  }
}

/**
 * The LDAP directory core signs users in against (`createAuth({ directory: ldapDirectory() })`):
 * every call opens its own connection with the settings it is given (ldaps://, or StartTLS before
 * any bind; the certificate and host name verified against the policy's `caBundle`), binds as the
 * service account, and closes the connection when done. An unreachable, slow or misconfigured
 * directory throws `AuthError` 50300 with the reason as `cause`; it never answers like a wrong password.
 *
 * @example
 * ```ts
 * import { createAuth } from "@portcullis/core";
 * import { ldapDirectory } from "@portcullis/ldap";
 * const auth = createAuth({ ...options, directory: ldapDirectory() });
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc4513 (LDAP authentication and TLS)
 */
export function ldapDirectory(): Directory {
  return { authenticate, lookup, check, close: async () => {} };
}
