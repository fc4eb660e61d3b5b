// The client cannot import @portcullis/core (a browser has no use for argon2 and the rest), so it
// declares the shapes of the contract's data again. These checks fail the type check when the two drift.
import type {
  ActiveOrganization,
  AddedServiceAccountSecret,
  AuthUser,
  ImpersonationTokens,
  JoinableOrganization,
  MyOrganization,
  Organization,
  OrganizationDomain,
  OrganizationInvitation,
  OrganizationMember,
  PasskeyInfo,
  ServiceAccount,
  ServiceAccountCredential,
  ServiceAccountWithCredentials,
  SessionInfo,
  TokenSet,
} from "@portcullis/client";
import type {
  AddedClientSecret,
  ActiveOrganization as CoreActiveOrganization,
  ImpersonationTokens as CoreImpersonationTokens,
  JoinableOrganization as CoreJoinableOrganization,
  MyOrganization as CoreMyOrganization,
  PasskeyInfo as CorePasskeyInfo,
  SessionInfo as CoreSessionInfo,
  TokenSet as CoreTokenSet,
  DomainView,
  InvitationView,
  MemberView,
  OrganizationView,
  PublicUser,
  ServiceAccountCredentialInfo,
  ServiceAccountDetails,
  ServiceAccountInfo,
} from "@portcullis/core";
import { describe, expectTypeOf, it } from "vitest";

describe("the client's types of the contract's data", () => {
  it("are core's: the user, the token set, a passkey and a session", () => {
    expectTypeOf<AuthUser>().toEqualTypeOf<PublicUser>();
    expectTypeOf<TokenSet>().toEqualTypeOf<CoreTokenSet>();
    expectTypeOf<PasskeyInfo>().toEqualTypeOf<CorePasskeyInfo>();
    expectTypeOf<SessionInfo>().toEqualTypeOf<CoreSessionInfo>();
  });

  it("are core's: an organization, one of the user's, a joinable one, the active one, a member, an invitation, a domain", () => {
    expectTypeOf<Organization>().toEqualTypeOf<OrganizationView>();
    expectTypeOf<MyOrganization>().toEqualTypeOf<CoreMyOrganization>();
    expectTypeOf<JoinableOrganization>().toEqualTypeOf<CoreJoinableOrganization>();
    expectTypeOf<ActiveOrganization>().toEqualTypeOf<CoreActiveOrganization>();
    expectTypeOf<OrganizationMember>().toEqualTypeOf<MemberView>();
    expectTypeOf<OrganizationInvitation>().toEqualTypeOf<InvitationView>();
    expectTypeOf<OrganizationDomain>().toEqualTypeOf<DomainView>();
  });

  it("are core's: a service account, its credentials, a secret just added, an impersonation's tokens", () => {
    expectTypeOf<ServiceAccount>().toEqualTypeOf<ServiceAccountInfo>();
    expectTypeOf<ServiceAccountCredential>().toEqualTypeOf<ServiceAccountCredentialInfo>();
    expectTypeOf<ServiceAccountWithCredentials>().toEqualTypeOf<ServiceAccountDetails>();
    expectTypeOf<AddedServiceAccountSecret>().toEqualTypeOf<AddedClientSecret>();
    expectTypeOf<ImpersonationTokens>().toEqualTypeOf<CoreImpersonationTokens>();
  });
});
