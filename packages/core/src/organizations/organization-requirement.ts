import { fail } from "../config-values.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import type { AccessContext } from "../tokens/access-token.js";

/**
 * What a route of yours may ask of the request's active organization (OR-7): the `org` option
 * `requireAuth` takes in every adapter. A token that falls short is answered 40300.
 */
export interface OrganizationOptions {
  /**
   * `true`: the token must carry an active organization (`access.org` not null). `{ roles }`: the
   * member must also hold one of these roles there (`access.org.roles`), or a role ranked above it
   * in `organizations.roles` (an owner passes `{ roles: ["admin"] }`); an empty list lets no one
   * through.
   */
  org?: true | { roles: readonly string[] };
}

/** {@link OrganizationOptions} checked: the organization roles asked, or null for any active organization. */
export interface OrganizationRequirement {
  roles: readonly string[] | null;
}

const resolved = new WeakMap<object, OrganizationRequirement | null>();

/**
 * The organization requirement of `requireAuth` options, or null when they ask none. Checked once
 * per options object (the adapters call it when `requireAuth` is called, so a mistake fails at
 * startup); other keys are not its business.
 *
 * @throws {TypeError} an `org` that is neither `true` nor `{ roles: [...] }` of role names.
 * @example
 * ```ts
 * organizationRequirementOf({ org: { roles: ["admin"] } }); // { roles: ["admin"] }
 * ```
 */
export function organizationRequirementOf(options: OrganizationOptions): OrganizationRequirement | null {
  const known = resolved.get(options);
  if (known !== undefined) return known;
  const requirement = resolveRequirement(options.org);
  resolved.set(options, requirement);
  return requirement;
}

function resolveRequirement(org: unknown): OrganizationRequirement | null {
  if (org === undefined) return null;
  if (org === true) return { roles: null };
  const shape = 'requireAuth\'s org must be true or { roles: ["…"] }, a list of organization role names';
  if (typeof org !== "object" || org === null || Array.isArray(org)) return fail(`${shape}; got ${JSON.stringify(org)}`);
  const { roles, ...rest } = org as { roles?: unknown };
  const unknown = Object.keys(rest);
  if (unknown.length > 0) fail(`${shape}; got the unknown key ${JSON.stringify(unknown[0])}`);
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === "string" && role !== "")) {
    fail(`${shape}; got roles ${JSON.stringify(roles)}`);
  }
  return { roles: [...(roles as string[])] };
}

/**
 * Whether `held` holds one of `asked`, or a role ranked above one of them in `order` (highest
 * first). A role `order` does not name is matched by name only.
 */
export function holdsRoleOrAbove(order: readonly string[], held: readonly string[], asked: readonly string[]): boolean {
  if (asked.some((role) => held.includes(role))) return true;
  const bar = Math.max(-1, ...asked.map((role) => order.indexOf(role)));
  return held.some((role) => {
    const rank = order.indexOf(role);
    return rank !== -1 && rank <= bar;
  });
}

/**
 * Lets a token through when it carries an active organization and, when the requirement names
 * roles, one of them there or a role above it (`order`: `organizations.roles`, highest first);
 * otherwise throws 40300.
 *
 * @throws {AuthError} 40300 no active organization, or none of the roles (nor one above) in it.
 */
export function requireOrganization(
  access: Pick<AccessContext, "org">,
  requirement: OrganizationRequirement,
  order: readonly string[],
): void {
  const { org } = access;
  if (org === null) throw new AuthError(ErrorCode.Forbidden, "An active organization is required: switch to one first");
  const { roles } = requirement;
  if (roles !== null && !holdsRoleOrAbove(order, org.roles, roles)) {
    throw new AuthError(ErrorCode.Forbidden, "A role in the active organization this route requires is missing");
  }
}
