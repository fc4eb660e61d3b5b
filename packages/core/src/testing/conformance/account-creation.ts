import type { NewAccount, PasskeyRecord, Storage } from "../../storage/types.js";
import { emailKeyOf } from "../../users/email.js";
import { type SuiteContext, concurrently, countWhere, tryToMutate } from "./harness.js";
import { BASE_TIME, createUser, sampleIdentity, samplePasskey, sampleTotp, sampleUser, uniqueHash, uniqueId } from "./samples.js";

/** An account of a fresh user holding an enabled TOTP factor, two recovery codes, two passkeys and two links. */
function sampleAccount(overrides: Partial<NewAccount> = {}): NewAccount {
  const user = overrides.user ?? sampleUser();
  const { userId: _totpUser, ...totp } = sampleTotp(user.id, { enabled: true, lastUsedStep: 7 });
  const withoutUser = <T extends { userId: string }>({ userId: _owner, ...record }: T) => record;
  return {
    user,
    totp,
    recoveryCodeHashes: [uniqueHash(), uniqueHash()],
    passkeys: [samplePasskey(user.id), samplePasskey(user.id, { label: "Phone" })].map(withoutUser),
    identities: [sampleIdentity(user.id), sampleIdentity(user.id, { provider: "gitlab" })].map(withoutUser),
    ...overrides,
  };
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** What the storage holds of the user with this id and of every key the account names: nothing, when it was refused. */
async function heldOf(storage: Storage, userId: string, account: NewAccount) {
  return {
    user: await storage.users.findById(userId),
    totp: await storage.totp.get(userId),
    recoveryCodes: await storage.recoveryCodes.count(userId),
    passkeys: await storage.passkeys.listByUser(userId),
    identities: await storage.identities.listByUser(userId),
    passkeysById: (await Promise.all(account.passkeys.map((passkey) => storage.passkeys.findById(passkey.id)))).filter(
      (passkey): passkey is PasskeyRecord => passkey?.userId === userId,
    ),
  };
}

const nothing = { user: null, totp: null, recoveryCodes: 0, passkeys: [], identities: [], passkeysById: [] };

/**
 * `users.createAccount` (IM-1): a user and everything it owns stored as one, or nothing of it
 * when any of its keys is taken, under concurrent callers too.
 */
export function accountCreationTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("createAccount", () => {
    it("IM-1: stores the user with its TOTP factor, recovery codes, passkeys and links, each read back as its store returns it", async () => {
      const storage = await makeStorage();
      const account = sampleAccount({ user: sampleUser({ email: `${uniqueId("a")}@example.com`, emailVerified: true }) });
      const { user } = account;
      expect(await storage.users.createAccount(account)).toBe(true);
      expect(await storage.users.findById(user.id)).toEqual(user);
      expect(await storage.users.findByUsernameKey(user.usernameKey)).toEqual(user);
      expect(await storage.users.findByVerifiedEmail(emailKeyOf(user.email as string))).toEqual(user);
      expect(await storage.totp.get(user.id)).toEqual({ ...account.totp, userId: user.id });
      expect(await storage.recoveryCodes.count(user.id)).toBe(2);
      for (const hash of account.recoveryCodeHashes) expect(await storage.recoveryCodes.has(user.id, hash)).toBe(true);
      const passkeys = account.passkeys.map((passkey) => ({ ...passkey, userId: user.id }));
      expect((await storage.passkeys.listByUser(user.id)).sort(byId)).toEqual([...passkeys].sort(byId));
      for (const passkey of passkeys) expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
      for (const identity of account.identities) {
        expect(await storage.identities.find(identity.provider, identity.subject)).toEqual({ ...identity, userId: user.id });
      }
      expect(await storage.identities.listByUser(user.id)).toHaveLength(2);
      // The factors work as their stores' own writes left them: a code is spent once, a step moves forward.
      expect(await storage.recoveryCodes.consume(user.id, account.recoveryCodeHashes[0] as string)).toBe(true);
      expect(await storage.recoveryCodes.consume(user.id, account.recoveryCodeHashes[0] as string)).toBe(false);
      expect(await storage.totp.advanceStep(user.id, 7)).toBe(false);
      expect(await storage.totp.advanceStep(user.id, 8)).toBe(true);
    });

    it("IM-1: an account without factors is its user alone; a pending TOTP factor is stored pending", async () => {
      const storage = await makeStorage();
      const bare = sampleAccount({ totp: null, recoveryCodeHashes: [], passkeys: [], identities: [] });
      expect(await storage.users.createAccount(bare)).toBe(true);
      expect(await heldOf(storage, bare.user.id, bare)).toEqual({ ...nothing, user: bare.user });
      const pending = sampleAccount({ totp: { ...sampleAccount().totp, enabled: false } as NewAccount["totp"] });
      expect(await storage.users.createAccount(pending)).toBe(true);
      expect((await storage.totp.get(pending.user.id))?.enabled).toBe(false);
    });

    it("IM-1: the records are copied in: changing them afterwards changes nothing stored", async () => {
      const storage = await makeStorage();
      const account = sampleAccount();
      expect(await storage.users.createAccount(account)).toBe(true);
      const stored = await heldOf(storage, account.user.id, account);
      tryToMutate(() => {
        account.user.roles.push("admin");
        (account.passkeys[0] as { label: string }).label = "changed";
        account.recoveryCodeHashes.push(uniqueHash());
      });
      expect(await heldOf(storage, account.user.id, account)).toEqual(stored);
    });

    it("IM-1, EV-1: a taken username, id or verified address refuses the account, writing nothing of it", async () => {
      const storage = await makeStorage();
      const email = `${uniqueId("held")}@example.com`;
      const holder = sampleUser({ email, emailVerified: true });
      await createUser(storage, holder);
      const taken = [
        sampleAccount({ user: sampleUser({ usernameKey: holder.usernameKey }) }),
        sampleAccount({ user: sampleUser({ email: email.toUpperCase(), emailVerified: true }) }),
      ];
      for (const account of taken) {
        expect(await storage.users.createAccount(account)).toBe(false);
        expect(await heldOf(storage, account.user.id, account)).toEqual(nothing);
        expect(await storage.identities.find("github", account.identities[0]?.subject as string)).toBeNull();
      }
      const sameId = sampleAccount({ user: sampleUser({ id: holder.id, usernameKey: uniqueId("name") }) });
      expect(await storage.users.createAccount(sameId)).toBe(false);
      expect(await storage.users.findByUsernameKey(sameId.user.usernameKey)).toBeNull();
      expect(await heldOf(storage, holder.id, sameId)).toEqual({ ...nothing, user: holder });
    });

    it("IM-1, WA-6, OA-7: a credential id registered to anyone, or a taken link, refuses the account, writing nothing of it", async () => {
      const storage = await makeStorage();
      const ownerId = await createUser(storage);
      const registered = samplePasskey(ownerId);
      const linked = sampleIdentity(ownerId, { provider: "gitea" });
      expect(await storage.passkeys.create(registered)).toBe(true);
      expect(await storage.identities.link(linked)).toBe(true);
      const { userId: _p, ...passkey } = registered;
      const { userId: _i, ...identity } = linked;
      const base = sampleAccount();
      const refused = [
        sampleAccount({ passkeys: [...base.passkeys, passkey] }),
        // The taken key last: everything before it in the account must go too.
        sampleAccount({ identities: [...base.identities, identity] }),
      ];
      for (const account of refused) {
        expect(await storage.users.createAccount(account)).toBe(false);
        expect(await heldOf(storage, account.user.id, account)).toEqual(nothing);
        expect(await storage.users.findByUsernameKey(account.user.usernameKey)).toBeNull();
      }
      expect(await storage.passkeys.findById(registered.id)).toEqual(registered);
      expect(await storage.identities.find(linked.provider, linked.subject)).toEqual(linked);
    });

    it("IM-1: an account holding one credential id or one link twice is refused, writing nothing of it", async () => {
      const storage = await makeStorage();
      const base = sampleAccount();
      const twice = [
        sampleAccount({ passkeys: [base.passkeys[0], { ...base.passkeys[0], label: "Again" }] as NewAccount["passkeys"] }),
        sampleAccount({ identities: [base.identities[0], base.identities[0]] as NewAccount["identities"] }),
      ];
      for (const account of twice) {
        expect(await storage.users.createAccount(account)).toBe(false);
        expect(await heldOf(storage, account.user.id, account)).toEqual(nothing);
      }
    });

    it("IM-1, ST-1: of 10 concurrent accounts sharing one credential id, each with its own username, exactly one is stored whole; the others leave nothing", async () => {
      const storage = await makeStorage();
      const shared = sampleAccount().passkeys[0] as NewAccount["passkeys"][number];
      const accounts = Array.from({ length: 10 }, () => {
        const account = sampleAccount();
        return { ...account, passkeys: [...account.passkeys, shared] };
      });
      const created = await concurrently(10, (index) => storage.users.createAccount(accounts[index] as NewAccount));
      expect(countWhere(created, (stored) => stored !== false)).toBe(1);
      for (const [index, account] of accounts.entries()) {
        const held = await heldOf(storage, account.user.id, account);
        if (created[index]) {
          expect(held.user).toEqual(account.user);
          expect(held.passkeys).toHaveLength(3);
          expect(held.recoveryCodes).toBe(2);
          expect((await storage.passkeys.findById(shared.id))?.userId).toBe(account.user.id);
        } else {
          expect(held).toEqual(nothing);
        }
      }
    });

    it("IM-1, ST-1: of 10 concurrent accounts with one username, exactly one is stored, with its own factors only", async () => {
      const storage = await makeStorage();
      const usernameKey = uniqueId("twin");
      const accounts = Array.from({ length: 10 }, () => sampleAccount({ user: sampleUser({ usernameKey }) }));
      const created = await concurrently(10, (index) => storage.users.createAccount(accounts[index] as NewAccount));
      expect(countWhere(created, (stored) => stored !== false)).toBe(1);
      const winner = accounts[created.indexOf(true)] as NewAccount;
      expect((await storage.users.findByUsernameKey(usernameKey))?.id).toBe(winner.user.id);
      for (const account of accounts) {
        if (account === winner) continue;
        expect(await heldOf(storage, account.user.id, account)).toEqual(nothing);
      }
      expect(await storage.recoveryCodes.count(winner.user.id)).toBe(2);
      expect((await storage.totp.get(winner.user.id))?.createdAt).toBe(BASE_TIME);
    });
  });
}
