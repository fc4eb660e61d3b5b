import type { MembershipRecord, OrganizationRecord, OrganizationRules } from "../storage/types.js";

/** An organization as its members see it. Times are epoch milliseconds. */
export interface OrganizationView {
  id: string;
  slug: string;
  name: string;
  rules: OrganizationRules;
  createdAt: number;
  /** The caller's roles in it. */
  roles: string[];
}

/** The view of `organization` for a member holding `membership`. */
export function organizationView(organization: OrganizationRecord, membership: MembershipRecord): OrganizationView {
  const { id, slug, name, rules, createdAt } = organization;
  const signInMethods = rules.signInMethods === null ? null : [...rules.signInMethods];
  return { id, slug, name, rules: { ...rules, signInMethods }, createdAt, roles: [...membership.roles] };
}
