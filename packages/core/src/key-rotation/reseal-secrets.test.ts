import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox } from "../crypto/secret-box.js";
import { directoryPolicyKey, readDirectorySettings, settingsFrom, writeDirectorySettings } from "../directory/policy-store.js";
import {
  type Clock,
  addUser,
  authError,
  codeAt,
  decodeBase32,
  enrolTotp,
  goodPassword,
  makeAuth,
  makeClock,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { beginTotpSetup, disableTotp, enableTotp } from "../flows/totp-enrolment.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { memoryStorage } from "../storage/memory.js";
import type { EncryptedSecret, Storage, TotpRecord } from "../storage/types.js";
import { sealTotpSecret } from "../totp/totp-secret.js";
import { type UnopenableValue, resealSecrets } from "./reseal-secrets.js";

const k1 = randomBytes(32).toString("base64url");
const k2 = randomBytes(32).toString("base64url");
const bindPassword = "directory reader password ⚷";
const policy = {
  enabled: true,
  serverUrl: "ldaps://ldap.example.com",
  bindDn: "cn=reader,dc=example,dc=com",
  bindPassword,
  userBaseDn: "ou=people,dc=example,dc=com",
};

/** An instance over `storage` whose keyring is `keys`, sealing with `current`. */
const authOver = (storage: Storage, clock: Clock, current: string, keys: Record<string, string>, recoveryCodesAtSetup = false) =>
  makeAuth({
    storage,
    clock,
    secrets: { signing: "reseal-test-signing-secret-0123456789abcdef", encryption: { current, keys } },
    totp: { recoveryCodesAtSetup } as never,
  }).auth;

/**
 * A service that ran under k1 alone: alice and bob with TOTP on, carol with a setup pending, the
 * directory policy saved with its bind password; then the rotation's instance, k2 current and k1 still listed.
 */
async function rotatedService(options: { storage?: Storage; recoveryCodesAtSetup?: boolean } = {}) {
  const storage = options.storage ?? memoryStorage();
  const clock = makeClock();
  const before = authOver(storage, clock, "k1", { k1 }, options.recoveryCodesAtSetup);
  const ids = { alice: await addUser(before, "alice"), bob: await addUser(before, "bob"), carol: await addUser(before, "carol") };
  const secrets = {
    alice: (await enrolTotp(before, ids.alice)).secret,
    bob: (await enrolTotp(before, ids.bob)).secret,
  };
  const carolSetup = await beginTotpSetup(before, { userId: ids.carol, password: goodPassword });
  await writeDirectorySettings(before, await settingsFrom(before, policy));
  clock.advance(30_000);
  const auth = authOver(storage, clock, "k2", { k1, k2 }, options.recoveryCodesAtSetup);
  return { storage, clock, auth, ids, secrets, carolSetup, onlyK2: () => authOver(storage, clock, "k2", { k2 }) };
}

/** What storage holds sealed: each user's factor, and the saved policy. */
async function sealedState(storage: Storage, userIds: string[]) {
  return {
    totp: await Promise.all(userIds.map((id) => storage.totp.get(id))),
    policy: await storage.settings.get(directoryPolicyKey),
  };
}

const keyIdsOf = async (storage: Storage, userIds: string[]) =>
  Promise.all(userIds.map(async (id) => (await storage.totp.get(id))?.secret.keyId ?? null));

async function signInWithTotp(auth: ReturnType<typeof authOver>, username: string, code: string) {
  const result = await login(auth, { username, password: goodPassword });
  if (result.status !== "totp_required") throw new Error("expected a second-factor request");
  return verifyTotp(auth, { tempToken: result.tempToken, code });
}

describe("resealSecrets", () => {
  it("KR-1: after a k1 → k2 rotation every secret sealed under k1 is sealed again under k2 and works with k1 gone", async () => {
    const service = await rotatedService();
    const { auth, storage, ids, secrets, clock } = service;
    const report = await resealSecrets(auth);
    expect(report).toEqual({
      dryRun: false,
      current: "k2",
      sealedWith: { k1: 4 },
      resealed: 4,
      stillOld: {},
      failed: 0,
      keptPending: 0,
      byKind: {
        totpSecret: { sealedWith: { k1: 2 }, resealed: 2, stillOld: {}, failed: 0 },
        pendingTotpSecret: { sealedWith: { k1: 1 }, resealed: 1, stillOld: {}, failed: 0 },
        directoryBindPassword: { sealedWith: { k1: 1 }, resealed: 1, stillOld: {}, failed: 0 },
      },
    });
    expect(await keyIdsOf(storage, [ids.alice, ids.bob, ids.carol])).toEqual(["k2", "k2", "k2"]);
    const withoutK1 = service.onlyK2();
    await signInWithTotp(withoutK1, "alice", codeAt(secrets.alice, clock.now));
    await signInWithTotp(withoutK1, "bob", codeAt(secrets.bob, clock.now));
    const carolSecret = decodeBase32(service.carolSetup.secret);
    await enableTotp(withoutK1, { userId: ids.carol, password: goodPassword, code: codeAt(carolSecret, clock.now) });
    expect((await storage.totp.get(ids.carol))?.enabled).toBe(true);
    expect((await readDirectorySettings(withoutK1)).bindPassword).toBe(bindPassword);
  });

  it("KR-1: the report holds counts and key ids only, never a secret, sealed or opened", async () => {
    const { auth, storage, ids } = await rotatedService();
    const before = await sealedState(storage, [ids.alice, ids.bob, ids.carol]);
    const text = JSON.stringify(await resealSecrets(auth));
    for (const record of before.totp) expect(text).not.toContain((record as TotpRecord).secret.sealed);
    expect(text).not.toContain((before.policy as { bindPassword: EncryptedSecret }).bindPassword.sealed);
    expect(text).not.toContain("password");
  });

  it("KR-1: a dry run opens and counts, and changes nothing", async () => {
    const { auth, storage, ids } = await rotatedService();
    const before = await sealedState(storage, [ids.alice, ids.bob, ids.carol]);
    const report = await resealSecrets(auth, { dryRun: true });
    expect(report).toMatchObject({ dryRun: true, sealedWith: { k1: 4 }, resealed: 0, stillOld: { k1: 4 }, failed: 0 });
    expect(await sealedState(storage, [ids.alice, ids.bob, ids.carol])).toEqual(before);
  });

  it("KR-1: a second run reseals nothing and reports every value under the current key", async () => {
    const { auth } = await rotatedService();
    await resealSecrets(auth);
    expect(await resealSecrets(auth)).toMatchObject({ sealedWith: { k2: 4 }, resealed: 0, stillOld: {}, failed: 0 });
  });

  it("KR-1: users are read a page at a time, every one visited whatever the page size", async () => {
    const { auth } = await rotatedService();
    expect(await resealSecrets(auth, { batchSize: 1 })).toMatchObject({ sealedWith: { k1: 4 }, resealed: 4, stillOld: {} });
    expect(await resealSecrets(auth, { batchSize: 1000 })).toMatchObject({ resealed: 0, stillOld: {} });
    for (const batchSize of [0, 1001, 2.5]) {
      expect((await authError(resealSecrets(auth, { batchSize }))).code).toBe(42200);
    }
  });

  it("KR-2: a value no listed key opens (an unknown key id, or altered) is reported and left as it is", async () => {
    const { auth, storage, ids } = await rotatedService();
    const retired = createSecretBox(randomBytes(32).toString("hex"), (size) => new Uint8Array(randomBytes(size)));
    const dave = await addUser(auth, "dave");
    const unknown = { ...retired.seal(randomBytes(20), `portcullis:totp:${dave}`), keyId: "k0" };
    await storage.totp.putPending({ userId: dave, secret: unknown, enabled: false, lastUsedStep: -1, createdAt: auth.now() });
    await storage.totp.enable(dave);
    const alice = (await storage.totp.get(ids.alice)) as TotpRecord;
    const altered = { keyId: "k1", sealed: `${alice.secret.sealed.slice(0, -2)}AA` };
    const bob = (await storage.totp.get(ids.bob)) as TotpRecord;
    await storage.totp.replaceSecret(ids.bob, bob.secret, altered);
    const heard: UnopenableValue[] = [];
    const report = await resealSecrets(auth, { onUnopenable: (value) => heard.push(value) });
    expect(report).toMatchObject({ sealedWith: { k0: 1, k1: 4 }, resealed: 3, stillOld: { k0: 1, k1: 1 }, failed: 2 });
    expect(heard).toEqual(
      expect.arrayContaining([
        { kind: "totpSecret", owner: dave, keyId: "k0" },
        { kind: "totpSecret", owner: ids.bob, keyId: "k1" },
      ]),
    );
    expect((await storage.totp.get(dave))?.secret).toEqual(unknown);
    expect((await storage.totp.get(ids.bob))?.secret).toEqual(altered);
    expect(await resealSecrets(auth)).toMatchObject({ resealed: 0, stillOld: { k0: 1, k1: 1 }, failed: 2 });
  });

  it("KR-2: TOTP turned off while its secret is resealed stays off; a policy saved meanwhile is kept", async () => {
    const { storage, clock, ids, secrets } = await rotatedService();
    let meanwhile: (() => Promise<void>) | null = null;
    const racing: Storage = {
      ...storage,
      totp: {
        ...storage.totp,
        async replaceSecret(userId, expected, next) {
          if (userId === ids.alice && meanwhile) await meanwhile();
          return storage.totp.replaceSecret(userId, expected, next);
        },
      },
      settings: {
        ...storage.settings,
        async replace(key, expected, value, now) {
          await writeDirectorySettings(auth, await settingsFrom(auth, { ...policy, bindPassword: "the new password" }));
          return storage.settings.replace(key, expected, value, now);
        },
      },
    };
    const auth = authOver(racing, clock, "k2", { k1, k2 });
    meanwhile = async () => {
      meanwhile = null;
      await disableTotp(auth, { userId: ids.alice, password: goodPassword, code: codeAt(secrets.alice, clock.now) });
    };
    const report = await resealSecrets(auth);
    expect(report).toMatchObject({ sealedWith: { k1: 4 }, resealed: 2, stillOld: {}, failed: 0 });
    expect(await storage.totp.get(ids.alice)).toBeNull();
    expect((await storage.totp.get(ids.bob))?.secret.keyId).toBe("k2");
    expect((await readDirectorySettings(authOver(storage, clock, "k2", { k2 }))).bindPassword).toBe("the new password");
  });

  it("KR-2: a pending factor enabled while it is resealed stays enabled, with its last step", async () => {
    const { storage, clock, ids, carolSetup } = await rotatedService();
    const carolSecret = decodeBase32(carolSetup.secret);
    let enabled = false;
    const racing: Storage = {
      ...storage,
      totp: {
        ...storage.totp,
        async replaceSecret(userId, expected, next) {
          if (userId === ids.carol && !enabled) {
            enabled = true;
            await enableTotp(auth, { userId, password: goodPassword, code: codeAt(carolSecret, clock.now) });
          }
          return storage.totp.replaceSecret(userId, expected, next);
        },
      },
    };
    const auth = authOver(racing, clock, "k2", { k1, k2 });
    await resealSecrets(auth);
    const carol = (await storage.totp.get(ids.carol)) as TotpRecord;
    expect(carol).toMatchObject({ enabled: true, secret: { keyId: "k2" } });
    expect(carol.lastUsedStep).toBeGreaterThan(-1);
  });

  /**
   * The rotated service's storage where, before each of the first `times` reseals of carol's TOTP
   * secret, an old instance (under k1 alone) writes a new one for her: a value changed meanwhile.
   */
  async function changingCarolsSecret(times: number) {
    const { storage, clock, ids } = await rotatedService();
    const oldInstance = authOver(storage, clock, "k1", { k1 });
    const changes = { count: 0 };
    const racing: Storage = {
      ...storage,
      totp: {
        ...storage.totp,
        async replaceSecret(userId, expected, next) {
          if (userId === ids.carol && changes.count < times) {
            changes.count += 1;
            await storage.totp.putPending({
              userId,
              secret: sealTotpSecret(oldInstance, userId, randomBytes(20)),
              enabled: false,
              lastUsedStep: -1,
              createdAt: clock.now,
            });
          }
          return storage.totp.replaceSecret(userId, expected, next);
        },
      },
    };
    return { storage, clock, ids, racing, changes };
  }

  it("KR-2: a value changed meanwhile to one still under an old key is taken up again", async () => {
    const { storage, clock, ids, racing } = await changingCarolsSecret(1);
    const report = await resealSecrets(authOver(racing, clock, "k2", { k1, k2 }));
    expect(report).toMatchObject({ sealedWith: { k1: 4 }, resealed: 4, stillOld: {} });
    expect((await storage.totp.get(ids.carol))?.secret.keyId).toBe("k2");
  });

  it("KR-2: a value changed back under an old key at every write is taken up three times, then reported as still old", async () => {
    const { storage, clock, ids, racing, changes } = await changingCarolsSecret(Number.POSITIVE_INFINITY);
    const report = await resealSecrets(authOver(racing, clock, "k2", { k1, k2 }));
    expect(changes.count).toBe(3);
    expect(report).toMatchObject({ sealedWith: { k1: 4 }, resealed: 3, stillOld: { k1: 1 }, failed: 0 });
    expect((await storage.totp.get(ids.carol))?.secret.keyId).toBe("k1");
  });

  it("KR-1, RC-4: with totp.recoveryCodesAtSetup a pending setup is kept under its key, and the codes it showed still work", async () => {
    const service = await rotatedService({ recoveryCodesAtSetup: true });
    const { auth, storage, ids, clock, carolSetup } = service;
    const report = await resealSecrets(auth);
    expect(report).toMatchObject({ sealedWith: { k1: 4 }, resealed: 3, stillOld: { k1: 1 }, keptPending: 1 });
    expect(report.byKind.pendingTotpSecret).toEqual({ sealedWith: { k1: 1 }, resealed: 0, stillOld: { k1: 1 }, failed: 0 });
    const carolSecret = decodeBase32(carolSetup.secret);
    await enableTotp(auth, { userId: ids.carol, password: goodPassword, code: codeAt(carolSecret, clock.now) });
    expect(await resealSecrets(auth)).toMatchObject({ resealed: 1, stillOld: {}, keptPending: 0 });
    const result = await login(service.onlyK2(), { username: "carol", password: goodPassword });
    if (result.status !== "totp_required") throw new Error("expected a second-factor request");
    await useRecoveryCode(service.onlyK2(), {
      tempToken: result.tempToken,
      recoveryCode: carolSetup.recoveryCodes?.[0] as string,
    });
    expect((await storage.totp.get(ids.carol))?.secret.keyId).toBe("k2");
  });
});
