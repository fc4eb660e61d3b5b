import type { Route } from "../route-types.js";
import { accountRoutes } from "./account.js";
import { adminRoutes } from "./admin.js";
import { adminOrganizationRoutes } from "./admin-organizations.js";
import { apiKeyRoutes } from "./api-keys.js";
import { directoryRoutes } from "./directory.js";
import { emailRoutes } from "./email.js";
import { emailSignInRoutes } from "./email-sign-in.js";
import { impersonationRoutes } from "./impersonation.js";
import { metadataRoutes } from "./metadata.js";
import { oauthRoutes } from "./oauth.js";
import { organizationDomainRoutes } from "./organization-domains.js";
import { organizationInvitationRoutes } from "./organization-invitations.js";
import { organizationMemberRoutes } from "./organization-members.js";
import { organizationRoutes } from "./organizations.js";
import { passkeyRoutes } from "./passkeys.js";
import { requiredFactorRoutes } from "./required-factor.js";
import { secondFactorRoutes } from "./second-factor.js";
import { serviceAccountRoutes } from "./service-accounts.js";
import { signInRoutes } from "./sign-in.js";
import { stepUpRoutes } from "./step-up.js";
import { tokenEndpointRoutes } from "./token-endpoint.js";
import { tokenRoutes } from "./tokens.js";

/**
 * The HTTP surface of Portcullis (`contract.md`): every route, once, for every adapter. The
 * adapters only translate requests and responses; no auth rule lives in them. One file per area
 * (the `tag` its routes are listed under in the OpenAPI document); the order is the order routes
 * are matched in, first match wins.
 */
export const routes: readonly Route[] = [
  ...signInRoutes,
  ...requiredFactorRoutes,
  ...tokenRoutes,
  ...secondFactorRoutes,
  ...passkeyRoutes,
  ...oauthRoutes,
  ...directoryRoutes,
  ...accountRoutes,
  ...stepUpRoutes,
  ...emailRoutes,
  ...emailSignInRoutes,
  ...adminRoutes,
  ...organizationRoutes,
  ...organizationMemberRoutes,
  ...organizationInvitationRoutes,
  ...organizationDomainRoutes,
  ...adminOrganizationRoutes,
  ...apiKeyRoutes,
  ...serviceAccountRoutes,
  ...tokenEndpointRoutes,
  ...impersonationRoutes,
  ...metadataRoutes(() => routes),
];
