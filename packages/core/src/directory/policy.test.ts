import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { type DirectoryPolicyInput, defaultDirectoryPolicy, validateDirectoryPolicy } from "./policy.js";

const working: DirectoryPolicyInput = {
  enabled: true,
  serverUrl: "ldaps://ldap.example.com:636",
  bindDn: "cn=reader,dc=example,dc=com",
  userBaseDn: "ou=people,dc=example,dc=com",
  mappings: [{ group: "cn=admins,ou=groups,dc=example,dc=com", role: "admin", priority: 1 }],
};

function refusal(input: unknown, current = defaultDirectoryPolicy) {
  try {
    validateDirectoryPolicy(input, current);
  } catch (error) {
    if (error instanceof AuthError) {
      const field = error.message.split(" ")[0] as string;
      expect(error.message.length, "the message says what to fix, not only where").toBeGreaterThan(field.length + 12);
      return { code: error.code, field, message: error.message };
    }
    throw error;
  }
  throw new Error("the policy was accepted");
}

describe("validateDirectoryPolicy", () => {
  it("fills the contract's defaults and keeps only the scheme, host and port of the URL", () => {
    const policy = validateDirectoryPolicy({ ...working, serverUrl: "ldaps://LDAP.example.com:636/" });
    expect(policy).toEqual({ ...defaultDirectoryPolicy, ...working, serverUrl: "ldaps://ldap.example.com:636" });
    expect(defaultDirectoryPolicy).toMatchObject({
      startTls: true,
      connectTimeoutSecs: 5,
      searchTimeoutSecs: 8,
      userFilter: "(uid={{username}})",
      stableIdAttribute: "entryUUID",
      groupAttribute: "memberOf",
      fallbackRole: null,
      refreshMapping: true,
      loginOrder: "explicit",
    });
  });

  it("an empty server URL says so; a disabled policy keeps what it is given, and leaves out what it is not", () => {
    expect(refusal({ ...working, serverUrl: "" }).message).toBe("serverUrl must be a non-empty string");
    expect(validateDirectoryPolicy({})).toMatchObject({ serverUrl: "", userBaseDn: "" });
    expect(validateDirectoryPolicy({ ...working, enabled: false })).toMatchObject({ userBaseDn: working.userBaseDn });
  });

  it("a field left out keeps its saved value; a disabled policy may leave the server out", () => {
    const saved = validateDirectoryPolicy(working);
    expect(validateDirectoryPolicy({ fallbackRole: "guest" }, saved)).toEqual({ ...saved, fallbackRole: "guest" });
    expect(validateDirectoryPolicy({}).enabled).toBe(false);
    expect(refusal({ enabled: true })).toMatchObject({ code: 42200, field: "serverUrl" });
  });

  it("LDAP-4: ldap:// needs StartTLS, or allowPlaintext on loopback, or also allowPlaintextOnNetwork elsewhere", () => {
    const plain = { ...working, serverUrl: "ldap://ldap.example.com", startTls: false };
    expect(refusal(plain)).toMatchObject({ field: "startTls" });
    expect(refusal({ ...plain, allowPlaintext: true })).toMatchObject({ field: "allowPlaintext" });
    expect(validateDirectoryPolicy({ ...plain, allowPlaintext: true, allowPlaintextOnNetwork: true }).startTls).toBe(false);
    for (const host of ["127.0.0.1:3890", "localhost", "[::1]:389"]) {
      expect(validateDirectoryPolicy({ ...plain, serverUrl: `ldap://${host}`, allowPlaintext: true }).allowPlaintext).toBe(true);
    }
    expect(validateDirectoryPolicy({ ...working, serverUrl: "ldap://ldap.example.com" }).startTls).toBe(true);
  });

  it("42200 names the first bad field, for each field", () => {
    const cases: Array<[unknown, string]> = [
      [[], "policy"],
      ["ldaps://ldap.example.com", "policy"],
      [null, "policy"],
      [{ ...working, [`x${"y".repeat(100)}`]: 1 }, `x${"y".repeat(63)}`],
      [{ ...working, serverUrl: "ldaps://ldap.example.com/dc=example" }, "serverUrl"],
      [{ ...working, startTls: "yes" }, "startTls"],
      [{ ...working, allowPlaintext: "yes" }, "allowPlaintext"],
      [{ ...working, allowPlaintextOnNetwork: 1 }, "allowPlaintextOnNetwork"],
      [{ ...working, displayAttribute: "display name" }, "displayAttribute"],
      [{ ...working, emailAttribute: "" }, "emailAttribute"],
      [{ ...working, groupAttribute: "1memberOf" }, "groupAttribute"],
      [{ ...working, userBaseDn: "ou=people\n,dc=x" }, "userBaseDn"],
      [{ ...working, userFilter: "(x=1))((uid={{username}})" }, "userFilter"],
      [{ ...working, serverUrl: "ldaps://" }, "serverUrl"],
      [{ ...working, serverUrl: "ldaps://:secret@ldap.example.com" }, "serverUrl"],
      [{ ...working, serverUrl: "ldaps://ldap.example.com?x" }, "serverUrl"],
      [{ ...working, serverUrl: "ldaps://ldap.example.com#x" }, "serverUrl"],
      [{ ...working, userBaseDn: "" }, "userBaseDn"],
      [{ ...working, userBaseDn: "o".repeat(1025) }, "userBaseDn"],
      [{ ...working, bindPassword: "p".repeat(1025) }, "bindPassword"],
      [{ ...working, connectTimeoutSecs: "5" }, "connectTimeoutSecs"],
      [{ ...working, userFilter: "((uid={{username}})" }, "userFilter"],
      [{ ...working, userFilter: ")(uid={{username}})(" }, "userFilter"],
      [{ ...working, userFilter: "x(uid={{username}})" }, "userFilter"],
      [{ ...working, userFilter: "(uid={{username}})x" }, "userFilter"],
      [{ ...working, mappings: Array.from({ length: 1001 }, () => ({ group: "cn=a", role: "r", priority: 1 })) }, "mappings"],
      [{ ...working, mappings: [null] }, "mappings[0]"],
      [{ ...working, mappings: ["cn=a"] }, "mappings[0]"],
      [{ ...working, mappings: [{ group: "cn=a", role: "admin", priority: "1" }] }, "mappings[0].priority"],
      [{ ...working, extra: 1 }, "extra"],
      [{ ...working, enabled: "yes" }, "enabled"],
      [{ ...working, serverUrl: "https://ldap.example.com" }, "serverUrl"],
      [{ ...working, serverUrl: "ldaps://user:pw@ldap.example.com" }, "serverUrl"],
      [{ ...working, serverUrl: "ldaps://ldap.example.com/dc=x?uid" }, "serverUrl"],
      [{ ...working, serverUrl: "not a url" }, "serverUrl"],
      [{ ...working, caBundle: "not pem" }, "caBundle"],
      [{ ...working, caBundle: "-----BEGIN CERTIFICATE-----\r\nMIIB\u0007\n-----END CERTIFICATE-----" }, "caBundle"],
      [{ ...working, bindDn: 5 }, "bindDn"],
      [{ ...working, connectTimeoutSecs: 0 }, "connectTimeoutSecs"],
      [{ ...working, searchTimeoutSecs: 121 }, "searchTimeoutSecs"],
      [{ ...working, searchTimeoutSecs: Number.NaN }, "searchTimeoutSecs"],
      [{ ...working, userBaseDn: " " }, "userBaseDn"],
      [{ ...working, userFilter: "(uid=alice)" }, "userFilter"],
      [{ ...working, userFilter: "(|(uid={{username}})(mail={{username}}))" }, "userFilter"],
      [{ ...working, userFilter: "uid={{username}}" }, "userFilter"],
      [{ ...working, userFilter: "(uid={{username}}))(" }, "userFilter"],
      [{ ...working, stableIdAttribute: "entry UUID" }, "stableIdAttribute"],
      [{ ...working, usernameAttribute: "1uid" }, "usernameAttribute"],
      [{ ...working, groupSearch: { baseDn: "ou=groups,dc=x", filter: "(member=x)" } }, "groupSearch.filter"],
      [
        { ...working, groupSearch: { baseDn: "ou=groups,dc=x", filter: "(|(member={{dn}})(member={{dn}}))" } },
        "groupSearch.filter",
      ],
      [
        { ...working, groupSearch: { baseDn: "ou=groups,dc=x", filter: "(|(a={{username}})(b={{username}}))" } },
        "groupSearch.filter",
      ],
      [{ ...working, groupSearch: "ou=groups" }, "groupSearch"],
      [{ ...working, mappings: {} }, "mappings"],
      [{ ...working, mappings: [{ group: "cn=a", role: "admin", priority: 1.5 }] }, "mappings[0].priority"],
      [{ ...working, mappings: [{ group: "", role: "admin", priority: 1 }] }, "mappings[0].group"],
      [{ ...working, fallbackRole: 3 }, "fallbackRole"],
      [{ ...working, fallbackRole: "r".repeat(65) }, "fallbackRole"],
      [{ ...working, mappings: [{ group: "cn=a", role: "r".repeat(65), priority: 1 }] }, "mappings[0].role"],
      [{ ...working, refreshMapping: 1 }, "refreshMapping"],
      [{ ...working, loginOrder: "local-first" }, "loginOrder"],
      [{ ...working, userBaseDn: "ou=people\u0000,dc=x" }, "userBaseDn"],
    ];
    for (const [input, field] of cases) expect(refusal(input), field).toMatchObject({ code: 42200, field });
  });

  it("the edges that are accepted: lengths, timeouts, 1000 mappings, empty optional fields, ldaps without StartTLS, a disabled policy's server", () => {
    const policy = validateDirectoryPolicy({
      ...working,
      serverUrl: "ldaps://LDAP.example.com",
      startTls: false,
      userBaseDn: "o".repeat(1024),
      bindPassword: "p".repeat(1024),
      bindDn: "",
      caBundle: "",
      fallbackRole: "",
      connectTimeoutSecs: 120,
      searchTimeoutSecs: 0.5,
      mappings: Array.from({ length: 1000 }, (_, priority) => ({ group: "cn=a", role: "r", priority })),
    });
    expect(policy).toMatchObject({ startTls: false, bindDn: null, caBundle: null, fallbackRole: null, connectTimeoutSecs: 120 });
    const longRole = "r".repeat(64);
    expect(
      validateDirectoryPolicy({ ...working, fallbackRole: longRole, mappings: [{ group: "cn=a", role: longRole, priority: 1 }] }),
    ).toMatchObject({ fallbackRole: longRole, mappings: [{ role: longRole }] });
    expect(validateDirectoryPolicy({ ...working, bindPassword: null }).enabled).toBe(true);
    expect(validateDirectoryPolicy({ serverUrl: "ldaps://LDAP.example.com:636" }).serverUrl).toBe("ldaps://ldap.example.com:636");
  });

  it("accepts a group search, a CA bundle, an anonymous search and directory-first logins", () => {
    const policy = validateDirectoryPolicy({
      ...working,
      bindDn: null,
      caBundle: "-----BEGIN CERTIFICATE-----\r\nMIIB\r\n-----END CERTIFICATE-----\n",
      groupSearch: { baseDn: "ou=groups,dc=example,dc=com", filter: "(&(objectClass=groupOfNames)(member={{dn}}))" },
      loginOrder: "directory-first",
    });
    expect(policy).toMatchObject({
      bindDn: null,
      loginOrder: "directory-first",
      groupSearch: { baseDn: "ou=groups,dc=example,dc=com" },
    });
    for (const filter of ["(memberUid={{username}})", "(|(member={{dn}})(memberUid={{username}}))"]) {
      expect(validateDirectoryPolicy({ ...working, groupSearch: { baseDn: "ou=groups", filter } }).groupSearch?.filter).toBe(
        filter,
      );
    }
  });

  it("the messages of the placeholder rules", () => {
    const message = (input: unknown) => {
      try {
        validateDirectoryPolicy(input);
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    expect(message({ ...working, userFilter: "(uid=x)" })).toBe("userFilter must contain {{username}} exactly once");
    expect(message({ ...working, groupSearch: { baseDn: "ou=g", filter: "(member=x)" } })).toBe(
      "groupSearch.filter must contain {{dn}} or {{username}}, each at most once",
    );
  });
});
