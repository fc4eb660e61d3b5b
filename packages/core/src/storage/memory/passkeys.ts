import type { PasskeyRecord, PasskeyStore } from "../types.js";
import { copy } from "./records.js";

/**
 * The memory {@link PasskeyStore}: credentials by id, with each user's ids. A passkey stored
 * without a user handle reads back with `userHandle: null`, as from SQL.
 */
export function memoryPasskeys() {
  const passkeys = new Map<string, PasskeyRecord>();
  const owned = (userId: string, id: string) => {
    const passkey = passkeys.get(id);
    return passkey?.userId === userId ? passkey : undefined;
  };
  const has = (id: string) => passkeys.has(id);
  const insert = (passkey: PasskeyRecord) =>
    void passkeys.set(passkey.id, copy({ ...passkey, userHandle: passkey.userHandle ?? null }));
  const store: PasskeyStore = {
    async create(passkey) {
      if (has(passkey.id)) return false;
      insert(passkey);
      return true;
    },
    async findById(id) {
      const passkey = passkeys.get(id);
      return passkey ? copy(passkey) : null;
    },
    async listByUser(userId) {
      return [...passkeys.values()].filter((passkey) => passkey.userId === userId).map(copy);
    },
    async updateCounter(id, expectedCounter, counter, backupState, now) {
      const passkey = passkeys.get(id);
      if (!passkey || passkey.counter !== expectedCounter) return false;
      Object.assign(passkey, { counter, backupState, lastUsedAt: now });
      return true;
    },
    async rename(userId, id, label) {
      const passkey = owned(userId, id);
      if (!passkey) return false;
      passkey.label = label;
      return true;
    },
    async delete(userId, id) {
      return owned(userId, id) ? passkeys.delete(id) : false;
    },
    async deleteUnlessLast(userId, id) {
      if (!owned(userId, id)) return "not_found";
      const count = [...passkeys.values()].filter((passkey) => passkey.userId === userId).length;
      if (count < 2) return "last";
      passkeys.delete(id);
      return "deleted";
    },
  };
  return { store, has, insert };
}
