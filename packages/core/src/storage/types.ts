/**
 * The storage contract of Portcullis: small domain interfaces, each naming the operations
 * that security depends on being atomic. A storage adapter implements all of them and proves
 * it with the public conformance suite (`@portcullis/core/testing`).
 *
 * Times are epoch milliseconds. Every method that says "atomically" must hold under
 * concurrent callers across processes: a conditional write (`UPDATE … WHERE …`, a
 * compare-and-set, a delete that returns the row), never a read followed by a write.
 */

import type { ApiKeyStore } from "./api-key-store.js";
import type { ChallengeStore } from "./challenge-store.js";
import type { CounterStore } from "./counter-store.js";
import type { IdentityStore } from "./identity-store.js";
import type { OrganizationStore } from "./organization-store.js";
import type { PasskeyStore } from "./passkey-store.js";
import type { ServiceAccountStore } from "./service-account-store.js";
import type { SessionStore } from "./session-store.js";
import type { SettingsStore } from "./settings-store.js";
import type { RecoveryCodeStore, TotpStore } from "./totp-store.js";
import type { UserStore } from "./user-store.js";

export type * from "./api-key-store.js";
export type * from "./challenge-store.js";
export type * from "./counter-store.js";
export type * from "./identity-store.js";
export type * from "./organization-store.js";
export type * from "./passkey-store.js";
export type * from "./service-account-store.js";
export type * from "./session-store.js";
export type * from "./settings-store.js";
export type * from "./totp-store.js";
export type * from "./user-store.js";

/** Everything Portcullis stores. `memoryStorage()` and `@portcullis/kysely` implement it. */
export interface Storage {
  users: UserStore;
  totp: TotpStore;
  recoveryCodes: RecoveryCodeStore;
  sessions: SessionStore;
  challenges: ChallengeStore;
  counters: CounterStore;
  passkeys: PasskeyStore;
  identities: IdentityStore;
  settings: SettingsStore;
  /** Organizations, their members, invitations and domains: needed only with `organizations.enabled`. */
  organizations?: OrganizationStore;
  /** API keys: needed only with `apiKeys.enabled`. */
  apiKeys?: ApiKeyStore;
  /** Service accounts and their client credentials: needed only with `serviceAccounts.enabled`. */
  serviceAccounts?: ServiceAccountStore;
}
