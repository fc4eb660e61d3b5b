/**
 * Helpers for the test suites of services built on Portcullis: a software passkey authenticator
 * ({@link createSoftwareAuthenticator}), a local OpenID provider with fixed accounts
 * ({@link startLocalProvider}), TOTP codes ({@link totpCode}), and the storage conformance kit
 * ({@link runStorageConformance}).
 *
 * @packageDocumentation
 * @module @portcullis/testing
 */

// The storage conformance kit: the same module as `@portcullis/core/testing`, which keeps working
// for existing suites; users are told to import it from here, beside the other helpers.
export {
  type ConformanceAssertion,
  type ConformanceTestFunctions,
  type StorageConformanceOptions,
  type StorageConformanceSuite,
  conformanceUserFields,
  runStorageConformance,
  sampleFieldValues,
  storageConformanceSuites,
} from "@portcullis/core/testing";
export { type CborValue, encodeCbor } from "./cbor.js";
export {
  type LocalProviderAccount,
  localProviderAccounts,
  localProviderPassword,
} from "./local-provider/accounts.js";
export { type DriveAuthorizationOptions, driveAuthorization } from "./local-provider/drive-authorization.js";
export {
  type LocalProvider,
  type LocalProviderAuthentication,
  type LocalProviderClient,
  type LocalProviderMiddleware,
  type LocalProviderOptions,
  startLocalProvider,
} from "./local-provider/provider.js";
export {
  type AuthenticationOverrides,
  type AuthenticatorFlags,
  type CeremonyOverrides,
  type CoseKeyParts,
  type CounterMode,
  type RegistrationOverrides,
  type SoftwareAuthenticator,
  type SoftwareAuthenticatorAlgorithm,
  type SoftwareAuthenticatorOptions,
  type SoftwareCredential,
  coseKeyAlgorithm,
  createSoftwareAuthenticator,
  encodeCoseKey,
} from "./software-authenticator.js";
export { type TotpAlgorithm, type TotpCodeOptions, totpCode } from "./totp.js";
