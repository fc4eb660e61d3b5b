import { describe, expect, it, vi } from "vitest";
import { memoryStorage } from "../storage/memory.js";
import {
  type Harness,
  addUser,
  codeAt,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
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
