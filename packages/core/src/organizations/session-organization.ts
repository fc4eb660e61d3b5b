import type { Auth } from "../auth.js";
import { factorsProven } from "../step-up/amr.js";
import type {
  AuthMethod,
  MembershipRecord,
  OrganizationRecord,
  OrganizationSignInMethod,
  OrganizationStore,
  UserRecord,
} from "../storage/types.js";
import type { ActiveOrganization } from "../tokens/access-token.js";
import { revoked } from "../users/token-state.js";

/** The way of signing in a session's methods tell, as an organization's `signInMethods` names it. */
export function signInMethodOf(amr: readonly AuthMethod[]): OrganizationSignInMethod {
  if (amr.includes("fed")) return "provider";
  if (amr.includes("hwk") || amr.includes("swk")) return "passkey";
  if (amr.includes("ldap")) return "directory";
  if (amr.includes("email")) return "email";
  return "password";
}

/** What a session proven by `amr` lacks for `organization`'s rules (OR-9, OR-10): nothing, a second factor, or a way of signing in. */
export function rulesShortfall(
  organization: Pick<OrganizationRecord, "rules">,
  amr: readonly AuthMethod[],
): null | "second_factor" | "sign_in_method" {
  const { requireSecondFactor, signInMethods } = organization.rules;
  if (signInMethods !== null && !signInMethods.includes(signInMethodOf(amr))) return "sign_in_method";
  if (requireSecondFactor && !factorsProven(amr).second) return "second_factor";
  return null;
}

/** The organization store of an instance with organizations enabled, or null. */
export function organizationStoreOf(auth: Auth): OrganizationStore | null {
  return auth.config.organizations.enabled ? (auth.storage.organizations ?? null) : null;
}

const activeOf = (organization: OrganizationRecord, membership: MembershipRecord): ActiveOrganization => ({
  id: organization.id,
  roles: [...membership.roles],
});

/**
 * The organization a new session of `user` starts in (OR-7): the one the user made active last,
 * when the sign-in meets its rules; else none. A user who never chose one starts in none.
 */
export async function organizationAtSignIn(
  auth: Auth,
  user: UserRecord,
  amr: readonly AuthMethod[],
): Promise<ActiveOrganization | null> {
  const store = organizationStoreOf(auth);
  if (store === null) return null;
  const chosen = (await store.listUserOrganizations(user.id))
    .filter(({ membership }) => membership.lastActiveAt !== null)
    .sort((a, b) => (b.membership.lastActiveAt as number) - (a.membership.lastActiveAt as number));
  const first = chosen[0];
  if (first === undefined || rulesShortfall(first.organization, amr) !== null) return null;
  return activeOf(first.organization, first.membership);
}

/**
 * The organization `orgId` as a session of `userId` proven by `amr` may carry it: with the
 * member's current roles while the user is a member and the session meets its rules, else null.
 */
export async function organizationToKeep(
  auth: Auth,
  userId: string,
  orgId: string | null | undefined,
  amr: readonly AuthMethod[],
): Promise<ActiveOrganization | null> {
  const store = organizationStoreOf(auth);
  if (store === null || orgId === null || orgId === undefined) return null;
  const [organization, membership] = await Promise.all([store.findOrganization(orgId), store.findMembership(orgId, userId)]);
  if (organization === null || membership === null || rulesShortfall(organization, amr) !== null) return null;
  return activeOf(organization, membership);
}

/**
 * The organization a refreshed token carries (OR-7): the session's active one with the member's
 * roles now, or null once the membership ended. Its rules were met when it became active; a change
 * of rules clears it from every session.
 */
export async function organizationOfSession(
  auth: Auth,
  userId: string,
  orgId: string | null | undefined,
): Promise<ActiveOrganization | null> {
  const store = organizationStoreOf(auth);
  if (store === null || orgId === null || orgId === undefined) return null;
  const membership = await store.findMembership(orgId, userId);
  return membership === null ? null : { id: orgId, roles: [...membership.roles] };
}

/**
 * Drops what this instance (and, through the revocation channel, every other) has cached of the
 * token state of `userId`'s sessions, after a change of their membership (OR-8): a token carrying
 * the old roles or organization is then refused at its next request even with
 * `tokenStateCacheSeconds`. With `userId` null (an organization deleted or its rules changed),
 * every cached state is dropped.
 */
export function forgetOrganizationState(auth: Auth, userId: string | null): void {
  revoked(auth, userId === null ? { kind: "all" } : { kind: "user_sessions", userId, keptSessionId: null });
}
