import { accountCreationTests } from "./account-creation.js";
import { type SuiteContext, concurrently, tryToMutate } from "./harness.js";
import { BASE_TIME, createUser, sampleUser, uniqueId } from "./samples.js";
import { userFieldTests } from "./user-fields.js";
import { userListingTests } from "./user-listing.js";
import { verifiedEmailTests } from "./verified-emails.js";

/**
 * Registers the `users` suite: uniqueness, lookups, patches, the token version (TV-1), the paged
 * listing (AD-1), and an account created whole with its factors (`createAccount`, IM-1).
 */
export function usersSuite(context: SuiteContext): void {
  const {
    test: { describe, it, expect },
    makeStorage,
  } = context;
  describe("users", () => {
    userListingTests(context);
    verifiedEmailTests(context);
    accountCreationTests(context);
    userFieldTests(context);

    it("create stores a user that findById and findByUsernameKey return", async () => {
      const storage = await makeStorage();
      const user = sampleUser();
      expect(await storage.users.create(user)).toBe(true);
      expect(await storage.users.findById(user.id)).toEqual(user);
      expect(await storage.users.findByUsernameKey(user.usernameKey)).toEqual(user);
      expect(await storage.users.findById(uniqueId("user"))).toBeNull();
      expect(await storage.users.findByUsernameKey(uniqueId("name"))).toBeNull();
    });

    it("create refuses a taken usernameKey and stores nothing", async () => {
      const storage = await makeStorage();
      const first = sampleUser();
      await storage.users.create(first);
      const duplicate = sampleUser({ usernameKey: first.usernameKey });
      expect(await storage.users.create(duplicate)).toBe(false);
      expect(await storage.users.findById(duplicate.id)).toBeNull();
      expect(await storage.users.findByUsernameKey(first.usernameKey)).toEqual(first);
    });

    it("create refuses a taken id and stores nothing", async () => {
      const storage = await makeStorage();
      const first = sampleUser();
      await storage.users.create(first);
      const duplicate = sampleUser({ id: first.id, usernameKey: uniqueId("name") });
      expect(await storage.users.create(duplicate)).toBe(false);
      expect(await storage.users.findByUsernameKey(duplicate.usernameKey)).toBeNull();
      expect(await storage.users.findById(first.id)).toEqual(first);
    });

    it("update applies the patch, sets updatedAt and leaves the other fields", async () => {
      const storage = await makeStorage();
      const user = sampleUser();
      await storage.users.create(user);
      const newKey = uniqueId("name");
      const patch = { username: newKey.toUpperCase(), usernameKey: newKey, roles: ["admin"], disabled: true, passwordHash: null };
      const expected = { ...user, ...patch, updatedAt: BASE_TIME + 1000 };
      expect(await storage.users.update(user.id, patch, BASE_TIME + 1000)).toEqual(expected);
      expect(await storage.users.findById(user.id)).toEqual(expected);
      expect(await storage.users.findByUsernameKey(newKey)).toEqual(expected);
      expect(await storage.users.findByUsernameKey(user.usernameKey)).toBeNull();
    });

    it("update treats a field given as undefined as absent", async () => {
      const storage = await makeStorage();
      const user = sampleUser();
      await storage.users.create(user);
      const updated = await storage.users.update(
        user.id,
        { usernameKey: undefined, passwordHash: undefined, disabled: true },
        BASE_TIME + 1,
      );
      expect(updated).toEqual({ ...user, disabled: true, updatedAt: BASE_TIME + 1 });
      expect(await storage.users.findByUsernameKey(user.usernameKey)).toEqual({
        ...user,
        disabled: true,
        updatedAt: BASE_TIME + 1,
      });
    });

    it("update to a taken usernameKey returns null and changes nothing", async () => {
      const storage = await makeStorage();
      const user = sampleUser();
      const other = sampleUser();
      await storage.users.create(user);
      await storage.users.create(other);
      expect(
        await storage.users.update(user.id, { usernameKey: other.usernameKey, disabled: true }, BASE_TIME + 1000),
      ).toBeNull();
      expect(await storage.users.findById(user.id)).toEqual(user);
      expect(await storage.users.findByUsernameKey(user.usernameKey)).toEqual(user);
      expect(await storage.users.findByUsernameKey(other.usernameKey)).toEqual(other);
    });

    it("update of an unknown user returns null", async () => {
      const storage = await makeStorage();
      expect(await storage.users.update(uniqueId("user"), { disabled: true }, BASE_TIME)).toBeNull();
    });

    it("PW-1, IM-1: replacePasswordHash writes only over the expected hash, and sets updatedAt", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage, { passwordHash: "imported:old" });
      expect(await storage.users.replacePasswordHash(userId, "imported:other", "$argon2id$new", BASE_TIME + 5)).toBe(false);
      expect((await storage.users.findById(userId))?.passwordHash).toBe("imported:old");
      expect(await storage.users.replacePasswordHash(userId, "imported:old", "$argon2id$new", BASE_TIME + 5)).toBe(true);
      const stored = await storage.users.findById(userId);
      expect(stored?.passwordHash).toBe("$argon2id$new");
      expect(stored?.updatedAt).toBe(BASE_TIME + 5);
      expect(await storage.users.replacePasswordHash(uniqueId("user"), "imported:old", "$argon2id$new", BASE_TIME)).toBe(false);
      const withoutPassword = await createUser(storage, { passwordHash: null });
      expect(await storage.users.replacePasswordHash(withoutPassword, "", "$argon2id$new", BASE_TIME)).toBe(false);
      expect((await storage.users.findById(withoutPassword))?.passwordHash).toBeNull();
    });

    it("PW-1, IM-1: of 20 concurrent replacePasswordHash calls over one expected hash, exactly one writes", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage, { passwordHash: "imported:old" });
      const written = await concurrently(20, (index) =>
        storage.users.replacePasswordHash(userId, "imported:old", `$argon2id$${index}`, BASE_TIME),
      );
      expect(written.filter(Boolean)).toHaveLength(1);
      expect((await storage.users.findById(userId))?.passwordHash).toBe(`$argon2id$${written.indexOf(true)}`);
    });

    it("TV-1: incrementTokenVersion only grows and sets updatedAt", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage, { tokenVersion: 7 });
      expect(await storage.users.incrementTokenVersion(userId, BASE_TIME + 1)).toBe(8);
      expect(await storage.users.incrementTokenVersion(userId, BASE_TIME + 2)).toBe(9);
      const stored = await storage.users.findById(userId);
      expect(stored?.tokenVersion).toBe(9);
      expect(stored?.updatedAt).toBe(BASE_TIME + 2);
    });

    it("TV-1: 20 concurrent incrementTokenVersion calls add exactly 20, each seeing its own value", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const versions = await concurrently(20, () => storage.users.incrementTokenVersion(userId, BASE_TIME));
      expect([...versions].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
      expect((await storage.users.findById(userId))?.tokenVersion).toBe(20);
    });

    it("incrementTokenVersion of an unknown user returns null", async () => {
      const storage = await makeStorage();
      expect(await storage.users.incrementTokenVersion(uniqueId("user"), BASE_TIME)).toBeNull();
    });

    it("TV-1: incrementTokenVersionsBySource raises every user of that source by one, and no other", async () => {
      const storage = await makeStorage();
      const first = await createUser(storage, { source: "directory", tokenVersion: 3 });
      const second = await createUser(storage, { source: "directory" });
      const local = await createUser(storage, { source: "local", tokenVersion: 3 });
      const raised = await storage.users.incrementTokenVersionsBySource("directory", BASE_TIME + 5);
      // Other tests may share this storage and hold directory users of their own.
      expect(raised >= 2).toBe(true);
      const versionOf = async (id: string) => {
        const user = await storage.users.findById(id);
        return { tokenVersion: user?.tokenVersion, updatedAt: user?.updatedAt };
      };
      expect(await versionOf(first)).toEqual({ tokenVersion: 4, updatedAt: BASE_TIME + 5 });
      expect(await versionOf(second)).toEqual({ tokenVersion: 1, updatedAt: BASE_TIME + 5 });
      expect(await versionOf(local)).toEqual({ tokenVersion: 3, updatedAt: BASE_TIME });
    });

    it("TV-1: 10 concurrent incrementTokenVersionsBySource calls add exactly 10 to each user of the source", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage, { source: "directory" });
      const counts = await concurrently(10, () => storage.users.incrementTokenVersionsBySource("directory", BASE_TIME + 1));
      expect(counts.every((count) => count >= 1)).toBe(true);
      expect((await storage.users.findById(userId))?.tokenVersion).toBe(10);
    });

    it("records are copied in, and copied or frozen out: mutating an argument or a result changes nothing stored", async () => {
      const storage = await makeStorage();
      const user = sampleUser({ roles: ["member"] });
      const original = structuredClone(user);
      await storage.users.create(user);
      user.roles.push("admin");
      user.tokenVersion = 99;
      const found = await storage.users.findById(original.id);
      expect(found).toEqual(original);
      if (found) {
        tryToMutate(() => found.roles.push("admin"));
        tryToMutate(() => {
          found.disabled = true;
        });
      }
      const updated = await storage.users.update(original.id, { username: "Renamed" }, BASE_TIME + 1);
      tryToMutate(() => updated?.roles.push("owner"));
      expect(await storage.users.findById(original.id)).toEqual({ ...original, username: "Renamed", updatedAt: BASE_TIME + 1 });
      expect(await storage.users.findByUsernameKey(original.usernameKey)).toEqual({
        ...original,
        username: "Renamed",
        updatedAt: BASE_TIME + 1,
      });
    });
  });
}
