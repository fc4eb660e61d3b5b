import type { TotpRecord } from "../../storage/types.js";
import { type SuiteContext, concurrently, countWhere } from "./harness.js";
import { BASE_TIME, createUser, sampleTotp, uniqueHash, uniqueId } from "./samples.js";

/** Registers the `totp` suite: pending and enabled factors, the once-per-step rule (TOTP-4), and replacing a sealed secret (KR-2). */
export function totpSuite({ test: { describe, it, expect }, makeStorage }: SuiteContext): void {
  describe("totp", () => {
    it("putPending stores a pending factor that get returns; get of an unknown user is null", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const record = sampleTotp(userId);
      expect(await storage.totp.putPending(record)).toBe(true);
      expect(await storage.totp.get(userId)).toEqual(record);
      expect(await storage.totp.get(uniqueId("user"))).toBeNull();
    });

    it("putPending replaces a pending factor", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      await storage.totp.putPending(sampleTotp(userId));
      const replacement = sampleTotp(userId, { createdAt: BASE_TIME + 5 });
      expect(await storage.totp.putPending(replacement)).toBe(true);
      expect(await storage.totp.get(userId)).toEqual(replacement);
    });

    it("putPending refuses when a factor is enabled and keeps the enabled one", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const record = sampleTotp(userId);
      await storage.totp.putPending(record);
      expect(await storage.totp.enable(userId)).toBe(true);
      expect(await storage.totp.putPending(sampleTotp(userId))).toBe(false);
      expect(await storage.totp.get(userId)).toEqual({ ...record, enabled: true });
    });

    it("TOTP-5: 20 users putting a pending factor at once each store theirs (no writer waits on another user's factor)", async () => {
      const storage = await makeStorage();
      const records = await Promise.all(Array.from({ length: 20 }, async () => sampleTotp(await createUser(storage))));
      const results = await concurrently(20, (index) => storage.totp.putPending(records[index] as TotpRecord));
      expect(results).toEqual(records.map(() => true));
      for (const record of records) expect(await storage.totp.get(record.userId)).toEqual(record);
    });

    it("enable is false with nothing pending, and false once already enabled", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      expect(await storage.totp.enable(userId)).toBe(false);
      expect(await storage.totp.get(userId)).toBeNull();
      await storage.totp.putPending(sampleTotp(userId));
      expect(await storage.totp.enable(userId)).toBe(true);
      expect(await storage.totp.enable(userId)).toBe(false);
    });

    it("ST-1: 20 concurrent enable calls give exactly one winner", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      await storage.totp.putPending(sampleTotp(userId));
      const results = await concurrently(20, () => storage.totp.enable(userId));
      expect(countWhere(results, (enabled) => enabled)).toBe(1);
      expect((await storage.totp.get(userId))?.enabled).toBe(true);
    });

    it("TOTP-4: advanceStep accepts a step once and refuses any step at or below the last used one", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      await storage.totp.putPending(sampleTotp(userId));
      await storage.totp.enable(userId);
      expect(await storage.totp.advanceStep(userId, 100)).toBe(true);
      expect(await storage.totp.advanceStep(userId, 100)).toBe(false);
      expect(await storage.totp.advanceStep(userId, 99)).toBe(false);
      expect((await storage.totp.get(userId))?.lastUsedStep).toBe(100);
      expect(await storage.totp.advanceStep(userId, 102)).toBe(true);
      expect(await storage.totp.advanceStep(userId, 101)).toBe(false);
      expect((await storage.totp.get(userId))?.lastUsedStep).toBe(102);
    });

    it("advanceStep of an unknown user is false", async () => {
      const storage = await makeStorage();
      expect(await storage.totp.advanceStep(uniqueId("user"), 100)).toBe(false);
    });

    it("TOTP-4, ST-1: 20 concurrent advanceStep calls with the same step give exactly one winner", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      await storage.totp.putPending(sampleTotp(userId));
      await storage.totp.enable(userId);
      const results = await concurrently(20, () => storage.totp.advanceStep(userId, 56_666_666));
      expect(countWhere(results, (accepted) => accepted)).toBe(1);
      expect((await storage.totp.get(userId))?.lastUsedStep).toBe(56_666_666);
    });

    it("KR-2: replaceSecret swaps the sealed secret only while it is the one expected, keeping enabled and lastUsedStep", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const record = sampleTotp(userId);
      await storage.totp.putPending(record);
      await storage.totp.enable(userId);
      await storage.totp.advanceStep(userId, 100);
      const next = { keyId: "key-2", sealed: uniqueHash() };
      expect(await storage.totp.replaceSecret(userId, { keyId: "key-2", sealed: record.secret.sealed }, next)).toBe(false);
      expect(await storage.totp.replaceSecret(userId, { keyId: "key-1", sealed: uniqueHash() }, next)).toBe(false);
      expect(await storage.totp.get(userId)).toEqual({ ...record, enabled: true, lastUsedStep: 100 });
      expect(await storage.totp.replaceSecret(userId, record.secret, next)).toBe(true);
      expect(await storage.totp.get(userId)).toEqual({ ...record, secret: next, enabled: true, lastUsedStep: 100 });
      expect(await storage.totp.replaceSecret(userId, record.secret, { keyId: "key-3", sealed: uniqueHash() })).toBe(false);
      expect((await storage.totp.get(userId))?.secret).toEqual(next);
    });

    it("KR-2: replaceSecret of a factor removed, or set up again, since it was read writes nothing", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const record = sampleTotp(userId);
      await storage.totp.putPending(record);
      const replacement = sampleTotp(userId, { createdAt: BASE_TIME + 5 });
      await storage.totp.putPending(replacement);
      expect(await storage.totp.replaceSecret(userId, record.secret, { keyId: "key-2", sealed: uniqueHash() })).toBe(false);
      expect(await storage.totp.get(userId)).toEqual(replacement);
      await storage.totp.remove(userId);
      expect(await storage.totp.replaceSecret(userId, replacement.secret, { keyId: "key-2", sealed: uniqueHash() })).toBe(false);
      expect(await storage.totp.get(userId)).toBeNull();
      expect(await storage.totp.replaceSecret(uniqueId("user"), record.secret, replacement.secret)).toBe(false);
    });

    it("KR-2, ST-1: 20 concurrent replaceSecret calls from one expected secret give exactly one winner", async () => {
      const storage = await makeStorage();
      const userId = await createUser(storage);
      const record = sampleTotp(userId);
      await storage.totp.putPending(record);
      const nexts = Array.from({ length: 20 }, () => ({ keyId: "key-2", sealed: uniqueHash() }));
      const results = await concurrently(20, (index) =>
        storage.totp.replaceSecret(userId, record.secret, nexts[index] as TotpRecord["secret"]),
      );
      expect(countWhere(results, (replaced) => replaced)).toBe(1);
      expect((await storage.totp.get(userId))?.secret).toEqual(nexts[results.indexOf(true)]);
    });

    it("remove deletes a pending or enabled factor and says whether one existed", async () => {
      const storage = await makeStorage();
      const pendingUser = await createUser(storage);
      const enabledUser = await createUser(storage);
      await storage.totp.putPending(sampleTotp(pendingUser));
      await storage.totp.putPending(sampleTotp(enabledUser));
      await storage.totp.enable(enabledUser);
      expect(await storage.totp.remove(pendingUser)).toBe(true);
      expect(await storage.totp.remove(enabledUser)).toBe(true);
      expect(await storage.totp.get(pendingUser)).toBeNull();
      expect(await storage.totp.get(enabledUser)).toBeNull();
      expect(await storage.totp.remove(enabledUser)).toBe(false);
      expect(await storage.totp.putPending(sampleTotp(enabledUser))).toBe(true);
    });
  });
}
