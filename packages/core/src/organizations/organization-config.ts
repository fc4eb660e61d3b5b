import { type Duration, type OptionNames, durationSeconds, fail, refuseUnknownOptions } from "../config-values.js";
import { rolesProblem } from "../users/roles.js";

/** What the host's DNS check is given: the TXT record an organization must publish to prove it owns `domain`. */
export interface DomainVerificationRecord {
  /** The domain claimed, lower case (IDNA form). */
  domain: string;
  /** Where the TXT record must be: `_portcullis-verification.<domain>`. */
  recordName: string;
  /** What it must hold. */
  recordValue: string;
}

/**
 * The `organizations` options of `createAuth` (OR-1…): groups of users with roles of their own,
 * invitations by email, an active organization in every access token. Off unless `enabled`.
 */
export interface OrganizationsConfig {
  /** Turns organizations and the `/auth/orgs…` routes on. Default `false` (the routes answer 40400). */
  enabled?: boolean;
  /**
   * Who may create an organization: `"any-user"` (default: every signed-in user, who becomes its
   * owner) or `"administrators"` (only holders of `adminRole`).
   */
  creation?: "any-user" | "administrators";
  /**
   * The roles a member may hold in an organization, highest first. Default
   * `["owner", "admin", "member"]`. The first is the owner's: only owners delete the organization,
   * and the last one cannot leave or lose it (OR-3). The last is what a member joining by a
   * verified domain gets. A member never grants a role above their own highest (OR-4).
   */
  roles?: string[];
  /**
   * The roles that administer an organization: members, roles, invitations, domains, name and
   * rules. Default the first two of `roles` (`owner`, `admin`).
   */
  administratorRoles?: string[];
  /** How long an invitation stays valid: default `"7d"`, at most `"30d"`. */
  invitationTtl?: Duration;
  /**
   * Checks that the TXT record of a domain verification is published (the library opens no network
   * connection of its own), for instance with `node:dns/promises`' `resolveTxt`. Without it domains
   * cannot be verified, and no one joins without an invitation.
   */
  verifyDomain?: (record: DomainVerificationRecord) => Promise<boolean>;
}

/** {@link OrganizationsConfig} with its defaults filled in. */
export interface ResolvedOrganizationsConfig {
  enabled: boolean;
  creation: "any-user" | "administrators";
  /** Highest first. */
  roles: string[];
  ownerRole: string;
  administratorRoles: string[];
  invitationTtlSeconds: number;
  verifyDomain: ((record: DomainVerificationRecord) => Promise<boolean>) | null;
}

const optionNames = {
  enabled: true,
  creation: true,
  roles: true,
  administratorRoles: true,
  invitationTtl: true,
  verifyDomain: true,
} satisfies OptionNames<OrganizationsConfig>;

const maxInvitationTtlSeconds = 30 * 86_400;

/**
 * Checks the `organizations` options and fills in their defaults; throws a `TypeError` naming a
 * bad one.
 *
 * @example
 * ```ts
 * resolveOrganizationsConfig({ enabled: true }).ownerRole; // "owner"
 * ```
 */
export function resolveOrganizationsConfig(config: OrganizationsConfig | undefined): ResolvedOrganizationsConfig {
  const options = config === undefined ? {} : config;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    fail(`organizations must be an object such as { enabled: true }; got ${JSON.stringify(options)}`);
  }
  refuseUnknownOptions(options, optionNames, "organizations.");
  const { enabled = false, creation = "any-user", roles = ["owner", "admin", "member"], invitationTtl = "7d" } = options;
  if (typeof enabled !== "boolean") fail(`organizations.enabled must be true or false; got ${JSON.stringify(enabled)}`);
  if (creation !== "any-user" && creation !== "administrators") {
    fail(`organizations.creation must be "any-user" or "administrators"; got ${JSON.stringify(creation)}`);
  }
  const rolesIssue = rolesProblem(roles);
  if (rolesIssue !== null) fail(`organizations.roles ${rolesIssue}; got ${JSON.stringify(roles)}`);
  if (roles.length === 0 || new Set(roles).size !== roles.length) {
    fail(`organizations.roles must name at least one role, each once, highest first; got ${JSON.stringify(roles)}`);
  }
  const administratorRoles = options.administratorRoles ?? roles.slice(0, 2);
  const unknown = Array.isArray(administratorRoles) ? administratorRoles.filter((role) => !roles.includes(role)) : null;
  if (unknown === null || unknown.length > 0) {
    fail(`organizations.administratorRoles must be roles of organizations.roles; got ${JSON.stringify(administratorRoles)}`);
  }
  const invitationTtlSeconds = durationSeconds(invitationTtl, "organizations.invitationTtl");
  if (invitationTtlSeconds > maxInvitationTtlSeconds) {
    fail(`organizations.invitationTtl must be at most "30d"; got ${JSON.stringify(invitationTtl)}`);
  }
  const { verifyDomain } = options;
  if (verifyDomain !== undefined && typeof verifyDomain !== "function") {
    fail("organizations.verifyDomain must be an async function ({ domain, recordName, recordValue }) => boolean");
  }
  return {
    enabled,
    creation,
    roles: [...roles],
    ownerRole: roles[0] as string,
    administratorRoles: [...administratorRoles],
    invitationTtlSeconds,
    verifyDomain: verifyDomain ?? null,
  };
}
