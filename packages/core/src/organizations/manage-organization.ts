import type { Auth } from "../auth.js";
import { randomId } from "../crypto/ids.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { OrganizationChange } from "../events/types.js";
import { optionalString, readVisibleText } from "../flows/input.js";
import { type ReauthenticationProof, requireRecentAuthentication } from "../flows/reauthenticate.js";
import type { OrganizationRecord, OrganizationRules, OrganizationSignInMethod, SessionRecord } from "../storage/types.js";
import { signedInUser } from "../users/signed-in-user.js";
import { membershipOf, organizationsOf, requireAdministrator, requireOwner } from "./organization-access.js";
import { type OrganizationView, organizationView } from "./organization-view.js";
import { forgetOrganizationState } from "./session-organization.js";

/** The longest organization name, in characters. */
export const maxOrganizationNameLength = 100;

const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Reads an organization's slug: 2 to 48 lower-case letters, digits and single hyphens, neither
 * first nor last. Absent, it is made from `name` when that gives one.
 *
 * @throws {AuthError} 40001 absent and not made from the name, 40002 not a string, 42200 not a slug.
 */
export function readSlug(value: unknown, name?: string): string {
  const given = optionalString(value, "slug");
  const slug =
    given ??
    name
      ?.normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 48)
      .replace(/-+$/, "");
  if (slug === undefined || (given === undefined && slug.length < 2)) {
    throw new AuthError(ErrorCode.MissingParameter, "slug is required");
  }
  if (slug.length < 2 || slug.length > 48 || !slugPattern.test(slug)) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      "slug must be 2 to 48 lower-case letters, digits and single hyphens, neither first nor last",
    );
  }
  return slug;
}

const signInMethods: readonly OrganizationSignInMethod[] = ["password", "directory", "passkey", "provider", "email"];

/**
 * Reads an organization's rules, those left out kept from `current` (OR-9, OR-10).
 *
 * @throws {AuthError} 40002 not an object, 42200 a rule of the wrong shape.
 */
export function readRules(value: unknown, current: OrganizationRules): OrganizationRules {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AuthError(ErrorCode.MalformedParameter, "rules must be an object");
  }
  const {
    requireSecondFactor = current.requireSecondFactor,
    signInMethods: methods = current.signInMethods,
    ...rest
  } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new AuthError(ErrorCode.ValidationFailed, `rules has no ${unknown[0]}`);
  if (typeof requireSecondFactor !== "boolean") {
    throw new AuthError(ErrorCode.ValidationFailed, "rules.requireSecondFactor must be true or false");
  }
  if (methods !== null && (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => signInMethods.includes(m)))) {
    throw new AuthError(
      ErrorCode.ValidationFailed,
      `rules.signInMethods must be null (every way) or a non-empty list of ${signInMethods.join(", ")}`,
    );
  }
  return { requireSecondFactor, signInMethods: methods === null ? null : [...new Set(methods as OrganizationSignInMethod[])] };
}

const slugTaken = () => new AuthError(ErrorCode.Conflict, "An organization with this slug exists");

/** The input of {@link createOrganization}. */
export interface CreateOrganizationInput {
  /** The signed-in user, who becomes its owner. */
  userId: string;
  name: string;
  /** Made from `name` when absent. */
  slug?: string;
}

/**
 * Creates an organization whose owner is the signed-in user (`POST /auth/orgs`; OR-1). With
 * `organizations.creation: "administrators"` only holders of `adminRole` may.
 *
 * @throws {AuthError} 40400 organizations off, 40300 creation by administrators only, 40001/40002/42200 a bad name or slug, 40900 the slug is taken.
 * @example
 * ```ts
 * const org = await createOrganization(auth, { userId, name: "Acme" }); // org.slug === "acme"
 * ```
 */
export async function createOrganization(auth: Auth, input: CreateOrganizationInput): Promise<OrganizationView> {
  const store = organizationsOf(auth);
  const user = await signedInUser(auth, input.userId);
  if (auth.config.organizations.creation === "administrators" && !user.roles.includes(auth.config.adminRole)) {
    throw new AuthError(ErrorCode.Forbidden, "Only administrators may create organizations");
  }
  const name = readVisibleText(input.name, "name", maxOrganizationNameLength);
  const slug = readSlug(input.slug, name);
  const now = auth.now();
  const organization: OrganizationRecord = {
    id: randomId(auth),
    slug,
    name,
    rules: { requireSecondFactor: false, signInMethods: null },
    createdAt: now,
    updatedAt: now,
  };
  const owner = {
    orgId: organization.id,
    userId: user.id,
    roles: [auth.config.organizations.ownerRole],
    createdAt: now,
    lastActiveAt: null,
  };
  if (!(await store.createOrganization(organization, owner))) throw slugTaken();
  auth.emit({ type: "organization.created", orgId: organization.id, by: user.id, at: now });
  auth.emit({
    type: "organization.member_added",
    orgId: organization.id,
    userId: user.id,
    roles: owner.roles,
    via: "creation",
    at: now,
  });
  return organizationView(organization, owner);
}

