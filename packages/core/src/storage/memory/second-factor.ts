import type { RecoveryCodeStore, TotpRecord, TotpStore } from "../types.js";
import { copy } from "./records.js";

/** The memory {@link TotpStore}: one record per user, sealed secret as given. */
export function memoryTotp() {
  const records = new Map<string, TotpRecord>();
  const store: TotpStore = {
    async get(userId) {
      const record = records.get(userId);
      return record ? copy(record) : null;
    },
    async putPending(record) {
      if (records.get(record.userId)?.enabled) return false;
      records.set(record.userId, copy({ ...record, enabled: false }));
      return true;
    },
    async enable(userId) {
      const record = records.get(userId);
      if (!record || record.enabled) return false;
      record.enabled = true;
      return true;
    },
    async remove(userId) {
      return records.delete(userId);
    },
    async advanceStep(userId, step) {
      const record = records.get(userId);
      if (!record || step <= record.lastUsedStep) return false;
      record.lastUsedStep = step;
      return true;
    },
    async replaceSecret(userId, expected, next) {
      const record = records.get(userId);
      if (!record || record.secret.keyId !== expected.keyId || record.secret.sealed !== expected.sealed) return false;
      record.secret = { keyId: next.keyId, sealed: next.sealed };
      return true;
    },
  };
  return {
    store,
    enabled: (userId: string) => records.get(userId)?.enabled === true,
    put: (record: TotpRecord) => void records.set(record.userId, copy(record)),
  };
}

/** The memory {@link RecoveryCodeStore}: each user's set of code hashes, a code consumed by one delete. */
export function memoryRecoveryCodes() {
  const sets = new Map<string, Set<string>>();
  const set = (userId: string, hashes: string[]) => void sets.set(userId, new Set(hashes));
  const store: RecoveryCodeStore = {
    async replace(userId, hashes) {
      set(userId, hashes);
    },
    async has(userId, hash) {
      return sets.get(userId)?.has(hash) ?? false;
    },
    async consume(userId, hash) {
      return sets.get(userId)?.delete(hash) ?? false;
    },
    async count(userId) {
      return sets.get(userId)?.size ?? 0;
    },
    async removeAll(userId) {
      sets.delete(userId);
    },
  };
  return { store, set };
}
