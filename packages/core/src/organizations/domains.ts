import { domainToASCII } from "node:url";
import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { requiredString } from "../flows/input.js";
import type { DomainRecord, MembershipRecord, OrganizationRecord } from "../storage/types.js";
import { emailKeyOf } from "../users/email.js";
import { signedInUser } from "../users/signed-in-user.js";
import { lowestRole, membershipOf, noSuchOrganization, organizationsOf, requireAdministrator } from "./organization-access.js";
import { type OrganizationView, organizationView } from "./organization-view.js";

/** A domain as the organization's administrators see it, with the TXT record that proves it. */
export interface DomainView {
  domain: string;
  /** Where the TXT record goes. */
  recordName: string;
  /** What it must hold. */
  recordValue: string;
  createdAt: number;
  verifiedAt: number | null;
}

const recordNameOf = (domain: string) => `_portcullis-verification.${domain}`;

const toView = ({ domain, verificationValue, createdAt, verifiedAt }: DomainRecord): DomainView => ({
  domain,
  recordName: recordNameOf(domain),
  recordValue: verificationValue,
  createdAt,
  verifiedAt,
});

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Reads a domain name: lower case, in its IDNA (punycode) form, of at least two labels of letters,
 * digits and inner hyphens, at most 253 characters.
 *
 * @throws {AuthError} 40001 missing, 40002 not a string, 42200 not a domain name.
 */
export function readDomain(value: unknown): string {
  const domain = domainToASCII(requiredString(value, "domain").trim().toLowerCase().replace(/\.$/, ""));
  const labels = domain.split(".");
  if (domain === "" || domain.length > 253 || labels.length < 2 || !labels.every((part) => label.test(part))) {
    throw new AuthError(ErrorCode.ValidationFailed, "domain must be a domain name such as example.com");
  }
  return domain;
}

const noSuchDomain = () => new AuthError(ErrorCode.NotFound, "No such domain of this organization");

/** The input of the domain flows: the signed-in administrator, the organization and the domain. */
export interface DomainInput {
  userId: string;
  orgId: string;
  domain: string;
}

/**
 * Claims a domain for an organization (`POST /auth/orgs/:orgId/domains`), unverified, and answers
 * the TXT record that proves it (OR-11). By its administrators.
 *
 * @throws {AuthError} 40400 not a member, 40300 not an administrator, 42200 not a domain, 40900 already claimed by it.
 */
export async function addDomain(auth: Auth, input: DomainInput): Promise<DomainView> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const record: DomainRecord = {
    orgId: organization.id,
    domain: readDomain(input.domain),
    verificationValue: `portcullis-verification=${randomId(auth)}`,
    createdAt: auth.now(),
    verifiedAt: null,
  };
  if (!(await store.addDomain(record)))
    throw new AuthError(ErrorCode.Conflict, "The organization has claimed this domain already");
  return toView(record);
}

/** An organization's domains (`GET /auth/orgs/:orgId/domains`), for its administrators. */
export async function listDomains(auth: Auth, input: { userId: string; orgId: string }): Promise<DomainView[]> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  return (await store.listDomains(organization.id)).map(toView);
}

/**
 * Verifies a claimed domain (`POST /auth/orgs/:orgId/domains/:domain/verify`) by the host's
 * `organizations.verifyDomain`, which looks its TXT record up: the library opens no connection of
 * its own (OR-11). A domain is verified for one organization at most.
 *
 * @throws {AuthError} 40400 not a member, no such domain, or no `verifyDomain` configured; 40300 not an administrator; 42200 the record was not found; 40900 verified by another organization; 50300 the check failed.
 */
export async function verifyDomain(auth: Auth, input: DomainInput): Promise<DomainView> {
  const check = auth.config.organizations.verifyDomain;
  if (check === null) throw new AuthError(ErrorCode.NotFound, "Domain verification needs organizations.verifyDomain");
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const domain = readDomain(input.domain);
  const record = (await store.listDomains(organization.id)).find((claimed) => claimed.domain === domain);
  if (record === undefined) throw noSuchDomain();
  if (record.verifiedAt === null) {
    let found: boolean;
    try {
      found = (await check({ domain, recordName: recordNameOf(domain), recordValue: record.verificationValue })) === true;
    } catch (error) {
      auth.onInternalError(error, "organizations.verifyDomain");
      throw new AuthError(ErrorCode.Unavailable, "The domain could not be checked; try again later");
    }
    if (!found) throw new AuthError(ErrorCode.ValidationFailed, `The TXT record ${recordNameOf(domain)} was not found`);
  }
  const now = auth.now();
  const marked = await store.markDomainVerified(organization.id, domain, now);
  if (marked === "not_found") throw noSuchDomain();
  if (marked === "taken") throw new AuthError(ErrorCode.Conflict, "Another organization has verified this domain");
  if (record.verifiedAt === null)
    auth.emit({ type: "organization.domain_verified", orgId: organization.id, domain, by: user.id, at: now });
  return toView({ ...record, verifiedAt: record.verifiedAt ?? now });
}

/** Removes a domain of an organization (`DELETE /auth/orgs/:orgId/domains/:domain`): no one joins by it any more. */
export async function removeDomain(auth: Auth, input: DomainInput): Promise<{ removed: true }> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  if (!(await store.removeDomain(organization.id, readDomain(input.domain)))) throw noSuchDomain();
  return { removed: true };
}

/** The organization whose verified domain is that of the user's verified address, or null (OR-11). */
async function organizationOfAddress(auth: Auth, userId: string): Promise<OrganizationRecord | null> {
  const store = organizationsOf(auth);
  const user = await signedInUser(auth, userId);
  if (!user.emailVerified || user.email === null) return null;
  const domain = emailKeyOf(user.email).split("@").at(-1) as string;
  return store.findOrganizationByDomain(domainToASCII(domain));
}

/** An organization the user may join without an invitation. */
export interface JoinableOrganization {
  id: string;
  slug: string;
  name: string;
}

/**
 * The organizations the signed-in user may join without an invitation (`GET /auth/orgs/joinable`):
 * the one that verified the domain of the user's verified address, unless already a member.
 */
export async function listJoinableOrganizations(auth: Auth, input: { userId: string }): Promise<JoinableOrganization[]> {
  const organization = await organizationOfAddress(auth, input.userId);
  if (organization === null) return [];
  if ((await organizationsOf(auth).findMembership(organization.id, input.userId)) !== null) return [];
  return [{ id: organization.id, slug: organization.slug, name: organization.name }];
}

/**
 * Joins an organization without an invitation (`POST /auth/orgs/:orgId/join`), as its lowest role,
 * when it verified the domain of the user's verified address (OR-11); otherwise it answers as an
 * unknown organization (OR-2).
 *
 * @throws {AuthError} 40400 not joinable, 40900 already a member.
 */
export async function joinOrganization(auth: Auth, input: { userId: string; orgId: string }): Promise<OrganizationView> {
  const orgId = requiredString(input.orgId, "orgId");
  const organization = await organizationOfAddress(auth, input.userId);
  if (organization === null || organization.id !== orgId) throw noSuchOrganization();
  const now = auth.now();
  const membership: MembershipRecord = {
    orgId,
    userId: input.userId,
    roles: [lowestRole(auth)],
    createdAt: now,
    lastActiveAt: null,
  };
  if (!(await organizationsOf(auth).addMember(membership))) {
    throw new AuthError(ErrorCode.Conflict, "You are a member of this organization already");
  }
  auth.emit({ type: "organization.member_added", orgId, userId: input.userId, roles: membership.roles, via: "domain", at: now });
  return organizationView(organization, membership);
}
