/**
 * An LDAP directory: {@link ldapDirectory} signs directory users in (search, bind, groups) over
 * `ldaps://` or StartTLS, for core's directory sign-in.
 *
 * @packageDocumentation
 * @module @portcullis/ldap
 */
export { ldapDirectory } from "./ldap-directory.js";
