import { describe, expect, it } from "vitest";
import { normalizeDn, rolesForGroups } from "./roles.js";

describe("normalizeDn", () => {
  it("LDAP-5: case, spaces around separators, escapes and multi-valued RDN order do not matter", () => {
    const same = [
      "cn=Admins,ou=Groups,dc=example,dc=test",
      "CN=admins, OU=groups , DC=Example,dc=TEST",
      "cn = ADMINS,ou=groups,dc=example,dc=test",
      "cn=\\41dmins,ou=groups,dc=example,dc=test",
      "cn=\\61dmins,ou=groups,dc=example,dc=test",
    ];
    for (const dn of same) expect(normalizeDn(dn), dn).toBe(normalizeDn(same[0] as string));
    expect(normalizeDn("cn=a+uid=b,dc=x")).toBe(normalizeDn("UID=B + CN=A,dc=x"));
  });

  it("LDAP-2: an escaped comma or plus stays inside the value; different names differ", () => {
    expect(normalizeDn("cn=Smith\\, John,dc=x")).toBe(normalizeDn("cn=smith\\2c john,dc=x"));
    expect(normalizeDn("cn=Smith\\, John,dc=x")).not.toBe(normalizeDn("cn=Smith,cn=John,dc=x"));
    expect(normalizeDn("cn=a\\+b,dc=x")).not.toBe(normalizeDn("cn=a+b,dc=x"));
    expect(normalizeDn("cn=admins,dc=example,dc=test")).not.toBe(normalizeDn("cn=admins,dc=example,dc=org"));
    expect(normalizeDn("cn=admins ,dc=x")).toBe(normalizeDn("cn=admins,dc=x"));
    expect(normalizeDn("cn=admins\\ ,dc=x")).not.toBe(normalizeDn("cn=admins,dc=x"));
    expect(normalizeDn("cn=\\C3\\A9quipe,dc=x")).toBe(normalizeDn("cn=Équipe,dc=x"));
  });

  it("LDAP-5: spaces inside a value count; any number of unescaped spaces around it does not", () => {
    expect(normalizeDn("cn=domain admins,dc=x")).not.toBe(normalizeDn("cn=domainadmins,dc=x"));
    expect(normalizeDn("cn=  domain  admins  ,dc=x")).toBe(normalizeDn("cn=domain  admins,dc=x"));
    expect(normalizeDn("cn=  domain  admins  ,dc=x")).not.toBe(normalizeDn("cn=domain admins,dc=x"));
  });

  it("malformed parts are compared as they are: a trailing backslash, a part without =", () => {
    expect(normalizeDn("cn=a,dc=x\\")).not.toBe(normalizeDn("cn=a,dc=x\\undefined"));
    expect(normalizeDn("admins,dc=x")).not.toBe(normalizeDn("=admins,dc=x"));
    expect(normalizeDn(" Admins ,dc=x")).toBe(normalizeDn("admins,dc=x"));
  });

  it("never throws on malformed input", () => {
    for (const dn of ["", ",", "\\", "cn", "=x", "cn=\\zz", "cn=\\4", "cn=a\\"]) expect(typeof normalizeDn(dn)).toBe("string");
  });
});

describe("rolesForGroups", () => {
  const policy = {
    mappings: [
      { group: "cn=staff,ou=groups,dc=x", role: "member", priority: 20 },
      { group: "cn=admins,ou=groups,dc=x", role: "admin", priority: 10 },
      { group: "cn=ops,ou=groups,dc=x", role: "operator", priority: 10 },
    ],
    fallbackRole: null,
  };

  it("LDAP-5: of the groups a user is in, the lowest priority number wins; the first listed among equals", () => {
    expect(rolesForGroups(policy, ["CN=Staff,OU=Groups,DC=x", "cn=admins, ou=groups, dc=x"])).toEqual({
      matchedRule: policy.mappings[1],
      roles: ["admin"],
    });
    expect(rolesForGroups(policy, ["cn=ops,ou=groups,dc=x", "cn=admins,ou=groups,dc=x"])?.roles).toEqual(["admin"]);
    expect(rolesForGroups(policy, ["cn=staff,ou=groups,dc=x"])?.roles).toEqual(["member"]);
  });

  it("LDAP-5: in no mapped group, the fallback role; without one, denied", () => {
    expect(rolesForGroups(policy, ["cn=other,dc=x"])).toBeNull();
    expect(rolesForGroups(policy, [])).toBeNull();
    expect(rolesForGroups({ ...policy, fallbackRole: "guest" }, ["cn=other,dc=x"])).toEqual({
      matchedRule: null,
      roles: ["guest"],
    });
  });
});
