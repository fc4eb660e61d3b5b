/**
 * The typed client of the auth routes, for browsers and Node: {@link createAuthClient} signs in
 * step by step, keeps the tokens in a {@link TokenStore}, refreshes them once however many
 * requests meet an expired one, and drives passkeys and the OAuth relay.
 *
 * @packageDocumentation
 * @module @portcullis/client
 */
export type { AccountClient, ChangePasswordInput } from "./account.js";
export type { ApiKey, ApiKeysClient, CreateApiKeyInput, CreatedApiKey } from "./api-keys.js";
export type { StatusMode } from "./app-fetch.js";
export {
  type AuthClient,
  type AuthClientOptions,
  type LoginInput,
  type PasskeySignUpInput,
  type RegisterInput,
  createAuthClient,
} from "./client.js";
export {
  type ChangeEmailInput,
  type EmailClient,
  type ForgotPasswordInput,
  type ResetPasswordInput,
  tokenFromLink,
} from "./email.js";
export type { EmailSignInClient, EmailSignInProof } from "./email-sign-in.js";
export { AuthClientError, type AuthClientErrorDetails, type AuthClientErrorKind } from "./errors.js";
export type { AuthClientEventMap, AuthClientEventName, SignOutReason } from "./events.js";
export type { ImpersonationClient, ImpersonationTokens } from "./impersonation.js";
export type {
  OAuthClient,
  OAuthFinishOptions,
  OAuthReauthenticateOptions,
  OAuthSignInStep,
  OAuthStartOptions,
} from "./oauth.js";
export type {
  ActiveOrganization,
  CreateOrganizationInput,
  InviteMemberInput,
  JoinableOrganization,
  MyOrganization,
  Organization,
  OrganizationDomain,
  OrganizationDomainsClient,
  OrganizationInvitation,
  OrganizationInvitationsClient,
  OrganizationMember,
  OrganizationMemberPage,
  OrganizationMembersClient,
  OrganizationRules,
  OrganizationSignInMethod,
  OrganizationsClient,
  UpdateOrganizationInput,
} from "./orgs.js";
export { type PasskeyCeremonies, type PasskeyClient, browserPasskeyCeremonies, registrationRunner } from "./passkeys.js";
export type {
  Reauthenticate,
  ReauthenticatedOperation,
  ReauthenticationAnswer,
  ReauthenticationRequest,
  ReauthenticationWay,
} from "./reauthentication.js";
export type {
  AddedServiceAccountSecret,
  CreateServiceAccountInput,
  ServiceAccount,
  ServiceAccountCredential,
  ServiceAccountWithCredentials,
  ServiceAccountsClient,
  UpdateServiceAccountInput,
} from "./service-accounts.js";
export type { SessionsClient } from "./sessions.js";
export type { EnrolmentStep, RunRegistration, SecondFactorStep, SignInStep, SignedIn } from "./sign-in.js";
export type { ReauthenticationInput, StepUpClient, StepUpRequest, StepUpRequirement } from "./step-up.js";
export {
  type KeyValueStorage,
  type LockManagerLike,
  type StoredTokens,
  type TokenStore,
  type WebStorageTokenStoreOptions,
  localStorageTokenStore,
  memoryTokenStore,
  sessionStorageTokenStore,
  webStorageTokenStore,
} from "./token-store.js";
export type { TotpClient } from "./totp.js";
export type { FetchFunction } from "./transport.js";
export type {
  AuthMethod,
  AuthUser,
  OAuthProviderInfo,
  PasskeyInfo,
  ReauthenticationProof,
  ServerProfileFields,
  ServerSignUpFields,
  ServerUser,
  SessionInfo,
  TokenSet,
  TotpSetup,
} from "./types.js";
