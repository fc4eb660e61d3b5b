// Issue 43 item 2 on every store: finishing an encryption-key rotation (resealSecrets, KR-1, KR-2)
// on memory storage, PGlite, PostgreSQL and MariaDB. Two runs at once reseal each value once
// between them; TOTP turned off by its users while a run reseals stays off; every factor left is
// sealed under the new key and its codes pass with the old key gone.
import { randomBytes } from "node:crypto";
import {
  type Auth,
  type EncryptionKeyring,
  type Storage,
  beginTotpSetup,
  createAuth,
  createUser,
  disableTotp,
  enableTotp,
  login,
  resealSecrets,
  saveDirectoryPolicy,
  verifyTotp,
} from "@portcullis/core";
import { totpCode } from "@portcullis/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generousThrottle, testAudience, testIssuer, testPassword } from "../fixtures/auth.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type Store, stores } from "./stores.js";

const k1 = randomBytes(32).toString("base64url");
const k2 = randomBytes(32).toString("base64url");

/**
 * The instances' clock, frozen: the codes below are for the step before it, this moment and the
 * step after, so a busy machine crossing a 30-second step between making a code and checking it
 * changes nothing.
 */
const now = Date.now();

const authOn = (storage: Storage, encryption: EncryptionKeyring): Auth =>
  createAuth({
    now: () => now,
    storage,
    issuer: testIssuer,
    audience: testAudience,
    secrets: { signing: "key-rotation-storage-signing-secret-0123456789", encryption },
    throttle: generousThrottle,
    sweepInterval: false,
  });

for (const store of stores) {
  const describeStore = describeNeedingService("test/storage/key-rotation.test.ts", await store.missing());

  describeStore(`resealing after a key rotation on ${store.name} (KR-1, KR-2)`, () => {
    let opened: Awaited<ReturnType<Store["open"]>> | undefined;
    let storage: Storage;
    const users: { id: string; username: string; secret: string }[] = [];

    beforeAll(async () => {
      opened = await store.open();
      storage = opened.storage;
      const before = authOn(storage, { current: "k1", keys: { k1 } });
      for (let index = 0; index < 12; index += 1) {
        const username = `rotation-${index}-${randomBytes(3).toString("hex")}`;
        const { id } = await createUser(before, { username, password: testPassword });
        const setup = await beginTotpSetup(before, { userId: id, password: testPassword });
        await enableTotp(before, {
          userId: id,
          password: testPassword,
          code: totpCode({ secret: setup.secret, at: now - 30_000 }),
        });
        users.push({ id, username, secret: setup.secret });
      }
      await saveDirectoryPolicy(before, {
        enabled: true,
        serverUrl: "ldaps://ldap.example.com",
        bindDn: "cn=reader,dc=example,dc=com",
        bindPassword: "directory reader password",
        userBaseDn: "ou=people,dc=example,dc=com",
      });
    });

    afterAll(async () => {
      await opened?.close();
    });

    it("KR-1, KR-2: two runs at once while a third of the users turn TOTP off: each value is resealed once, what was turned off stays off, the rest opens under k2 alone", async () => {
      const rotated = authOn(storage, { current: "k2", keys: { k1, k2 } });
      const leaving = users.filter((_, index) => index % 3 === 0);
      const [first, second] = await Promise.all([
        resealSecrets(rotated, { batchSize: 2 }),
        resealSecrets(rotated, { batchSize: 5 }),
        ...leaving.map((user) =>
          disableTotp(rotated, { userId: user.id, password: testPassword, code: totpCode({ secret: user.secret, at: now }) }),
        ),
      ]);
      const staying = users.filter((user) => !leaving.includes(user));
      expect(first?.failed).toBe(0);
      expect(second?.failed).toBe(0);
      expect((first?.resealed ?? 0) + (second?.resealed ?? 0)).toBeGreaterThanOrEqual(staying.length + 1);
      expect((first?.resealed ?? 0) + (second?.resealed ?? 0)).toBeLessThanOrEqual(users.length + 1);
      for (const user of leaving) expect(await storage.totp.get(user.id)).toBeNull();
      for (const user of staying) expect((await storage.totp.get(user.id))?.secret.keyId).toBe("k2");

      const after = await resealSecrets(rotated);
      expect(after).toMatchObject({ sealedWith: { k2: staying.length + 1 }, resealed: 0, stillOld: {}, failed: 0 });
      const withoutK1 = authOn(storage, { current: "k2", keys: { k2 } });
      for (const user of staying.slice(0, 2)) {
        const result = await login(withoutK1, { username: user.username, password: testPassword });
        if (result.status !== "totp_required") throw new Error(result.status);
        await verifyTotp(withoutK1, {
          tempToken: result.tempToken,
          code: totpCode({ secret: user.secret, at: now + 30_000 }),
        });
      }
      expect(await saveDirectoryPolicy(withoutK1, { bindPassword: "" })).toMatchObject({ credentialConfigured: true });
    });
  });
}
