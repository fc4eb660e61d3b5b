import type { DirectoryPolicyInput } from "@portcullis/core";

/**
 * OpenLDAP with the memberof overlay: people anywhere under `ou=people`, found by `uid`; their
 * groups are the `memberOf` values the overlay maintains; `entryUUID` is the stable id.
 * StartTLS on port 389, the server's certificate verified against the organisation's CA.
 *
 * @example
 * ```ts
 * await saveDirectoryPolicy(auth, openLdapPolicy);
 * ```
 */
export const openLdapPolicy: DirectoryPolicyInput = {
  enabled: true,
  serverUrl: "ldap://ldap.example.com:389",
  startTls: true,
  allowPlaintext: false,
  allowPlaintextOnNetwork: false,
  // The PEM of the CA that signed the server's certificate; null trusts Node's built-in CAs.
  caBundle: process.env.LDAP_CA_BUNDLE ?? null,
  bindDn: "cn=portcullis-reader,ou=services,dc=example,dc=com",
  // Write-only; "" keeps the password saved before.
  bindPassword: process.env.LDAP_BIND_PASSWORD ?? "",
  connectTimeoutSecs: 5,
  searchTimeoutSecs: 8,
  userBaseDn: "ou=people,dc=example,dc=com",
  userFilter: "(&(objectClass=inetOrgPerson)(uid={{username}}))",
  stableIdAttribute: "entryUUID",
  usernameAttribute: "uid",
  displayAttribute: "displayName",
  emailAttribute: "mail",
  groupAttribute: "memberOf",
  groupSearch: null,
  mappings: [
    { group: "cn=admins,ou=groups,dc=example,dc=com", role: "admin", priority: 1 },
    { group: "cn=engineers,ou=groups,dc=example,dc=com", role: "engineer", priority: 10 },
  ],
  fallbackRole: null,
  refreshMapping: true,
  loginOrder: "explicit",
};

/**
 * The same directory without the memberof overlay: groups are the `groupOfNames` entries under
 * `ou=groups` whose `member` is the user's DN. (`memberOf` is still read; where the overlay is
 * absent it is simply empty.)
 */
export const openLdapGroupSearchPolicy: DirectoryPolicyInput = {
  ...openLdapPolicy,
  groupSearch: {
    baseDn: "ou=groups,dc=example,dc=com",
    filter: "(&(objectClass=groupOfNames)(member={{dn}}))",
  },
};

/**
 * The same directory with `posixGroup` groups (RFC 2307): their `memberUid` holds user names, not
 * DNs, so the group search names `{{username}}`: the entry's `uid` as the directory holds it.
 */
export const openLdapPosixGroupPolicy: DirectoryPolicyInput = {
  ...openLdapPolicy,
  groupSearch: {
    baseDn: "ou=posix-groups,dc=example,dc=com",
    filter: "(&(objectClass=posixGroup)(memberUid={{username}}))",
  },
  mappings: [
    { group: "cn=developers,ou=posix-groups,dc=example,dc=com", role: "developer", priority: 1 },
    { group: "cn=sales,ou=posix-groups,dc=example,dc=com", role: "sales", priority: 2 },
  ],
};

/**
 * Active Directory over LDAPS (port 636): users found by their logon name (`sAMAccountName`),
 * `objectGUID` as the stable id (stored as the lower-case hex of its 16 bytes), groups from
 * `memberOf` (direct memberships only).
 */
export const activeDirectoryPolicy: DirectoryPolicyInput = {
  enabled: true,
  serverUrl: "ldaps://dc1.corp.example.com:636",
  // Only for ldap://; ldaps:// is TLS from the first byte.
  startTls: true,
  allowPlaintext: false,
  allowPlaintextOnNetwork: false,
  caBundle: process.env.AD_CA_BUNDLE ?? null,
  bindDn: "CN=svc-portcullis,OU=Service Accounts,DC=corp,DC=example,DC=com",
  bindPassword: process.env.AD_BIND_PASSWORD ?? "",
  connectTimeoutSecs: 5,
  searchTimeoutSecs: 8,
  userBaseDn: "OU=Staff,DC=corp,DC=example,DC=com",
  userFilter: "(&(objectClass=person)(sAMAccountName={{username}}))",
  stableIdAttribute: "objectGUID",
  usernameAttribute: "sAMAccountName",
  displayAttribute: "displayName",
  emailAttribute: "mail",
  groupAttribute: "memberOf",
  groupSearch: null,
  mappings: [
    { group: "CN=Finance,OU=Groups,DC=corp,DC=example,DC=com", role: "finance", priority: 1 },
    { group: "CN=VPN Users,OU=Groups,DC=corp,DC=example,DC=com", role: "vpn", priority: 5 },
  ],
  fallbackRole: null,
  refreshMapping: true,
  loginOrder: "explicit",
};
