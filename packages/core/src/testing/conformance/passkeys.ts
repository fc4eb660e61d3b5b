import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, samplePasskey, uniqueId } from "./samples.js";

/**
 * Registers the `passkeys` suite: the user handle kept (WA-4), unique credential ids (WA-6), counter
 * compare-and-set (WA-5), ownership (ST-2).
 */
export function passkeysSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);

  describe("passkeys", () => {
    it("create stores a passkey that findById returns; an unknown id is null", async () => {
      const storage = await makeStorage();
      const passkey = samplePasskey(await createUser(storage));
      expect(await storage.passkeys.create(passkey)).toBe(true);
      expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
      expect(await storage.passkeys.findById(uniqueId("credential"))).toBeNull();
    });

    it("WA-4: a passkey's user handle is stored and read back by findById and listByUser; a passkey made without one reads as having none (null or absent)", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const longest = "A".repeat(86);
      const signUp = samplePasskey(userId, { userHandle: longest, createdAt: BASE_TIME + 1 });
      const own = samplePasskey(userId, { label: "Phone" });
      const { userHandle: _, ...older } = samplePasskey(userId, { label: "Old key" });
      for (const passkey of [signUp, own, older]) expect(await storage.passkeys.create(passkey)).toBe(true);
      expect(await storage.passkeys.findById(signUp.id)).toEqual(signUp);
      expect(await storage.passkeys.findById(own.id)).toEqual(own);
      const found = await storage.passkeys.findById(older.id);
      expect(found?.userHandle ?? null).toBeNull();
      expect({ ...found, userHandle: undefined }).toEqual({ ...older, userHandle: undefined });
      const listed = await storage.passkeys.listByUser(userId);
      expect(listed.map((passkey) => [passkey.id, passkey.userHandle ?? null]).sort()).toEqual(
        [
          [signUp.id, longest],
          [own.id, null],
          [older.id, null],
        ].sort(),
      );
    });

    it("WA-6: create refuses a credential id registered to anyone and stores nothing", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const attacker = await createUser(storage);
      const passkey = samplePasskey(owner);
      await storage.passkeys.create(passkey);
      expect(await storage.passkeys.create(samplePasskey(attacker, { id: passkey.id, publicKey: "attacker-key" }))).toBe(false);
      expect(await storage.passkeys.create(samplePasskey(owner, { id: passkey.id, label: "Again" }))).toBe(false);
      expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
      expect(await storage.passkeys.listByUser(attacker)).toEqual([]);
    });

    it("listByUser returns that user's passkeys only", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const otherId = await createUser(storage);
      const mine = [samplePasskey(userId), samplePasskey(userId, { label: "Phone" })];
      for (const passkey of [...mine, samplePasskey(otherId)]) await storage.passkeys.create(passkey);
      expect([...(await storage.passkeys.listByUser(userId))].sort(byId)).toEqual([...mine].sort(byId));
      expect(await storage.passkeys.listByUser(uniqueId("user"))).toEqual([]);
    });

    it("WA-5: updateCounter sets counter, backup state and use time only when the expected counter matches", async () => {
      const storage = await makeStorage();
      const passkey = samplePasskey(await createUser(storage), { counter: 4 });
      await storage.passkeys.create(passkey);
      expect(await storage.passkeys.updateCounter(passkey.id, 4, 9, true, BASE_TIME + 10)).toBe(true);
      const updated = { ...passkey, counter: 9, backupState: true, lastUsedAt: BASE_TIME + 10 };
      expect(await storage.passkeys.findById(passkey.id)).toEqual(updated);
      expect(await storage.passkeys.updateCounter(passkey.id, 4, 12, false, BASE_TIME + 20)).toBe(false);
      expect(await storage.passkeys.findById(passkey.id)).toEqual(updated);
      expect(await storage.passkeys.updateCounter(uniqueId("credential"), 0, 1, false, BASE_TIME)).toBe(false);
    });

    it("WA-5, ST-1: 20 concurrent updateCounter calls with the same expected counter give exactly one winner", async () => {
      const storage = await makeStorage();
      const passkey = samplePasskey(await createUser(storage), { counter: 7 });
      await storage.passkeys.create(passkey);
      const results = await concurrently(20, (index) =>
        storage.passkeys.updateCounter(passkey.id, 7, 8 + index, false, BASE_TIME + index),
      );
      expect(countWhere(results, (updated) => updated)).toBe(1);
      const winner = results.indexOf(true);
      expect((await storage.passkeys.findById(passkey.id))?.counter).toBe(8 + winner);
    });

    it("ST-2: rename and delete with another user's id are false and change nothing", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const stranger = await createUser(storage);
      const passkey = samplePasskey(owner, { label: "Laptop" });
      await storage.passkeys.create(passkey);
      expect(await storage.passkeys.rename(stranger, passkey.id, "Mine now")).toBe(false);
      expect(await storage.passkeys.delete(stranger, passkey.id)).toBe(false);
      expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
    });

    it("rename and delete by the owner work; a deleted passkey is gone", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const passkey = samplePasskey(owner);
      await storage.passkeys.create(passkey);
      expect(await storage.passkeys.rename(owner, passkey.id, "Work key")).toBe(true);
      expect(await storage.passkeys.findById(passkey.id)).toEqual({ ...passkey, label: "Work key" });
      expect(await storage.passkeys.rename(owner, uniqueId("credential"), "Nothing")).toBe(false);
      expect(await storage.passkeys.delete(owner, passkey.id)).toBe(true);
      expect(await storage.passkeys.findById(passkey.id)).toBeNull();
      expect(await storage.passkeys.listByUser(owner)).toEqual([]);
      expect(await storage.passkeys.delete(owner, passkey.id)).toBe(false);
    });

    it("deleteUnlessLast deletes one of two passkeys, keeps the last, and ignores another user's id", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const stranger = await createUser(storage);
      const [first, second] = [samplePasskey(owner), samplePasskey(owner, { label: "Phone" })] as const;
      for (const passkey of [first, second, samplePasskey(stranger)]) await storage.passkeys.create(passkey);
      expect(await storage.passkeys.deleteUnlessLast(stranger, first.id)).toBe("not_found");
      expect(await storage.passkeys.deleteUnlessLast(owner, uniqueId("credential"))).toBe("not_found");
      expect(await storage.passkeys.deleteUnlessLast(owner, first.id)).toBe("deleted");
      expect(await storage.passkeys.findById(first.id)).toBeNull();
      expect(await storage.passkeys.deleteUnlessLast(owner, second.id)).toBe("last");
      expect(await storage.passkeys.listByUser(owner)).toEqual([second]);
      expect(await storage.passkeys.deleteUnlessLast(owner, first.id)).toBe("not_found");
    });

    it("ST-1: deleting a user's last two passkeys concurrently with deleteUnlessLast leaves exactly one", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const passkeys = [samplePasskey(owner), samplePasskey(owner, { label: "Phone" })];
      for (const passkey of passkeys) await storage.passkeys.create(passkey);
      const results = await concurrently(2, (index) =>
        storage.passkeys.deleteUnlessLast(owner, (passkeys[index] as { id: string }).id),
      );
      expect([...results].sort()).toEqual(["deleted", "last"]);
      expect(await storage.passkeys.listByUser(owner)).toHaveLength(1);
    });

    it("records are copied out: mutating a result changes nothing stored", async () => {
      const storage = await makeStorage();
      const owner = await createUser(storage);
      const passkey = samplePasskey(owner);
      await storage.passkeys.create(passkey);
      const found = await storage.passkeys.findById(passkey.id);
      found?.transports.push("usb");
      const [listed] = await storage.passkeys.listByUser(owner);
      if (listed) listed.counter = 1000;
      expect(await storage.passkeys.findById(passkey.id)).toEqual(passkey);
    });
  });
}
