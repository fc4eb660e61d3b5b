import type { Auth } from "../auth.js";
import { AuthError } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { optionalString, requiredString } from "../flows/input.js";
import { hasSecondFactor } from "../required-factor/requirement.js";
import type { ActiveOrganization } from "../tokens/access-token.js";
import { accessTokenOf } from "../tokens/issue-tokens.js";
import { signedInUser } from "../users/signed-in-user.js";
import { membershipOf, organizationsOf } from "./organization-access.js";
import { forgetOrganizationState, rulesShortfall } from "./session-organization.js";

/** The input of {@link switchOrganization}. */
export interface SwitchOrganizationInput {
  userId: string;
  /** The session of the request's access token: the one whose active organization changes. */
  sessionId: string;
  /** The organization to make active, or null for none. */
  orgId: string | null;
}

/** What {@link switchOrganization} answers: a new access token of the session, carrying the organization. */
export interface SwitchedOrganization {
  accessToken: string;
  tokenType: "Bearer";
  /** Seconds until the access token expires. */
  expiresIn: number;
  /** The active organization and the member's roles there, or null. */
  org: ActiveOrganization | null;
}

/**
 * Makes an organization the active one of the request's session, or none (`POST /auth/orgs/active`;
 * OR-7), and answers a new access token carrying it (`org`, `org_roles`); the refresh token is
 * unchanged and its refreshes carry it too. Tokens of the session that carry another organization
 * are refused from then on. The session must meet the organization's rules: a sign-in of an allowed
 * way (40300 naming them: sign in again that way) and a second factor when required (40104 with
 * `required.amr: ["mfa"]`, and `enrolmentRequired` for a user who has none yet) (OR-9, OR-10).
 *
 * @throws {AuthError} 40400 not a member (OR-2), 40300 a way of signing in the organization does not allow, 40104 a second factor required, 40101 the session ended.
 */
export async function switchOrganization(auth: Auth, input: SwitchOrganizationInput): Promise<SwitchedOrganization> {
  const store = organizationsOf(auth);
  const user = await signedInUser(auth, input.userId);
  const sessionId = requiredString(input.sessionId, "sessionId");
  const orgId = input.orgId === null ? null : (optionalString(input.orgId, "orgId") ?? null);
  const session = await auth.storage.sessions.findSession(sessionId);
  if (session === null || session.userId !== user.id || session.revokedAt !== null || session.expiresAt <= auth.now()) {
    throw new AuthError(ErrorCode.InvalidToken);
  }
  let org: ActiveOrganization | null = null;
  if (orgId !== null) {
    const { organization, membership } = await membershipOf(auth, orgId, user.id);
    const shortfall = rulesShortfall(organization, session.amr);
    if (shortfall === "sign_in_method") {
      throw new AuthError(
        ErrorCode.Forbidden,
        "This organization allows other ways of signing in: sign in again with one of them",
        {
          data: { signInMethods: organization.rules.signInMethods },
        },
      );
    }
    if (shortfall === "second_factor") {
      // A user without one cannot step up: `enrolmentRequired` tells the client to offer enrolment first.
      const enrolmentRequired = !(await hasSecondFactor(auth, user));
      throw new AuthError(ErrorCode.StepUpRequired, "This organization requires a second factor", {
        data: { required: { amr: ["mfa"] }, enrolmentRequired },
      });
    }
    org = { id: organization.id, roles: [...membership.roles] };
  }
  const now = auth.now();
  if (!(await store.setActiveOrganization(session.id, user.id, orgId, now))) {
    throw orgId === null ? new AuthError(ErrorCode.InvalidToken) : new AuthError(ErrorCode.NotFound, "No such organization");
  }
  forgetOrganizationState(auth, user.id);
  auth.emit({ type: "organization.switched", userId: user.id, sessionId: session.id, orgId, at: now });
  const accessToken = await accessTokenOf(auth, user, { ...session, activeOrgId: orgId }, org);
  return { accessToken, tokenType: "Bearer", expiresIn: auth.config.ttl.access, org };
}
