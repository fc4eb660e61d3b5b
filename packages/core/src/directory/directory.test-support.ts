/**
 * An in-memory `Directory` for core's unit tests: entries and their passwords in a list the test
 * changes as it goes. The LDAP one is proven against a real slapd in `packages/ldap` and
 * `test/http/directory.test.ts`. Not a test file itself; excluded from the build.
 */
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { Directory, DirectoryCheck, DirectoryEntry } from "./directory.js";
import type { DirectoryPolicyInput, DirectorySettings } from "./policy.js";

/** A person in the fake directory. */
export interface FakePerson {
  entry: DirectoryEntry;
  password: string;
}

/** The fake directory, with what the test changes and what it reads back. */
export interface FakeDirectory extends Directory {
  people: FakePerson[];
  /** When set, every call throws 50300 as an unreachable directory does. */
  down: boolean;
  /** What `check` answers. */
  checkResult: DirectoryCheck;
  /** The settings of every call, in order. */
  calls: { method: "authenticate" | "lookup" | "check"; settings: DirectorySettings }[];
  /** The username of each entry a password was tried against, in order. */
  binds: string[];
}

export const groupsDn = {
  admins: "cn=admins,ou=groups,dc=example,dc=com",
  engineers: "cn=engineers,ou=groups,dc=example,dc=com",
  sales: "cn=sales,ou=groups,dc=example,dc=com",
} as const;

/** A directory person: `uid` as username, a stable id derived from it, the given groups. */
export function person(username: string, groups: string[], password = `${username} directory password`): FakePerson {
  return {
    entry: {
      dn: `uid=${username},ou=people,dc=example,dc=com`,
      stableId: `uuid-${username}`,
      username,
      displayName: `${username} Example`,
      email: `${username}@example.com`,
      groups,
    },
    password,
  };
}

/**
 * How an LDAP server compares a typed name with a `uid` (caseIgnoreMatch after RFC 4518's string
 * preparation), near enough for these tests: compatibility forms, soft hyphens, zero-width and
 * other invisible code points mapped to nothing, case folded (ß as ss), spaces at the ends
 * dropped and runs of them folded into one.
 */
export function ldapMatchKey(name: string): string {
  return name
    .normalize("NFKC")
    .replace(/[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu, "")
    .toLowerCase()
    .replaceAll("ß", "ss")
    .replace(/\s+/gu, " ")
    .trim();
}

export function fakeDirectory(people: FakePerson[] = []): FakeDirectory {
  const directory: FakeDirectory = {
    people,
    down: false,
    checkResult: { ok: true },
    calls: [],
    binds: [],
    async authenticate(settings, username, password, options) {
      reach("authenticate", settings);
      const found = directory.people.filter((candidate) => ldapMatchKey(candidate.entry.username) === ldapMatchKey(username));
      if (found.length === 0) return { status: "no_entry" };
      if (found.length > 1) return { status: "ambiguous" };
      const [match] = found as [FakePerson];
      const { dn, stableId, username: stored } = match.entry;
      await options?.beforeBind?.({ dn, stableId, username: stored });
      directory.binds.push(stored);
      return match.password === password
        ? { status: "authenticated", entry: structuredClone(match.entry) }
        : { status: "invalid_credentials" };
    },
    async lookup(settings, by) {
      reach("lookup", settings);
      const found = directory.people.filter((candidate) =>
        "username" in by
          ? ldapMatchKey(candidate.entry.username) === ldapMatchKey(by.username)
          : candidate.entry.stableId === by.stableId,
      );
      return found.length === 1 ? structuredClone((found[0] as FakePerson).entry) : null;
    },
    async check(settings) {
      reach("check", settings);
      return directory.checkResult;
    },
    async close() {},
  };
  function reach(method: "authenticate" | "lookup" | "check", settings: DirectorySettings) {
    directory.calls.push({ method, settings });
    if (directory.down) throw new AuthError(ErrorCode.Unavailable, "The directory is unavailable");
  }
  return directory;
}

/** A working policy for the fake directory: admins → admin (1), engineers → engineer (5), no fallback. */
export const workingPolicy: DirectoryPolicyInput = {
  enabled: true,
  serverUrl: "ldaps://ldap.example.com",
  bindDn: "cn=reader,dc=example,dc=com",
  bindPassword: "service account password",
  userBaseDn: "ou=people,dc=example,dc=com",
  mappings: [
    { group: groupsDn.admins, role: "admin", priority: 1 },
    { group: groupsDn.engineers, role: "engineer", priority: 5 },
  ],
};
