import { compareCodePoints } from "../code-point-order.js";
import type { ServiceAccountCredentialRecord, ServiceAccountRecord, ServiceAccountStore } from "../service-account-store.js";
import { frozenCopy, frozenWith } from "./records.js";

/**
 * The memory {@link ServiceAccountStore}: frozen accounts by id, and each account's frozen
 * credentials. Records are handed out as stored (every request with a service token reads its
 * account); a write replaces them.
 */
export function memoryServiceAccounts(): ServiceAccountStore {
  const accounts = new Map<string, ServiceAccountRecord>();
  const credentials = new Map<string, ServiceAccountCredentialRecord[]>();
  const frozenCredential = (credential: ServiceAccountCredentialRecord) =>
    Object.freeze(
      credential.kind === "jwk" ? { ...credential, publicJwk: Object.freeze({ ...credential.publicJwk }) } : { ...credential },
    ) as ServiceAccountCredentialRecord;
  return {
    async createServiceAccount(account) {
      accounts.set(account.id, frozenCopy(account));
      credentials.set(account.id, []);
    },
    async findServiceAccount(id) {
      return accounts.get(id) ?? null;
    },
    async findServiceAccountClient(id) {
      const account = accounts.get(id);
      return account === undefined ? null : { account, credentials: [...(credentials.get(id) ?? [])] };
    },
    async listServiceAccounts() {
      return [...accounts.values()].sort((a, b) => a.createdAt - b.createdAt || compareCodePoints(a.id, b.id));
    },
    async updateServiceAccount(id, changes) {
      const account = accounts.get(id);
      if (account === undefined) return null;
      const { raiseTokenVersion, ...fields } = changes;
      const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
      const changed = frozenCopy(
        frozenWith(account, {
          ...defined,
          tokenVersion: account.tokenVersion + (raiseTokenVersion === true ? 1 : 0),
        }),
      );
      accounts.set(id, changed);
      return changed;
    },
    async deleteServiceAccount(id) {
      credentials.delete(id);
      return accounts.delete(id);
    },
    async addServiceAccountCredential(credential, maxOfKind, now) {
      const held = credentials.get(credential.serviceAccountId);
      if (held === undefined || !accounts.has(credential.serviceAccountId)) return "unknown_account";
      const live = held.filter((each) => each.kind === credential.kind && (each.expiresAt === null || each.expiresAt > now));
      if (live.length >= maxOfKind) return "limit";
      credentials.set(credential.serviceAccountId, [...held, frozenCredential(credential)]);
      return "added";
    },
    async removeServiceAccountCredential(serviceAccountId, credentialId) {
      const held = credentials.get(serviceAccountId);
      if (held === undefined || !held.some((each) => each.id === credentialId)) return false;
      credentials.set(
        serviceAccountId,
        held.filter((each) => each.id !== credentialId),
      );
      return true;
    },
    async recordServiceAccountCredentialUse(credentialId, at, minIntervalMs) {
      for (const [accountId, held] of credentials) {
        const index = held.findIndex((each) => each.id === credentialId);
        if (index === -1) continue;
        const credential = held[index] as ServiceAccountCredentialRecord;
        if (credential.lastUsedAt !== null && credential.lastUsedAt > at - minIntervalMs) return;
        const next = [...held];
        next[index] = frozenWith(credential, { lastUsedAt: at });
        credentials.set(accountId, next);
        return;
      }
    },
  };
}
