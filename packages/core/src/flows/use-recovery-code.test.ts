import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { verifyAccessTokenClaims } from "../tokens/access-token.js";
import { hashRecoveryCode } from "../totp/recovery-codes.js";
import {
  type Harness,
  addUser,
  authError,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  outcome,
  tally,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { useRecoveryCode } from "./use-recovery-code.js";

async function tempTokenOf(harness: Harness, username: string): Promise<string> {
  const result = await login(harness.auth, { username, password: goodPassword });
  if (result.status !== "totp_required") throw new Error("expected a second-factor request");
  return result.tempToken;
}

describe("useRecoveryCode", () => {
  const harness = makeAuth({ throttle: generousThrottle });
  const user = (async () => {
    const userId = await addUser(harness.auth, "recovering");
    return { userId, ...(await enrolTotp(harness.auth, userId)) };
  })();

  it("RC-3: a recovery code completes the login once, with amr pwd and rc", async () => {
    const { recoveryCodes } = await user;
    const recoveryCode = recoveryCodes[0] as string;
    const tokens = await useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "recovering"), recoveryCode });
    const claims = await verifyAccessTokenClaims(tokens.accessToken, {
      keys: harness.auth.keys,
      issuer: harness.auth.config.issuer,
      audience: harness.auth.config.audience,
      now: harness.auth.now(),
      clockToleranceSeconds: 0,
    });
    expect(claims.amr).toEqual(["pwd", "otp", "mfa"]);
    const again = await authError(
      useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "recovering"), recoveryCode }),
    );
    expect(again.code).toBe(ErrorCode.SecondFactorFailed);
  });

  it("RC-3: dashes, spaces and case do not matter, and do not make a code reusable", async () => {
    const { recoveryCodes } = await user;
    const code = recoveryCodes[1] as string;
    const typed = ` ${code.replaceAll("-", " ").toLowerCase()} `;
    await useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "recovering"), recoveryCode: typed });
    const compact = code.replaceAll("-", "");
    expect(
      await outcome(
        useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "recovering"), recoveryCode: compact }),
      ),
    ).toBe(40103);
    const lowerCase = (recoveryCodes[2] as string).toLowerCase();
    await useRecoveryCode(harness.auth, { tempToken: await tempTokenOf(harness, "recovering"), recoveryCode: lowerCase });
  });

  it("RC-3: 20 concurrent uses of one code, each with its own temporary token, give exactly one success", async () => {
    const { recoveryCodes } = await user;
    const recoveryCode = recoveryCodes[3] as string;
    const tempTokens = await Promise.all(Array.from({ length: 20 }, () => tempTokenOf(harness, "recovering")));
    const results = await tally(tempTokens.map((tempToken) => useRecoveryCode(harness.auth, { tempToken, recoveryCode })));
    expect(results).toEqual(
      new Map<number | "fulfilled", number>([
        ["fulfilled", 1],
        [40103, 19],
      ]),
    );
  });

  it("RC-3: a malformed or unknown code is refused and keeps the temporary token usable", async () => {
    const { recoveryCodes } = await user;
    const tempToken = await tempTokenOf(harness, "recovering");
    for (const recoveryCode of ["not a code", "0000-0000-0000-0000", (recoveryCodes[4] as string).slice(0, 18), "U".repeat(16)]) {
      expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode }))).toBe(40103);
    }
    await useRecoveryCode(harness.auth, { tempToken, recoveryCode: recoveryCodes[4] as string });
  });

  it("RC-3: another user's recovery code is refused", async () => {
    const { recoveryCodes } = await user;
    const otherId = await addUser(harness.auth, "other-recovering");
    await enrolTotp(harness.auth, otherId);
    const tempToken = await tempTokenOf(harness, "other-recovering");
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode: recoveryCodes[5] as string }))).toBe(40103);
    await useRecoveryCode(harness.auth, {
      tempToken: await tempTokenOf(harness, "recovering"),
      recoveryCode: recoveryCodes[5] as string,
    });
  });

  it("RC-3: recovery-code failures count toward the account throttle (RL-1)", async () => {
    const throttled = makeAuth();
    const userId = await addUser(throttled.auth, "guessing");
    const { recoveryCodes } = await enrolTotp(throttled.auth, userId);
    const tempToken = await tempTokenOf(throttled, "guessing");
    for (let attempt = 0; attempt < 4; attempt += 1) {
      expect(await outcome(useRecoveryCode(throttled.auth, { tempToken, recoveryCode: `AAAA-AAAA-AAAA-AAA${attempt}` }))).toBe(
        40103,
      );
    }
    const error = await authError(useRecoveryCode(throttled.auth, { tempToken, recoveryCode: recoveryCodes[0] as string }));
    expect(error.code).toBe(ErrorCode.TooManyAttempts);
    expect(await throttled.storage.recoveryCodes.count(userId)).toBe(10);
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const valid = { tempToken: "T".repeat(43), recoveryCode: "AAAA-AAAA-AAAA-AAAA" };
    for (const field of ["tempToken", "recoveryCode"]) {
      for (const missing of [undefined, null, ""]) {
        const error = await authError(useRecoveryCode(harness.auth, { ...valid, [field]: missing } as never));
        expect({ code: error.code, message: error.message }, `${field}: ${missing}`).toEqual({
          code: ErrorCode.MissingParameter,
          message: `${field} is required`,
        });
      }
      for (const malformed of [{ $ne: "" }, ["AAAA-AAAA-AAAA-AAAA"], 1234]) {
        const error = await authError(useRecoveryCode(harness.auth, { ...valid, [field]: malformed } as never));
        expect({ code: error.code, message: error.message }, `${field}: ${JSON.stringify(malformed)}`).toEqual({
          code: ErrorCode.MalformedParameter,
          message: `${field} must be a string`,
        });
      }
    }
  });

  it("HTTP-6: second-factor events name the user and the factor (recovery_code), never the code", async () => {
    const own = makeAuth();
    const userId = await addUser(own.auth, "reported");
    const recoveryCode = (await enrolTotp(own.auth, userId)).recoveryCodes[0] as string;
    const tempToken = await tempTokenOf(own, "reported");
    own.events.length = 0;
    await outcome(useRecoveryCode(own.auth, { tempToken, recoveryCode: "AAAA-AAAA-AAAA-AAAA", ip: "192.0.2.30" }));
    await useRecoveryCode(own.auth, { tempToken, recoveryCode, ip: "192.0.2.30" });
    const at = own.clock.now;
    const ip = "192.0.2.30";
    expect(own.events.filter((event) => event.type.startsWith("second_factor."))).toEqual([
      { type: "second_factor.failed", userId, kind: "recovery_code", at, ip },
      { type: "second_factor.succeeded", userId, kind: "recovery_code", at, ip },
    ]);
    expect(JSON.stringify(own.events)).not.toContain(recoveryCode);
    expect(JSON.stringify(own.events)).not.toContain(recoveryCode.replaceAll("-", ""));
  });

  it("RC-2: a malformed recovery code is refused without a storage lookup", async () => {
    const tempToken = await tempTokenOf(harness, "recovering");
    const has = vi.spyOn(harness.storage.recoveryCodes, "has");
    const consume = vi.spyOn(harness.storage.recoveryCodes, "consume");
    for (const recoveryCode of ["not a code", "U".repeat(16), "AAAA-AAAA-AAAA-AAA", "AAAA-AAAA-AAAA-AAAAA"]) {
      expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode })), recoveryCode).toBe(40103);
    }
    expect(has).not.toHaveBeenCalled();
    expect(consume).not.toHaveBeenCalled();
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode: "AAAA-AAAA-AAAA-AAAA" }))).toBe(40103);
    expect(has).toHaveBeenCalledTimes(1);
    has.mockRestore();
    consume.mockRestore();
  });

  it("STUP-7, ASVS 6.5.2: codes of the 16-character form issued before stay usable, once each, beside the new 24-character form", async () => {
    const own = makeAuth({ throttle: generousThrottle });
    const userId = await addUser(own.auth, "old-codes");
    const { recoveryCodes } = await enrolTotp(own.auth, userId);
    expect(recoveryCodes.every((code) => code.replaceAll("-", "").length === 24)).toBe(true);
    const oldCode = "7K3D-9QXM-2HBT-W0RZ";
    // A set stored before the change: hashes of 16-character codes, kept as they were.
    await own.storage.recoveryCodes.replace(userId, [hashRecoveryCode(userId, "7K3D9QXM2HBTW0RZ")], own.clock.now);
    const tempToken = await tempTokenOf(own, "old-codes");
    expect(await outcome(useRecoveryCode(own.auth, { tempToken, recoveryCode: recoveryCodes[0] as string }))).toBe(40103);
    await useRecoveryCode(own.auth, { tempToken, recoveryCode: oldCode.toLowerCase() });
    expect(await own.storage.recoveryCodes.count(userId)).toBe(0);
    expect(
      await outcome(useRecoveryCode(own.auth, { tempToken: await tempTokenOf(own, "old-codes"), recoveryCode: oldCode })),
    ).toBe(40103);
  });

  it("STUP-7, ASVS 6.5.2: a 24-character code of the wrong length or alphabet is refused without a storage lookup", async () => {
    const tempToken = await tempTokenOf(harness, "recovering");
    const has = vi.spyOn(harness.storage.recoveryCodes, "has");
    for (const recoveryCode of [
      "AAAA-AAAA-AAAA-AAAA-AAAA-AAA",
      "AAAA-AAAA-AAAA-AAAA-AAAA-AAAAA",
      "U".repeat(24),
      "A".repeat(20),
    ]) {
      expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode })), recoveryCode).toBe(40103);
    }
    expect(has).not.toHaveBeenCalled();
    expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode: "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA" }))).toBe(
      40103,
    );
    expect(has).toHaveBeenCalledTimes(1);
    has.mockRestore();
  });

  it("TMP-2: an access token is refused as the temporary token", async () => {
    const { recoveryCodes } = await user;
    const tokens = await useRecoveryCode(harness.auth, {
      tempToken: await tempTokenOf(harness, "recovering"),
      recoveryCode: recoveryCodes[6] as string,
    });
    const error = await authError(
      useRecoveryCode(harness.auth, { tempToken: tokens.accessToken, recoveryCode: recoveryCodes[7] as string }),
    );
    expect(error.code).toBe(ErrorCode.AuthenticationFailed);
    expect(await harness.storage.recoveryCodes.count((await user).userId)).toBe(3);
  });
});
