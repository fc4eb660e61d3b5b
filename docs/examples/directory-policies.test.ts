// Runs docs/examples/directory-policies.ts against a real OpenLDAP (test/fixtures/slapd.ts):
// each policy is saved as written, with only what names the test directory replaced (server,
// CA, service account, user base, group DNs), and fixture users sign in with it.
import { randomBytes } from "node:crypto";
import {
  type Auth,
  type DirectoryPolicyInput,
  ErrorCode,
  type RoleMapping,
  createAuth,
  getDirectoryPolicy,
  isAuthError,
  login,
  memoryStorage,
  saveDirectoryPolicy,
  testDirectoryPolicy,
} from "@portcullis/core";
import { ldapDirectory } from "@portcullis/ldap";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeNeedingService } from "../../test/fixtures/required-service.js";
import {
  type SlapdServer,
  ldapAdGroups,
  ldapAdUsers,
  ldapGroups,
  ldapOus,
  ldapPeople,
  ldapPosixGroups,
  slapdMissing,
  startSlapd,
} from "../../test/fixtures/slapd.js";
import {
  activeDirectoryPolicy,
  openLdapGroupSearchPolicy,
  openLdapPolicy,
  openLdapPosixGroupPolicy,
} from "./directory-policies.js";

const describeWithSlapd = describeNeedingService("docs/examples/directory-policies.test.ts", slapdMissing());
let slapd: SlapdServer;

/** The example's group DNs and the test directory's groups that stand for them. */
const openLdapGroups: Record<string, string> = {
  "cn=admins,ou=groups,dc=example,dc=com": ldapGroups.admins.dn,
  "cn=engineers,ou=groups,dc=example,dc=com": ldapGroups.engineers.dn,
};
const posixGroups: Record<string, string> = {
  "cn=developers,ou=posix-groups,dc=example,dc=com": ldapPosixGroups.developers.dn,
  "cn=sales,ou=posix-groups,dc=example,dc=com": ldapPosixGroups.sales.dn,
};
const adGroups: Record<string, string> = {
  "CN=Finance,OU=Groups,DC=corp,DC=example,DC=com": ldapAdGroups.finance.dn,
  "CN=VPN Users,OU=Groups,DC=corp,DC=example,DC=com": ldapAdGroups.vpnUsers.dn,
};

/** The example's group DN as the test directory names it; a DN the test does not know fails the test. */
function groupIn(groups: Record<string, string>, dn: string): string {
  const replaced = groups[dn];
  if (replaced === undefined) throw new Error(`no test group stands for ${dn}`);
  return replaced;
}

/** Where the test directory keeps what an example names: the user base, the group search base, the groups. */
interface TestDirectoryPlaces {
  userBaseDn: string;
  groupBaseDn?: string;
  groups: Record<string, string>;
}

/**
 * An example policy pointed at the test directory: the server (`ldaps://` kept for an `ldaps://`
 * example), its CA, the service account, the user base, the group search base and the group DNs.
 * Every other field is the example's own.
 */
function atTestDirectory(example: DirectoryPolicyInput, places: TestDirectoryPlaces): DirectoryPolicyInput {
  const ldaps = example.serverUrl?.startsWith("ldaps://") === true;
  const { groupSearch } = example;
  return {
    ...example,
    serverUrl: ldaps ? (slapd.ldapsUrl as string) : slapd.url,
    caBundle: slapd.caPem,
    bindDn: slapd.serviceDn,
    bindPassword: slapd.servicePassword,
    userBaseDn: places.userBaseDn,
    groupSearch: groupSearch ? { ...groupSearch, baseDn: places.groupBaseDn ?? groupSearch.baseDn } : null,
    mappings: (example.mappings as RoleMapping[]).map((rule) => ({ ...rule, group: groupIn(places.groups, rule.group) })),
  };
}

/** An auth instance with the LDAP directory and a policy saved; directory login is on. */
async function authWith(policy: DirectoryPolicyInput): Promise<Auth> {
  const auth = createAuth({
    storage: memoryStorage(),
    issuer: "https://api.example.com",
    audience: "example-api",
    secrets: { signing: randomBytes(32).toString("base64url"), encryption: randomBytes(32).toString("base64url") },
    directory: ldapDirectory(),
  });
  await saveDirectoryPolicy(auth, policy);
  return auth;
}

/** Signs in against the directory; the roles of the new session. */
async function rolesOf(auth: Auth, username: string, password: string): Promise<string[]> {
  const result = await login(auth, { username, password, provider: "directory" });
  if (result.status !== "authenticated") throw new Error(`expected a session, got ${result.status}`);
  return result.tokens.user.roles;
}

/** The code a directory login fails with. */
async function failureOf(auth: Auth, username: string, password: string): Promise<number> {
  try {
    await login(auth, { username, password, provider: "directory" });
  } catch (error) {
    if (isAuthError(error)) return error.code;
    throw error;
  }
  throw new Error("expected the login to fail");
}

