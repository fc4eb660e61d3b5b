import { emailKeyOf } from "../../users/email.js";
import { compareCodePoints } from "../code-point-order.js";
import type { IdentityRecord, NewAccount, PasskeyRecord, TotpRecord, UserPatch, UserRecord, UserStore } from "../types.js";
import { identityKey } from "./identities.js";
import { copy, frozenUser, frozenWith } from "./records.js";

/** The fields of {@link UserPatch} a patch copies onto the stored user. */
export const patchableUserFields = [
  "username",
  "usernameKey",
  "passwordHash",
  "roles",
  "disabled",
] as const satisfies (keyof UserPatch)[];

/** The fields of a user with those of a patch written over them: a patch names only the fields it changes. */
export const patchedFields = (user: UserRecord, patch: UserPatch): Pick<UserRecord, "fields"> =>
  patch.fields === undefined ? {} : { fields: { ...user.fields, ...patch.fields } };

/** The key of a user's address when it is verified (EV-1's unique key), else null. */
export const verifiedEmailKeyOf = (user: Pick<UserRecord, "email" | "emailVerified">) =>
  user.emailVerified && user.email !== null ? emailKeyOf(user.email) : null;

/** The writes of the other tables that {@link UserStore.createAccount} makes in the same step as the user's. */
export interface OwnedTables {
  totp: { put(record: TotpRecord): void };
  recoveryCodes: { set(userId: string, hashes: string[]): void };
  passkeys: { has(id: string): boolean; insert(passkey: PasskeyRecord): void };
  identities: { has(identity: Pick<IdentityRecord, "provider" | "subject">): boolean; insert(identity: IdentityRecord): void };
}

/** Whether `keys` holds one key twice. */
export const repeats = (keys: string[]) => new Set(keys).size !== keys.length;

/** The memory {@link UserStore}: users by id, with the username and verified-address keys unique. */
export function memoryUsers(owned: OwnedTables) {
  const byId = new Map<string, UserRecord>();
  const idByKey = new Map<string, string>();
  const idByVerifiedEmail = new Map<string, string>();
  /** Stores the user unless its id, username key or verified address is taken; whether it did. */
  const insert = (user: UserRecord) => {
    const emailKey = verifiedEmailKeyOf(user);
    if (byId.has(user.id) || idByKey.has(user.usernameKey)) return false;
    if (emailKey !== null && idByVerifiedEmail.has(emailKey)) return false;
    byId.set(user.id, frozenUser({ ...user, emailVerified: emailKey !== null }));
    idByKey.set(user.usernameKey, user.id);
    if (emailKey !== null) idByVerifiedEmail.set(emailKey, user.id);
    return true;
  };
  const store: UserStore = {
    async create(user) {
      return insert(user);
    },
    // Every check, then every write, with no await between: atomic within the process.
    async createAccount({ user, totp, recoveryCodeHashes, passkeys, identities }: NewAccount) {
      const passkeyIds = passkeys.map((passkey) => passkey.id);
      if (repeats(passkeyIds) || passkeyIds.some(owned.passkeys.has)) return false;
      if (repeats(identities.map(identityKey)) || identities.some(owned.identities.has)) return false;
      if (!insert(user)) return false;
      const userId = user.id;
      if (totp !== null) owned.totp.put({ ...totp, userId });
      owned.recoveryCodes.set(userId, recoveryCodeHashes);
      for (const passkey of passkeys) owned.passkeys.insert({ ...passkey, userId });
      for (const identity of identities) owned.identities.insert({ ...identity, userId });
      return true;
    },
    async findByVerifiedEmail(emailKey) {
      const id = idByVerifiedEmail.get(emailKey);
      return (id === undefined ? undefined : byId.get(id)) ?? null;
    },
    async setEmail(id, setting, now) {
      const user = byId.get(id);
      if (!user) return { outcome: "unknown" };
      const fields = { email: setting?.email ?? null, emailVerified: setting?.verified === true };
      const emailKey = verifiedEmailKeyOf(fields);
      const holder = emailKey === null ? undefined : idByVerifiedEmail.get(emailKey);
      if (holder !== undefined && holder !== id) return { outcome: "taken" };
      const previousKey = verifiedEmailKeyOf(user);
      if (previousKey !== null) idByVerifiedEmail.delete(previousKey);
      if (emailKey !== null) idByVerifiedEmail.set(emailKey, id);
      const updated = frozenWith(user, { ...fields, updatedAt: now });
      byId.set(id, updated);
      return { outcome: "set", user: updated };
    },
    async findById(id) {
      return byId.get(id) ?? null;
    },
    async findByUsernameKey(usernameKey) {
      const id = idByKey.get(usernameKey);
      return (id === undefined ? undefined : byId.get(id)) ?? null;
    },
    async update(id, patch, now) {
      const user = byId.get(id);
      if (!user) return null;
      const changes: UserPatch = Object.fromEntries(
        patchableUserFields.filter((field) => patch[field] !== undefined).map((field) => [field, copy(patch[field])]),
      );
      if (changes.usernameKey !== undefined && changes.usernameKey !== user.usernameKey) {
        if (idByKey.has(changes.usernameKey)) return null;
        idByKey.delete(user.usernameKey);
        idByKey.set(changes.usernameKey, id);
      }
      const updated = frozenUser({ ...user, ...changes, ...patchedFields(user, patch), updatedAt: now });
      byId.set(id, updated);
      return updated;
    },
    async replacePasswordHash(id, expected, next, now) {
      const user = byId.get(id);
      if (!user || user.passwordHash !== expected) return false;
      byId.set(id, frozenWith(user, { passwordHash: next, updatedAt: now }));
      return true;
    },
    async incrementTokenVersion(id, now) {
      const user = byId.get(id);
      if (!user) return null;
      byId.set(id, frozenWith(user, { tokenVersion: user.tokenVersion + 1, updatedAt: now }));
      return user.tokenVersion + 1;
    },
    async incrementTokenVersionsBySource(source, now) {
      let raised = 0;
      for (const user of byId.values()) {
        if (user.source !== source) continue;
        byId.set(user.id, frozenWith(user, { tokenVersion: user.tokenVersion + 1, updatedAt: now }));
        raised += 1;
      }
      return raised;
    },
    async list({ limit, afterUsernameKey, usernameKeyPrefix = "" }) {
      const keys = [...idByKey.keys()]
        .filter(
          (key) =>
            key.startsWith(usernameKeyPrefix) && (afterUsernameKey === undefined || compareCodePoints(key, afterUsernameKey) > 0),
        )
        .sort(compareCodePoints)
        .slice(0, limit);
      return keys.map((key) => byId.get(idByKey.get(key) as string) as UserRecord);
    },
  };
  return { store, size: () => byId.size, byId: (id: string) => byId.get(id) ?? null };
}
