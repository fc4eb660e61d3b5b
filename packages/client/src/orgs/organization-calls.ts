import { type Reauthenticate, type ReauthenticatedOperation, withReauthentication } from "../reauthentication.js";
import type { Session } from "../session.js";
import type { ReauthenticationProof } from "../types.js";
import { type ActiveOrganization, activeOrganizationOf } from "./organizations.js";

/** The path of an organization's routes: `/auth/orgs/<orgId>`, the id encoded. */
export const organizationPath = (orgId: string): string => `/auth/orgs/${encodeURIComponent(orgId)}`;

/** The proofs the organization routes that want a recent sign-in take. */
export const organizationProofs = ["password", "totpCode"] as const;

/** What the organizations' sub-clients share: the session, its re-authentication, the session's active organization. */
export interface OrganizationCalls {
  session: Session;
  reauthenticate: Reauthenticate | undefined;
  /** A DELETE that may carry a proof: a body only when one is given. */
  proven(operation: ReauthenticatedOperation, proof: ReauthenticationProof, path: string): Promise<unknown>;
  /** The active organization the stored access token carries, or null. */
  active(): Promise<ActiveOrganization | null>;
  /** After a change that ends the session's activation of `orgId` (leaving, deletion, new rules): a refresh brings the current state. */
  refreshIfActive(orgId: string): Promise<void>;
}

/**
 * Makes the {@link OrganizationCalls} of a session.
 *
 * @example
 * ```ts
 * const calls = organizationCalls(session, reauthenticate);
 * ```
 */
export function organizationCalls(session: Session, reauthenticate: Reauthenticate | undefined): OrganizationCalls {
  const active = async () => {
    const tokens = await session.tokens();
    return tokens ? activeOrganizationOf(tokens.accessToken) : null;
  };
  return {
    session,
    reauthenticate,
    proven: (operation, proof, path) =>
      withReauthentication(reauthenticate, { operation, accepts: organizationProofs }, proof, (given) =>
        session.call({ method: "DELETE", path, body: given.password || given.totpCode ? given : undefined }),
      ),
    active,
    async refreshIfActive(orgId) {
      if ((await active())?.id === orgId) await session.refresh();
    },
  };
}