/** An organization in the signed-in user's list: whether it is the active one of the request's session. */
export interface MyOrganization extends OrganizationView {
  active: boolean;
}

/**
 * The organizations the signed-in user belongs to (`GET /auth/orgs`), each with the user's roles,
 * the one active in `sessionId` marked.
 */
export async function listMyOrganizations(auth: Auth, input: { userId: string; sessionId?: string }): Promise<MyOrganization[]> {
  const store = organizationsOf(auth);
  const user = await signedInUser(auth, input.userId);
  const [memberships, session] = await Promise.all([
    store.listUserOrganizations(user.id),
    input.sessionId === undefined ? null : auth.storage.sessions.findSession(input.sessionId),
  ]);
  const activeId = activeOrgIdOf(session, user.id);
  return memberships.map(({ organization, membership }) => ({
    ...organizationView(organization, membership),
    active: organization.id === activeId,
  }));
}

const activeOrgIdOf = (session: SessionRecord | null, userId: string) =>
  session?.userId === userId ? (session.activeOrgId ?? null) : null;

/** One organization of the signed-in user's (`GET /auth/orgs/:orgId`); 40400 for another's (OR-2). */
export async function getOrganization(auth: Auth, input: { userId: string; orgId: string }): Promise<OrganizationView> {
  const user = await signedInUser(auth, input.userId);
  const { organization, membership } = await membershipOf(auth, input.orgId, user.id);
  return organizationView(organization, membership);
}

/** The input of {@link updateOrganization}: what to change, the rest kept. */
export interface UpdateOrganizationInput {
  userId: string;
  orgId: string;
  name?: string;
  slug?: string;
  /** `requireSecondFactor`, `signInMethods`: those left out kept. */
  rules?: Partial<OrganizationRules>;
}

/**
 * Renames an organization, changes its slug or its rules (`PATCH /auth/orgs/:orgId`), by one of its
 * administrators (OR-4). A change of rules ends the organization's activation in every session, so
 * each must meet the new rules to make it active again (OR-9, OR-10).
 *
 * @throws {AuthError} 40400 not a member, 40300 not an administrator, 42200 a bad value, 40900 the slug is taken.
 */
export async function updateOrganization(auth: Auth, input: UpdateOrganizationInput): Promise<OrganizationView> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireAdministrator(auth, membership);
  const changes: Partial<Pick<OrganizationRecord, "name" | "slug" | "rules">> = {};
  const changed: OrganizationChange[] = [];
  if (input.name !== undefined) {
    changes.name = readVisibleText(input.name, "name", maxOrganizationNameLength);
    changed.push("name");
  }
  if (input.slug !== undefined) {
    changes.slug = readSlug(input.slug);
    changed.push("slug");
  }
  if (input.rules !== undefined) {
    changes.rules = readRules(input.rules, organization.rules);
    changed.push("rules");
  }
  const now = auth.now();
  const updated = await store.updateOrganization(organization.id, { ...changes, updatedAt: now });
  if (updated === "slug_taken") throw slugTaken();
  if (updated === null) throw new AuthError(ErrorCode.NotFound, "No such organization");
  if (changes.rules !== undefined) {
    await store.clearActiveOrganization(organization.id);
    forgetOrganizationState(auth, null);
  }
  if (changed.length > 0)
    auth.emit({ type: "organization.updated", orgId: organization.id, by: user.id, changes: changed, at: now });
  return organizationView(updated, membership);
}

/** The input of {@link deleteOrganization}. */
export interface DeleteOrganizationInput extends ReauthenticationProof {
  userId: string;
  orgId: string;
}

/**
 * Deletes an organization with its memberships, invitations and domains (`DELETE
 * /auth/orgs/:orgId`), by an owner who re-authenticates (OR-4, STUP-3). Every session loses it as
 * its active organization at once: their tokens carrying it are refused at the next request.
 *
 * @throws {AuthError} 40400 not a member, 40300 not an owner, 40001/40100/40103 re-authentication.
 */
export async function deleteOrganization(auth: Auth, input: DeleteOrganizationInput): Promise<{ deleted: true }> {
  const user = await signedInUser(auth, input.userId);
  const { store, organization, membership } = await membershipOf(auth, input.orgId, user.id);
  requireOwner(auth, membership);
  await requireRecentAuthentication(auth, user, input);
  if (!(await store.deleteOrganization(organization.id))) throw new AuthError(ErrorCode.NotFound, "No such organization");
  forgetOrganizationState(auth, null);
  auth.emit({ type: "organization.deleted", orgId: organization.id, by: user.id, at: auth.now() });
  return { deleted: true };
}
