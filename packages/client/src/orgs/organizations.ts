import { accessTokenClaims } from "../claims.js";

/** A way of signing in an organization's rules may allow. */
export type OrganizationSignInMethod = "password" | "directory" | "passkey" | "provider" | "email";

/** An organization's rules for the sessions in which it is active. */
export interface OrganizationRules {
  /** Only a session that proved a second factor may make the organization active. */
  requireSecondFactor: boolean;
  /** The ways of signing in a session may have used to make it active; null allows every way. */
  signInMethods: OrganizationSignInMethod[] | null;
}

/** An organization as its members see it (`GET /auth/orgs/:orgId`). Times are epoch milliseconds. */
export interface Organization {
  id: string;
  slug: string;
  name: string;
  rules: OrganizationRules;
  createdAt: number;
  /** The signed-in user's roles in it. */
  roles: string[];
}

/** One of the signed-in user's organizations (`GET /auth/orgs`): whether it is this session's active one. */
export interface MyOrganization extends Organization {
  active: boolean;
}

/** An organization the user may join without an invitation: their verified address is at one of its verified domains. */
export interface JoinableOrganization {
  id: string;
  slug: string;
  name: string;
}

/** The active organization of an access token (`org`, `org_roles`): its id and the user's roles there. */
export interface ActiveOrganization {
  readonly id: string;
  readonly roles: readonly string[];
}

/** What {@link OrganizationsClient.create} sends. */
export interface CreateOrganizationInput {
  name: string;
  /** Lower-case letters, digits and hyphens; made from the name when left out. */
  slug?: string;
}

/** What {@link OrganizationsClient.update} sends: what is left out stays. */
export interface UpdateOrganizationInput {
  name?: string;
  slug?: string;
  /** The rules to change; those left out stay. */
  rules?: Partial<OrganizationRules>;
}

/** The active organization that `accessToken`'s claims carry, or null (no `org`, or claims of the wrong shape). */
export function activeOrganizationOf(accessToken: string): ActiveOrganization | null {
  const claims = accessTokenClaims(accessToken);
  const id = claims?.org;
  const roles = claims?.org_roles;
  if (typeof id !== "string" || !Array.isArray(roles) || !roles.every((role) => typeof role === "string")) return null;
  return { id, roles: [...roles] };
}