describeWithSlapd("docs/examples/directory-policies.ts against slapd", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  it("openLdapPolicy: saved as written, checks out, and maps memberOf groups to roles, the lowest priority first", async () => {
    const auth = await authWith(atTestDirectory(openLdapPolicy, { userBaseDn: ldapOus.people, groups: openLdapGroups }));
    const shown = await getDirectoryPolicy(auth);
    expect(shown).toMatchObject({
      enabled: true,
      startTls: true,
      userFilter: openLdapPolicy.userFilter,
      stableIdAttribute: "entryUUID",
      groupAttribute: "memberOf",
      fallbackRole: null,
      credentialConfigured: true,
    });
    expect(shown).not.toHaveProperty("bindPassword");
    expect(await testDirectoryPolicy(auth)).toEqual({ ok: true });

    const { alice, johnSmith, zoe } = ldapPeople;
    expect(await rolesOf(auth, alice.uid, alice.password)).toEqual(["admin"]); // admins (1) and engineers (10)
    expect(await rolesOf(auth, johnSmith.uid, johnSmith.password)).toEqual(["engineer"]);
    expect(await failureOf(auth, alice.uid, "not alice's password")).toBe(ErrorCode.AuthenticationFailed);
    // zoe is only in staff, which no rule maps, and the example has no fallback role.
    expect(await failureOf(auth, zoe.uid, zoe.password)).toBe(ErrorCode.Forbidden);
  });

  it("openLdapGroupSearchPolicy: groups found by a search for the user's DN give the same roles", async () => {
    const auth = await authWith(
      atTestDirectory(openLdapGroupSearchPolicy, {
        userBaseDn: ldapOus.people,
        groupBaseDn: ldapOus.groups,
        groups: openLdapGroups,
      }),
    );
    expect((await getDirectoryPolicy(auth)).groupSearch).toEqual({
      baseDn: ldapOus.groups,
      filter: "(&(objectClass=groupOfNames)(member={{dn}}))",
    });
    const { alice, johnSmith } = ldapPeople;
    expect(await rolesOf(auth, alice.uid, alice.password)).toEqual(["admin"]);
    // John's DN holds an escaped comma (cn=Smith\2C John), filled into the filter escaped.
    expect(await rolesOf(auth, johnSmith.uid, johnSmith.password)).toEqual(["engineer"]);
  });

  it("openLdapPosixGroupPolicy: posixGroup memberUid groups, found by the entry's uid, give roles to a user with no memberOf", async () => {
    const auth = await authWith(
      atTestDirectory(openLdapPosixGroupPolicy, {
        userBaseDn: ldapOus.people,
        groupBaseDn: ldapOus.posixGroups,
        groups: posixGroups,
      }),
    );
    expect((await getDirectoryPolicy(auth)).groupSearch?.filter).toBe("(&(objectClass=posixGroup)(memberUid={{username}}))");
    const { alice, bob, zoe, johnSmith } = ldapPeople;
    // bob is in no groupOfNames, so he has no memberOf: his roles come from the group search alone.
    expect(await rolesOf(auth, bob.uid, bob.password)).toEqual(["developer"]); // developers (1) and sales (2)
    expect(await rolesOf(auth, zoe.uid, zoe.password)).toEqual(["sales"]);
    expect(await rolesOf(auth, alice.uid, alice.password)).toEqual(["developer"]);
    // John is in no posix group, and this policy maps none of his memberOf groups.
    expect(await failureOf(auth, johnSmith.uid, johnSmith.password)).toBe(ErrorCode.Forbidden);
  });

  it("activeDirectoryPolicy: over ldaps://, sAMAccountName signs in, objectGUID links the account, the lowest priority wins", async () => {
    const auth = await authWith(atTestDirectory(activeDirectoryPolicy, { userBaseDn: ldapOus.adUsers, groups: adGroups }));
    expect((await getDirectoryPolicy(auth)).serverUrl).toBe(slapd.ldapsUrl);
    expect(await testDirectoryPolicy(auth)).toEqual({ ok: true });

    const { carol, dan } = ldapAdUsers;
    expect(await rolesOf(auth, carol.sAMAccountName, carol.password)).toEqual(["finance"]); // Finance (1) and VPN Users (5)
    expect(await rolesOf(auth, dan.sAMAccountName, dan.password)).toEqual(["vpn"]);

    const danUser = await auth.storage.users.findByUsernameKey(dan.sAMAccountName);
    expect(danUser).toMatchObject({ source: "directory", passwordHash: null });
    const links = await auth.storage.identities.listByUser(danUser?.id ?? "");
    expect(links.map(({ provider, subject }) => ({ provider, subject }))).toEqual([
      { provider: "directory", subject: dan.objectGuidHex },
    ]);
    // The filter asks for sAMAccountName: the user@domain form is not a username here.
    expect(await failureOf(auth, dan.userPrincipalName, dan.password)).toBe(ErrorCode.AuthenticationFailed);
  });
});
