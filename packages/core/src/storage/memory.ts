import { memoryApiKeys } from "./memory/api-keys.js";
import { memoryChallenges } from "./memory/challenges.js";
import { memoryCounters } from "./memory/counters.js";
import { memoryIdentities } from "./memory/identities.js";
import { memoryOrganizations } from "./memory/organizations.js";
import { memoryPasskeys } from "./memory/passkeys.js";
import { memoryRecoveryCodes, memoryTotp } from "./memory/second-factor.js";
import { memoryServiceAccounts } from "./memory/service-accounts.js";
import { memorySessions } from "./memory/sessions.js";
import { memorySettings } from "./memory/settings.js";
import { memoryUsers } from "./memory/users.js";
import type { Storage } from "./types.js";

export { expiringMap } from "./memory/expiring-map.js";

/** How many entries a {@link memoryStorage} holds, per table. */
export interface MemoryStorageSizes {
  users: number;
  sessions: number;
  challenges: number;
  counters: number;
}

/** {@link Storage} held in memory, which also tells how much it holds. */
export interface MemoryStorage extends Storage {
  /** The entries each table holds now, expired ones not yet pruned included. */
  sizes(): MemoryStorageSizes;
}

/**
 * Storage held in this process's memory: for tests, demos and single-instance services that
 * accept losing every session at restart. Each operation runs without yielding between its
 * read and its write, which makes it atomic within the process.
 *
 * Records are copied in, so a caller that mutates an argument changes nothing stored. Users
 * and sessions are kept frozen and handed out as they are, with no copy, which makes the check
 * of a token's state on every request two map lookups; a write replaces the record. Other
 * records are copied out. Either way, mutating a result changes nothing stored. Expired counter
 * windows, challenges and sessions are pruned as new entries arrive, so a stream of distinct
 * keys holds memory in proportion to the keys live at once, not to every key ever seen, and by
 * `challenges.deleteExpired`, which the auth instance's sweep calls. Each store is a file of
 * `storage/memory/`.
 *
 * @example
 * ```ts
 * const auth = createAuth({ storage: memoryStorage(), … });
 * ```
 */
export function memoryStorage(): MemoryStorage {
  const totp = memoryTotp();
  const recoveryCodes = memoryRecoveryCodes();
  const passkeys = memoryPasskeys();
  const identities = memoryIdentities();
  const users = memoryUsers({ totp, recoveryCodes, passkeys, identities });
  const organizations = memoryOrganizations();
  const sessions = memorySessions({ user: users.byId, totpEnabled: totp.enabled, orgRoles: organizations.orgRoles });
  organizations.attach(sessions.activeOrganizations);
  const counters = memoryCounters();
  const challenges = memoryChallenges([sessions.deleteExpired, counters.deleteExpired]);
  return {
    users: users.store,
    totp: totp.store,
    recoveryCodes: recoveryCodes.store,
    sessions: sessions.store,
    challenges: challenges.store,
    counters: counters.store,
    passkeys: passkeys.store,
    identities: identities.store,
    settings: memorySettings(),
    organizations: organizations.store,
    apiKeys: memoryApiKeys(users.byId).store,
    serviceAccounts: memoryServiceAccounts(),
    sizes: () => ({
      users: users.size(),
      sessions: sessions.sessionCount(),
      challenges: challenges.size(),
      counters: counters.size(),
    }),
  };
}
