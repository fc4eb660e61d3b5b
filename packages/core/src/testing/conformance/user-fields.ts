import type { FieldValue } from "../../user-fields/field.js";
import { type SuiteContext, tryToMutate } from "./harness.js";
import { BASE_TIME, sampleFieldValues, sampleUser } from "./samples.js";

/** The `users` tests of additional fields: stored as given by every write, and read back by every read. */
export function userFieldTests({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("additional fields", () => {
    it("create stores every field's value, null included, and every read answers them as given", async () => {
      const storage = await makeStorage();
      const fields = sampleFieldValues({ bio: "x".repeat(5000), tags: ["a", "b,c", '["d"]'], beta: true, seats: -1 });
      const user = sampleUser({ fields });
      expect(await storage.users.create(user)).toBe(true);
      expect((await storage.users.findById(user.id))?.fields).toEqual(fields);
      expect((await storage.users.findByUsernameKey(user.usernameKey))?.fields).toEqual(fields);
      const listed = await storage.users.list({ limit: 1, usernameKeyPrefix: user.usernameKey });
      expect(listed.map((one) => one.fields)).toEqual([fields]);
    });

    it("createAccount stores the fields with the user", async () => {
      const storage = await makeStorage();
      const fields = sampleFieldValues({ company: null, plan: null, score: 3.5 });
      const user = sampleUser({ fields });
      const account = { user, totp: null, recoveryCodeHashes: ["hash-a"], passkeys: [], identities: [] };
      expect(await storage.users.createAccount(account)).toBe(true);
      expect((await storage.users.findById(user.id))?.fields).toEqual(fields);
    });

    it("update writes only the fields its patch names and keeps the others", async () => {
      const storage = await makeStorage();
      const user = sampleUser();
      await storage.users.create(user);
      const updated = await storage.users.update(
        user.id,
        { fields: { company: "Initech", tags: ["x"], bio: null } },
        BASE_TIME + 5,
      );
      const expected = { ...user.fields, company: "Initech", tags: ["x"], bio: null };
      expect(updated?.fields).toEqual(expected);
      expect(updated?.updatedAt).toBe(BASE_TIME + 5);
      expect((await storage.users.findById(user.id))?.fields).toEqual(expected);
      const roles = await storage.users.update(user.id, { roles: ["admin"] }, BASE_TIME + 6);
      expect(roles?.fields).toEqual(expected);
    });

    it("a user stored without fields reads back with no field value: no fields, or every one null", async () => {
      const storage = await makeStorage();
      const { fields: _, ...bare } = sampleUser();
      await storage.users.create(bare);
      const read = await storage.users.findById(bare.id);
      expect(Object.values(read?.fields ?? {}).every((value) => value === null)).toBe(true);
    });

    it("a stored user's fields cannot be changed through a record the store answered or was given", async () => {
      const storage = await makeStorage();
      const user = sampleUser({ fields: sampleFieldValues({ tags: ["kept"] }) });
      await storage.users.create(user);
      (user.fields as Record<string, FieldValue>).company = "changed";
      const read = await storage.users.findById(user.id);
      const answered = (read?.fields ?? {}) as Record<string, FieldValue>;
      tryToMutate(() => {
        answered.company = "changed again";
      });
      tryToMutate(() => (answered.tags as string[]).push("more"));
      const again = await storage.users.findById(user.id);
      expect(again?.fields?.company).toEqual(sampleFieldValues().company);
      expect(again?.fields?.tags).toEqual(["kept"]);
    });
  });
}
