/**
 * Embeddable authentication for Node.js services. {@link createAuth} makes the one auth instance
 * of a service from its storage and secrets; each flow (password login, TOTP, passkeys, OAuth and
 * OpenID Connect, directory sign-in, refresh, the account and its administration) is a function
 * that takes it. The route table and {@link handleRequest} are what the Express and Hono adapters
 * mount; {@link Storage} is the contract a storage adapter implements.
 *
 * @packageDocumentation
 * @module @portcullis/core
 */
export type { ApiKeysConfig } from "./api-keys/api-key-config.js";
export { isWellFormedApiKey } from "./api-keys/api-key-format.js";
export {
  type CredentialKind,
  type CredentialOptions,
  type CredentialRequirement,
  credentialRequirementOf,
} from "./api-keys/credential-requirement.js";
export {
  type ApiKeyInfo,
  type CreateApiKeyInput,
  type CreatedApiKey,
  createApiKey,
  listApiKeys,
  listUserApiKeys,
  renameApiKey,
  revokeApiKey,
  revokeUserApiKey,
} from "./api-keys/manage-api-keys.js";
export { type ApiKeyContext, verifyApiKey } from "./api-keys/verify-api-key.js";
export { type Auth, type CreateAuthOptions, createAuth } from "./auth.js";
export type { AuthConfig, ResolvedConfig } from "./config.js";
export type { Duration } from "./config-values.js";
export {
  IMPORTED_HASH_LIMITS,
  type ImportedPasswordHash,
  type ImportedPasswordHashParse,
  parseImportedPasswordHash,
} from "./crypto/imported-password-hash.js";
export type { EncryptionKeyring } from "./crypto/secret-box.js";
export type {
  Directory,
  DirectoryAuthenticateOptions,
  DirectoryAuthentication,
  DirectoryCallOptions,
  DirectoryCandidate,
  DirectoryCheck,
  DirectoryEntry,
  DirectoryFailureCategory,
} from "./directory/directory.js";
export type { DirectoryLimitsConfig } from "./directory/directory-limits.js";
export type {
  DirectoryPolicy,
  DirectoryPolicyInput,
  DirectorySettings,
  GroupSearch,
  LoginOrder,
  PublicDirectoryPolicy,
  RoleMapping,
} from "./directory/policy.js";
export type { DirectoryRoles } from "./directory/roles.js";
export { emailDeliveriesSettled } from "./email/deliver.js";
export type {
  EmailConfig,
  EmailContent,
  EmailKind,
  EmailMessage,
  EmailTemplate,
  EmailTemplateValues,
  EmailTemplates,
  NoticeReason,
} from "./email/email-config.js";
export { defaultTemplates, escapeHtml } from "./email/templates.js";
export { AuthError, type AuthErrorOptions, ErrorCode, httpStatusFor, isAuthError, storageUnavailable } from "./errors/index.js";
export type {
  AuthEvent,
  AuthEventOf,
  AuthEventType,
  CheckName,
  LoginFailureReason,
  MemberSource,
  OrganizationChange,
  RevocationReason,
  SecondFactorKind,
  UserChange,
  UserCreator,
} from "./events/types.js";
export {
  type AdminProof,
  type UpdateUserInput,
  endUserSessions,
  removeTotp,
  updateUser,
} from "./flows/admin-user-changes.js";
export { type ListUsersInput, type UserPage, defaultPageSize, listUsers, maxPageSize } from "./flows/admin-user-list.js";
export {
  type AdminCreateUserInput,
  type AdminUser,
  type AdminUserDetails,
  adminCreateUser,
  getUserDetails,
  sessionCountCap,
} from "./flows/admin-users.js";
export {
  type ChangeEmailInput,
  type EmailChangePending,
  type EmailVerified,
  type VerifyEmailInput,
  changeEmail,
  verifyEmail,
} from "./flows/change-email.js";
export {
  type ChangePasswordInput,
  type PasswordChanged,
  type SetPasswordInput,
  changePassword,
  setPassword,
} from "./flows/change-password.js";
export { type CreateUserInput, type User, createUser } from "./flows/create-user.js";
export {
  type DirectoryUserPreview,
  getDirectoryPolicy,
  previewDirectoryUser,
  saveDirectoryPolicy,
  testDirectoryPolicy,
} from "./flows/directory-policy.js";
export { type EnsureUserDifference, type EnsureUserResult, ensureUser } from "./flows/ensure-user.js";
export { type ForgotPasswordInput, forgotPassword } from "./flows/forgot-password.js";
export {
  type LinkIdentityInput,
  type LinkedIdentity,
  type UnlinkIdentityInput,
  linkIdentity,
  listIdentities,
  unlinkIdentity,
} from "./flows/identities.js";
export { type LoginInput, login } from "./flows/login.js";
export type { LoginResult } from "./flows/login-result.js";
export { type LogoutInput, logout } from "./flows/logout.js";
export { getPublicUser, setUserDisabled, setUserRoles, signOutEverywhere } from "./flows/manage-users.js";
export {
  type OAuthAuthorizeInput,
  type OAuthCallbackInput,
  type OAuthCallbackResult,
  type OAuthProviderInfo,
  oauthAuthorize,
  oauthCallback,
  oauthProviders,
} from "./flows/oauth-sign-in.js";
export { type RevokePasskeyInput, listPasskeys, renamePasskey, revokePasskey } from "./flows/passkey-management.js";
export { type RefreshInput, refresh } from "./flows/refresh.js";
export { type RegisterInput, type RegisterResult, register } from "./flows/register.js";
export { type PasswordReset, type ResetPasswordInput, resetPassword } from "./flows/reset-password.js";
export {
  type EndOtherSessionsInput,
  type EndSessionInput,
  type ListSessionsInput,
  type SessionInfo,
  endOtherSessions,
  endSession,
  listSessions,
  sessionListLimit,
} from "./flows/sessions.js";
export type { SignUpConfig } from "./flows/sign-up-config.js";
export {
  type DisableTotpInput,
  type SecondFactorChangeInput,
  type TotpSetup,
  beginTotpSetup,
  disableTotp,
  enableTotp,
  regenerateRecoveryCodes,
} from "./flows/totp-enrolment.js";
export { type UseRecoveryCodeInput, useRecoveryCode } from "./flows/use-recovery-code.js";
export { type VerifyAccessTokenInput, verifyAccessToken } from "./flows/verify-access-token.js";
export { type VerifyTotpInput, verifyTotp } from "./flows/verify-totp.js";
export { type WebauthnBeginInput, type WebauthnFinishInput, webauthnBegin, webauthnFinish } from "./flows/webauthn-login.js";
export {
  type WebauthnRegisterBeginInput,
  type WebauthnRegisterFinishInput,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "./flows/webauthn-register.js";
export type { OpenApiDocument, OpenApiOptions } from "./http/describe-routes.js";
export {
  type AccessTokensOnly,
  type AuthorizeOptions,
  type CredentialContext,
  type WithoutServiceAccounts,
  authorizeRequest,
  errorResponse,
  handleRequest,
  resolvedTarget,
  servesPath,
} from "./http/handle-request.js";
export { assertAuthArgument, explainMountPath, explainWholePathMount } from "./http/mount-checks.js";
export { nodeRequestBody } from "./http/node-body.js";
export { openApiDocument } from "./http/openapi.js";
export type { JsonSchema } from "./http/openapi-schemas.js";
export type { ParameterDoc, Route, RouteContext, RouteDoc, RouteResult, RouteTag } from "./http/route-types.js";
export { routes } from "./http/routes/index.js";
export type { Envelope, HttpRequest, HttpResponse } from "./http/types.js";
export {
  type ImpersonateInput,
  type ImpersonationTokens,
  endImpersonation,
  impersonateUser,
} from "./impersonation/impersonate.js";
export type { ImpersonationConfig } from "./impersonation/impersonation-config.js";
export {
  type ImportIncomplete,
  type ImportRefusal,
  type ImportSkip,
  type ImportSummary,
  type ImportUsersOptions,
  type ImportedIdentity,
  type ImportedPasskey,
  type ImportedUser,
  UnreadableRecord,
  existsWithOtherData,
  existsWithoutItsFactors,
  importListLimits,
  importUsers,
} from "./import/import-users.js";
export {
  type RevokeAllSessionsInput,
  type RevokeAllSessionsResult,
  adminRevokeAllSessions,
  revokeAllSessions,
} from "./incident/revoke-all-sessions.js";
export {
  type CountsByKey,
  type ResealCounts,
  type ResealOptions,
  type ResealReport,
  type SealedKind,
  type UnopenableValue,
  resealSecrets,
} from "./key-rotation/reseal-secrets.js";
export type { ClaimMapping, ExternalProfile, OAuthConfig, OAuthProviderConfig } from "./oauth/provider-config.js";
export { deleteAnyOrganization, listAllOrganizations } from "./organizations/admin-organizations.js";
export {
  type DomainInput,
  type DomainView,
  type JoinableOrganization,
  addDomain,
  joinOrganization,
  listDomains,
  listJoinableOrganizations,
  removeDomain,
  verifyDomain,
} from "./organizations/domains.js";
export {
  type InvitationInput,
  type InvitationView,
  type InviteMemberInput,
  acceptInvitation,
  inviteMember,
  listInvitations,
  resendInvitation,
  revokeInvitation,
} from "./organizations/invitations.js";
export {
  type CreateOrganizationInput,
  type DeleteOrganizationInput,
  type MyOrganization,
  type UpdateOrganizationInput,
  createOrganization,
  deleteOrganization,
  getOrganization,
  listMyOrganizations,
  readSlug,
  updateOrganization,
} from "./organizations/manage-organization.js";
export {
  type ChangeMemberRolesInput,
  type MemberView,
  type RemoveMemberInput,
  changeMemberRoles,
  listMembers,
  removeMember,
} from "./organizations/members.js";
export type { DomainVerificationRecord, OrganizationsConfig } from "./organizations/organization-config.js";
export {
  type OrganizationOptions,
  type OrganizationRequirement,
  organizationRequirementOf,
} from "./organizations/organization-requirement.js";
export type { OrganizationView } from "./organizations/organization-view.js";
export {
  type SwitchOrganizationInput,
  type SwitchedOrganization,
  switchOrganization,
} from "./organizations/switch-organization.js";
export {
  type BeginEmailSignInInput,
  type BeginEmailSignInResult,
  beginEmailSignIn,
} from "./passwordless/begin-email-sign-in.js";
export type { EmailSignInConfig, EmailSignInMethod } from "./passwordless/email-sign-in-config.js";
export { type FinishEmailSignInInput, finishEmailSignIn } from "./passwordless/finish-email-sign-in.js";
export {
  type BeginPasskeySignUpInput,
  type FinishPasskeySignUpInput,
  beginPasskeySignUp,
  finishPasskeySignUp,
} from "./passwordless/passkey-sign-up.js";
export {
  type BeginPasskeyEnrolmentInput,
  type FinishPasskeyEnrolmentInput,
  type PasskeyEnrolled,
  beginPasskeyEnrolment,
  finishPasskeyEnrolment,
} from "./required-factor/enrol-passkey.js";
export {
  type BeginTotpEnrolmentInput,
  type FinishTotpEnrolmentInput,
  type TotpEnrolled,
  beginTotpEnrolment,
  finishTotpEnrolment,
} from "./required-factor/enrol-totp.js";
export type {
  SecondFactorConfig,
  SecondFactorRequirement,
  SecondFactorSubject,
} from "./required-factor/required-factor-config.js";
export { jwtBearerAssertionType } from "./service-accounts/client-assertion.js";
export {
  type ClientCredentialsInput,
  type ClientCredentialsToken,
  type TokenErrorName,
  issueClientCredentialsToken,
} from "./service-accounts/client-credentials.js";
export { isWellFormedClientSecret } from "./service-accounts/client-secret.js";
export {
  type AddedClientSecret,
  type AdministratorProof,
  type CreateServiceAccountInput,
  type ServiceAccountCredentialInfo,
  type ServiceAccountDetails,
  type ServiceAccountInfo,
  type UpdateServiceAccountInput,
  addClientSecret,
  addPublicKey,
  createServiceAccount,
  deleteServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  removeServiceAccountCredential,
  updateServiceAccount,
} from "./service-accounts/manage-service-accounts.js";
export type { ServiceAccountsConfig } from "./service-accounts/service-account-config.js";
export { type ServiceAccountContext, type ServiceTokenClaims, verifyServiceToken } from "./service-accounts/service-token.js";
export { type AmrValue, amrClaim } from "./step-up/amr.js";
export {
  type ReauthenticationDecision,
  type ReauthenticationFacts,
  decideReauthentication,
} from "./step-up/policy.js";
export {
  type PasskeyReauthenticationBeginInput,
  type PasskeyReauthenticationFinishInput,
  type ReauthenticateInput,
  reauthenticate,
  reauthenticateWithPasskeyBegin,
  reauthenticateWithPasskeyFinish,
} from "./step-up/reauthenticate-session.js";
export {
  type StepUpOptions,
  type StepUpRequirement,
  type StepUpShortfall,
  stepUpRequirementOf,
  stepUpShortfall,
} from "./step-up/requirement.js";
export { compareCodePoints, prefixUpperBound } from "./storage/code-point-order.js";
export { type MemoryStorage, type MemoryStorageSizes, memoryStorage } from "./storage/memory.js";
export { mayRefresh, mayRotate, rotatedSession } from "./storage/refresh-rotation.js";
export { type SweepOptions, type SweepResult, sweepExpired } from "./storage/sweep.js";
export type * from "./storage/types.js";
export type {
  TelemetryMeterProvider,
  TelemetryOption,
  TelemetryProviders,
  TelemetryTracerProvider,
} from "./telemetry/types.js";
export type { ThrottleConfig, ThrottleTier } from "./throttle/throttle-config.js";
export type { AccessContext, AccessTokenClaims, ActiveOrganization } from "./tokens/access-token.js";
export type { PublicUser, TokenSet } from "./tokens/issue-tokens.js";
export type { AsymmetricSigningKey, JWK, VerificationKey } from "./tokens/token-config.js";
export { type ResolvedField, type UserConfig, resolveUserFields } from "./user-fields/declaration.js";
export {
  type AdminFieldInput,
  type BooleanFieldOptions,
  type EnumFieldOptions,
  type FieldFlags,
  type FieldKind,
  type FieldValue,
  type FieldValueOf,
  type NumberFieldOptions,
  type PublicFieldValues,
  type SelfEditFieldInput,
  type SignUpFieldInput,
  type StringArrayFieldOptions,
  type StringFieldOptions,
  type TokenFieldValues,
  type UserField,
  type UserFieldDefinitions,
  type UserFieldValues,
  field,
} from "./user-fields/field.js";
export type { AccessUser, FieldsOf, InferUser, Register, RegisteredAuth, RegisteredFields } from "./user-fields/inference.js";
export { type UpdateProfileInput, setUserFields, updateProfile } from "./user-fields/profile.js";
export { emailKeyOf, maxEmailLength, normalizeEmail } from "./users/email.js";
export type { PublicUserHook } from "./users/public-user.js";
export type { Revocation, RevocationChannel, RevocationReceiver } from "./users/revocation-channel.js";
export type { SessionConfig } from "./users/session-config.js";
export { type RevocationChannelStatus, revocationChannelStatus } from "./users/token-state.js";
export { normalizeUsername, usernameProblem } from "./users/username.js";
export type { CeremonyStart } from "./webauthn/ceremony.js";
export type { PasskeyConfig } from "./webauthn/passkey-config.js";
export type { PasskeyInfo } from "./webauthn/passkey-info.js";
