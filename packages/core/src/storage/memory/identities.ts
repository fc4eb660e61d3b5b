import type { IdentityRecord, IdentityStore } from "../types.js";
import { copy } from "./records.js";

/** The key of a link: its provider and subject, which no two links share (OA-7). */
export const identityKey = ({ provider, subject }: Pick<IdentityRecord, "provider" | "subject">) =>
  JSON.stringify([provider, subject]);

/** The memory {@link IdentityStore}: links keyed by (provider, subject), unique (OA-7). */
export function memoryIdentities() {
  const identities = new Map<string, IdentityRecord>();
  const has = (identity: Pick<IdentityRecord, "provider" | "subject">) => identities.has(identityKey(identity));
  const insert = (identity: IdentityRecord) => void identities.set(identityKey(identity), copy(identity));
  const store: IdentityStore = {
    async link(identity) {
      if (has(identity)) return false;
      insert(identity);
      return true;
    },
    async find(provider, subject) {
      const identity = identities.get(identityKey({ provider, subject }));
      return identity ? copy(identity) : null;
    },
    async listByUser(userId) {
      return [...identities.values()].filter((identity) => identity.userId === userId).map(copy);
    },
    async findByVerifiedEmail(email) {
      return [...identities.values()].filter((identity) => identity.emailVerified && identity.email === email).map(copy);
    },
    async unlink(userId, provider, subject) {
      const key = identityKey({ provider, subject });
      return identities.get(key)?.userId === userId ? identities.delete(key) : false;
    },
  };
  return { store, has, insert };
}
