import type { DirectorySettings } from "./policy.js";

/** A directory entry as sign-in reads it: who the person is and which groups they are in. */
export interface DirectoryEntry {
  /** The entry's DN as the directory returned it: what the password is bound against (LDAP-2). */
  dn: string;
  /**
   * The `stableIdAttribute` value, which survives renames: text as it is (OpenLDAP
   * `entryUUID`), or lower-case hex for a binary value (AD `objectGUID`).
   */
  stableId: string;
  /** The `usernameAttribute` value. */
  username: string;
  displayName: string | null;
  email: string | null;
  /** Group DNs: the `groupAttribute` values, and those `groupSearch` finds. */
  groups: string[];
}

/** Why a directory could not be used, as `testDirectoryPolicy` reports it. */
export type DirectoryFailureCategory = "configuration" | "connection" | "tls" | "timeout" | "bind" | "search";

/** What checking a username and password against the directory comes to. */
export type DirectoryAuthentication =
  | { status: "authenticated"; entry: DirectoryEntry }
  /** No entry has the username: under `directory-first` the login may go on to local accounts. */
  | { status: "no_entry" }
  /** More than one entry has it: refused, never guessed. */
  | { status: "ambiguous" }
  /** The entry exists and the directory refused the password (result 49). */
  | { status: "invalid_credentials" };

/** The entry a login's search found, as {@link DirectoryAuthenticateOptions.beforeBind} is told it: the directory's values, not the typed name. */
export type DirectoryCandidate = Pick<DirectoryEntry, "dn" | "stableId" | "username">;

/** What a caller adds to one call of a {@link Directory}. */
export interface DirectoryCallOptions {
  /**
   * Aborted when the call must end: core aborts it at the call's deadline (`directoryLimits`).
   * The directory then closes the call's connections at once, sends nothing more (no bind) and
   * throws; core has already answered 50300.
   */
  signal?: AbortSignal;
}

/** What a caller adds to one {@link Directory.authenticate}. */
export interface DirectoryAuthenticateOptions extends DirectoryCallOptions {
  /**
   * Called once with the one entry the search found, after the search and before the bind with
   * the user's password (not for no entry, several entries, or an empty username or password).
   * Whatever it throws ends the authentication with that error, unchanged: no bind is made. Core
   * takes the attempt from the throttle counter of the entry here (RL-1), so that every spelling
   * the directory matches to one entry counts against that entry.
   */
  beforeBind?: (entry: DirectoryCandidate) => Promise<void>;
}

/** What checking the settings end to end comes to: connect, TLS, bind, search. */
export type DirectoryCheck = { ok: true } | { ok: false; category: DirectoryFailureCategory; message: string };

/**
 * A directory that core signs users in against (`createAuth({ directory })`);
 * `@portcullis/ldap`'s `ldapDirectory()` is the LDAP one. Every method takes the settings it
 * is to use, so a saved policy applies from the next call without a restart. A directory
 * that cannot be reached, is too slow, or whose TLS fails throws `AuthError` 50300 (its
 * cause says why); it never answers as if the password were wrong. `createAuth` wraps it so that
 * only `directoryLimits.maxConcurrent` calls run at once, each within one deadline whose end
 * aborts `options.signal`.
 */
export interface Directory {
  /**
   * Finds the one entry for `username` with the service account (the username escaped into
   * `userFilter`, LDAP-1), binds as that entry's DN with `password` exactly as typed (LDAP-2),
   * and reads its groups. Empty usernames and passwords never reach it (LDAP-3). Between the
   * search and the bind it awaits `options.beforeBind`, if given.
   */
  authenticate(
    settings: DirectorySettings,
    username: string,
    password: string,
    options?: DirectoryAuthenticateOptions,
  ): Promise<DirectoryAuthentication>;
  /**
   * Reads one entry with the service account, by username (through `userFilter`) or by stable id;
   * null when none or several. By stable id (at refresh), also null when `userFilter`, filled with
   * the entry's own username, no longer finds that entry: it is no longer a user.
   */
  lookup(
    settings: DirectorySettings,
    by: { username: string } | { stableId: string },
    options?: DirectoryCallOptions,
  ): Promise<DirectoryEntry | null>;
  /** Connects, sets up TLS, binds as the service account and searches the user base; says what failed. */
  check(settings: DirectorySettings, options?: DirectoryCallOptions): Promise<DirectoryCheck>;
  /** Closes pooled connections; the directory may be used again afterwards. */
  close(): Promise<void>;
}
