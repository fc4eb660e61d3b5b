export { ldapDirectory } from "./ldap-directory.js";
