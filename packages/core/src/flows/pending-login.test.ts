import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { sha256 } from "../crypto/random.js";
import { ErrorCode } from "../errors/codes.js";
import { memoryStorage } from "../storage/memory.js";
import type { ChallengeRecord } from "../storage/types.js";
import { changePassword } from "./change-password.js";
import {
  type Harness,
  addUser,
  authError,
  codeAt,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  signingSecret,
  slowStorage,
  tally,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { useRecoveryCode } from "./use-recovery-code.js";
import { verifyTotp } from "./verify-totp.js";

/** A harness over memory storage that answers every call after a short delay, like a database. */
function slowHarness(): Harness {
  const storage = memoryStorage();
  return { ...makeAuth({ storage: slowStorage(storage), throttle: generousThrottle }), storage };
}

async function totpUser(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const enrolled = await enrolTotp(harness.auth, userId);
  harness.clock.advance(30_000);
  return { userId, ...enrolled };
}

async function tempTokenOf(harness: Harness, username: string): Promise<string> {
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "totp_required") throw new Error("expected a second-factor request");
  return result.tempToken;
}

describe("pending second-factor logins over a storage with latency", () => {
  it("TMP-4: 40 concurrent wrong TOTP codes on one temporary token are evaluated at most 5 times", async () => {
    const harness = slowHarness();
    const { secret } = await totpUser(harness, "slow-totp");
    const tempToken = await tempTokenOf(harness, "slow-totp");
    const opened = vi.spyOn(harness.auth.secretBox, "open");
    const wrong = wrongCodeAt(secret, harness.clock.now);
    const results = await tally(Array.from({ length: 40 }, () => verifyTotp(harness.auth, { tempToken, code: wrong })));
    expect(opened.mock.calls.length).toBeLessThanOrEqual(5);
    expect(results.get(40103)).toBe(5);
    expect(results.get(40100)).toBe(35);
    expect(await tally([verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) })])).toEqual(
      new Map([[40100, 1]]),
    );
  });

  it("TMP-4: 40 concurrent wrong recovery codes on one temporary token are evaluated at most 5 times", async () => {
    const harness = slowHarness();
    await totpUser(harness, "slow-rc");
    const tempToken = await tempTokenOf(harness, "slow-rc");
    const has = vi.spyOn(harness.storage.recoveryCodes, "has");
    const consume = vi.spyOn(harness.storage.recoveryCodes, "consume");
    const results = await tally(
      Array.from({ length: 40 }, (_, index) =>
        useRecoveryCode(harness.auth, { tempToken, recoveryCode: `AAAA-AAAA-AAAA-${String(1000 + index)}` }),
      ),
    );
    expect(has.mock.calls.length + consume.mock.calls.length).toBeLessThanOrEqual(5);
    expect(results.get(40103)).toBe(5);
    expect(results.get(40100)).toBe(35);
  });

  it("TMP-3, RC-3: all ten recovery codes sent at once on one temporary token sign in once and spend one code", async () => {
    const harness = slowHarness();
    const { userId, recoveryCodes } = await totpUser(harness, "ten-codes");
    const tempToken = await tempTokenOf(harness, "ten-codes");
    const results = await tally(recoveryCodes.map((recoveryCode) => useRecoveryCode(harness.auth, { tempToken, recoveryCode })));
    expect(results.get("fulfilled")).toBe(1);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(9);
  });

  it("TMP-3: a TOTP code and two recovery codes submitted at once on one temporary token give one session and spend one factor", async () => {
    const harness = slowHarness();
    const { userId, secret, recoveryCodes } = await totpUser(harness, "mixed");
    const tempToken = await tempTokenOf(harness, "mixed");
    const code = codeAt(secret, harness.clock.now);
    const results = await tally([
      verifyTotp(harness.auth, { tempToken, code }),
      useRecoveryCode(harness.auth, { tempToken, recoveryCode: recoveryCodes[0] as string }),
      useRecoveryCode(harness.auth, { tempToken, recoveryCode: recoveryCodes[1] as string }),
    ]);
    expect(results.get("fulfilled")).toBe(1);
    expect(results.get(40100)).toBe(2);
    const sessions = harness.events.filter((event) => event.type === "login.succeeded" && event.userId === userId);
    expect(sessions).toHaveLength(1);
    const codesLeft = await harness.storage.recoveryCodes.count(userId);
    const stepSpent = (await harness.storage.totp.get(userId))?.lastUsedStep === Math.floor(harness.clock.now / 30_000);
    expect(codesLeft + (stepSpent ? 0 : 1)).toBe(10);
  });
});

describe("opening a pending login", () => {
  it("RL-3: second-factor attempts count against the client address, across temporary tokens and factors", async () => {
    const harness = makeAuth({ throttle: { ...generousThrottle, ip: [{ limit: 3, window: "1m" }] } });
    const { secret, recoveryCodes } = await totpUser(harness, "address-limited");
    const ip = "198.51.100.9";
    const wrong = wrongCodeAt(secret, harness.clock.now);
    const first = await tempTokenOf(harness, "address-limited");
    expect(await outcome(verifyTotp(harness.auth, { tempToken: first, code: wrong, ip }))).toBe(40103);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: first, code: wrong, ip }))).toBe(40103);
    const second = await tempTokenOf(harness, "address-limited");
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: second, recoveryCode: "AAAA-AAAA-AAAA-AAAA", ip }))).toBe(
      40103,
    );
    const code = codeAt(secret, harness.clock.now);
    const throttled = await authError(verifyTotp(harness.auth, { tempToken: second, code, ip }));
    expect(throttled.code).toBe(ErrorCode.TooManyAttempts);
    expect(throttled.retryAfterSeconds).toBe(60);
    const recoveryCode = recoveryCodes[0] as string;
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: second, recoveryCode, ip }))).toBe(42900);
    await verifyTotp(harness.auth, { tempToken: second, code, ip: "198.51.100.10" });
  });

  it("TMP-4: a user disabled in storage, even without a token version change, voids the temporary token at once", async () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const { userId, secret, recoveryCodes } = await totpUser(harness, "disabled-pending");
    const byCode = await tempTokenOf(harness, "disabled-pending");
    const byRecovery = await tempTokenOf(harness, "disabled-pending");
    await harness.storage.users.update(userId, { disabled: true }, harness.clock.now);
    const code = codeAt(secret, harness.clock.now);
    const recoveryCode = recoveryCodes[0] as string;
    const refused = await authError(verifyTotp(harness.auth, { tempToken: byCode, code }));
    expect({ code: refused.code, message: refused.message }).toEqual({
      code: ErrorCode.AuthenticationFailed,
      message: "The temporary token is invalid or expired",
    });
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: byRecovery, recoveryCode }))).toBe(40100);
    for (const tempToken of [byCode, byRecovery]) {
      expect(await harness.storage.challenges.find(sha256(tempToken), "totp_login", harness.clock.now)).toBeNull();
    }
    await harness.storage.users.update(userId, { disabled: false }, harness.clock.now);
    expect(await outcome(verifyTotp(harness.auth, { tempToken: byCode, code }))).toBe(40100);
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken: byRecovery, recoveryCode }))).toBe(40100);
    expect(await harness.storage.recoveryCodes.count(userId)).toBe(10);
    expect(harness.events.filter((event) => event.type === "login.succeeded")).toEqual([]);
  });

  it("TMP-4: the temporary token of a user gone from storage is refused and void", async () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const { userId, secret } = await totpUser(harness, "gone-pending");
    const tempToken = await tempTokenOf(harness, "gone-pending");
    const findById = harness.storage.users.findById.bind(harness.storage.users);
    const lookup = vi
      .spyOn(harness.storage.users, "findById")
      .mockImplementation(async (id) => (id === userId ? null : findById(id)));
    expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }))).toBe(40100);
    lookup.mockRestore();
    expect(await harness.storage.challenges.find(sha256(tempToken), "totp_login", harness.clock.now)).toBeNull();
  });

  it("TMP-4: a pending login keeps a keyed stamp of the password, never the hash; one stored before stamps is accepted as before", async () => {
    const harness = makeAuth();
    const { userId, secret } = await totpUser(harness, "stamped");
    const tempToken = await tempTokenOf(harness, "stamped");
    const stored = await harness.storage.challenges.find(sha256(tempToken), "totp_login", harness.clock.now);
    const hash = (await harness.storage.users.findById(userId))?.passwordHash as string;
    expect(stored?.data.passwordStamp).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(stored)).not.toContain(hash);
    expect(JSON.stringify(stored)).not.toContain(hash.split("$").at(-1));
    const { passwordStamp: _, ...unstamped } = stored?.data ?? {};
    await harness.storage.challenges.put({ ...(stored as ChallengeRecord), data: unstamped });
    await verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) });
  });

  it("TMP-4: the stamp differs for another password, and for another encryption key", async () => {
    const harness = makeAuth();
    const { secret } = await totpUser(harness, "restamped");
    const stampOf = async (auth: Harness["auth"], token: string) =>
      (await auth.storage.challenges.find(sha256(token), "totp_login", harness.clock.now))?.data.passwordStamp;
    const first = await stampOf(harness.auth, await tempTokenOf(harness, "restamped"));
    expect(await stampOf(harness.auth, await tempTokenOf(harness, "restamped"))).toBe(first);
    const userId = (await harness.storage.users.findByUsernameKey("restamped"))?.id as string;
    const totpCode = nextCode(harness, secret);
    await changePassword(harness.auth, { userId, currentPassword: goodPassword, newPassword: "another passphrase", totpCode });
    const after = await login(harness.auth, { username: "restamped", password: "another passphrase" });
    expect(after.status === "totp_required" && (await stampOf(harness.auth, after.tempToken))).not.toBe(first);
    const otherKey = makeAuth({
      storage: harness.storage,
      clock: harness.clock,
      secrets: { signing: signingSecret, encryption: randomBytes(32).toString("base64url") },
    });
    const elsewhere = await login(otherKey.auth, { username: "restamped", password: "another passphrase" });
    const stamps = [after, elsewhere].map(
      async (result) => result.status === "totp_required" && stampOf(otherKey.auth, result.tempToken),
    );
    const [here, there] = await Promise.all(stamps);
    expect(there).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(there).not.toBe(here);
  });

  it("TMP-4: the stamp is stable across releases: pending logins stamped as documented, with a password and without one, are accepted", async () => {
    // HMAC-SHA256 under HKDF-SHA256 of the key 00..1f (salt "portcullis", info "portcullis password
    // stamp v1"), first 16 bytes, base64url; computed once outside the library.
    const encryption = Buffer.from(Array.from({ length: 32 }, (_, index) => index)).toString("hex");
    const harness = makeAuth({ secrets: { signing: signingSecret, encryption } });
    const { userId, secret } = await totpUser(harness, "known-stamp");
    const ownHash = (await harness.storage.users.findById(userId))?.passwordHash as string;
    const known = [
      ["$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA", "o5VQKq9ldXKQ4y-1_vR5KQ"],
      [null, "jaaNSaAsjTQI-8E1qgCp_g"],
    ] as const;
    for (const [passwordHash, passwordStamp] of known) {
      const tempToken = await tempTokenOf(harness, "known-stamp");
      const stored = (await harness.storage.challenges.find(
        sha256(tempToken),
        "totp_login",
        harness.clock.now,
      )) as ChallengeRecord;
      await harness.storage.challenges.put({ ...stored, data: { ...stored.data, passwordStamp } });
      await harness.storage.users.update(userId, { passwordHash }, harness.clock.now);
      await verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) });
      await harness.storage.users.update(userId, { passwordHash: ownHash }, harness.clock.now);
    }
  });

  it("RL-1: a pending login stored before budgets were kept spends the account's budget, shared with the password", async () => {
    const harness = makeAuth({ throttle: { account: [{ limit: 3, window: "15m" }] } });
    const { secret } = await totpUser(harness, "unbudgeted");
    const tempToken = await tempTokenOf(harness, "unbudgeted");
    const stored = (await harness.storage.challenges.find(sha256(tempToken), "totp_login", harness.clock.now)) as ChallengeRecord;
    const { budget: _, ...unbudgeted } = stored.data;
    await harness.storage.challenges.put({ ...stored, data: unbudgeted });
    const wrong = wrongCodeAt(secret, harness.clock.now);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: wrong }))).toBe(40103);
    }
    expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }))).toBe(42900);
    expect(await outcome(login(harness.auth, { username: "unbudgeted", password: goodPassword }))).toBe(42900);
  });
});
