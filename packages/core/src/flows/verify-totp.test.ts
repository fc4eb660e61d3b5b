import { describe, expect, it, vi } from "vitest";
import { ErrorCode } from "../errors/codes.js";
import { verifyAccessTokenClaims } from "../tokens/access-token.js";
import {
  type Harness,
  addUser,
  authError,
  codeAt,
  decodeBase32,
  enrolTotp,
  generousThrottle,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  shownUser,
  tally,
  wrongCodeAt,
} from "./fixtures.test-support.js";
import { login } from "./login.js";
import { logout } from "./logout.js";
import { refresh } from "./refresh.js";
import { listSessions } from "./sessions.js";
import { beginTotpSetup } from "./totp-enrolment.js";
import { useRecoveryCode } from "./use-recovery-code.js";
import { verifyAccessToken } from "./verify-access-token.js";
import { verifyTotp } from "./verify-totp.js";

async function tempTokenOf(harness: Harness, username: string, password = goodPassword): Promise<string> {
  const result = await login(harness.auth, { username, password });
  if (result.status !== "totp_required") throw new Error("expected a second-factor request");
  return result.tempToken;
}

/** A user with TOTP; the clock is moved past the step spent by enabling. */
async function totpUser(harness: Harness, username: string) {
  const userId = await addUser(harness.auth, username);
  const { secret, recoveryCodes } = await enrolTotp(harness.auth, userId);
  harness.clock.advance(30_000);
  return { userId, secret, recoveryCodes };
}

const claimsOf = (harness: Harness, token: string) =>
  verifyAccessTokenClaims(token, {
    keys: harness.auth.keys,
    issuer: harness.auth.config.issuer,
    audience: harness.auth.config.audience,
    now: harness.auth.now(),
    clockToleranceSeconds: 0,
  });

describe("verifyTotp", () => {
  it("a valid code completes the login with amr pwd and otp", async () => {
    const harness = makeAuth();
    const { userId, secret } = await totpUser(harness, "amr");
    const tokens = await verifyTotp(harness.auth, {
      tempToken: await tempTokenOf(harness, "amr"),
      code: codeAt(secret, harness.clock.now),
    });
    const { createdAt } = (await harness.storage.users.findById(userId)) as { createdAt: number };
    expect(tokens.user).toEqual(shownUser({ id: userId, username: "amr", createdAt, totpEnabled: true }));
    expect((await claimsOf(harness, tokens.accessToken)).amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("PW-5: each missing field is 40001 naming it, each non-string 40002 naming it", async () => {
    const harness = makeAuth();
    const valid = { tempToken: "T".repeat(43), code: "123456" };
    for (const field of ["tempToken", "code"]) {
      for (const missing of [undefined, null, ""]) {
        const error = await authError(verifyTotp(harness.auth, { ...valid, [field]: missing } as never));
        expect({ code: error.code, message: error.message }, `${field}: ${missing}`).toEqual({
          code: ErrorCode.MissingParameter,
          message: `${field} is required`,
        });
      }
      for (const malformed of [{ $ne: "" }, ["123456"], 123456]) {
        const error = await authError(verifyTotp(harness.auth, { ...valid, [field]: malformed } as never));
        expect({ code: error.code, message: error.message }, `${field}: ${JSON.stringify(malformed)}`).toEqual({
          code: ErrorCode.MalformedParameter,
          message: `${field} must be a string`,
        });
      }
    }
  });

  it("HTTP-6: second-factor events name the user and the factor (totp), never the code", async () => {
    const harness = makeAuth();
    const { userId, secret } = await totpUser(harness, "reported");
    const tempToken = await tempTokenOf(harness, "reported");
    const wrong = wrongCodeAt(secret, harness.clock.now);
    const code = codeAt(secret, harness.clock.now);
    harness.events.length = 0;
    await outcome(verifyTotp(harness.auth, { tempToken, code: wrong, ip: "192.0.2.20" }));
    await verifyTotp(harness.auth, { tempToken, code, ip: "192.0.2.20" });
    const at = harness.clock.now;
    const ip = "192.0.2.20";
    expect(harness.events.filter((event) => event.type.startsWith("second_factor."))).toEqual([
      { type: "second_factor.failed", userId, kind: "totp", at, ip },
      { type: "second_factor.succeeded", userId, kind: "totp", at, ip },
    ]);
    expect(JSON.stringify(harness.events)).not.toContain(wrong);
    expect(JSON.stringify(harness.events)).not.toContain(code);
  });

  it("TOTP-5: only an enabled factor completes a login: with the factor gone from storage, or only pending, a code is 40103", async () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const { userId, secret } = await totpUser(harness, "factor-gone");
    const tempToken = await tempTokenOf(harness, "factor-gone");
    await harness.storage.totp.remove(userId);
    expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }))).toBe(40103);
    const setup = await beginTotpSetup(harness.auth, { userId, password: goodPassword });
    const pendingCode = codeAt(decodeBase32(setup.secret), harness.clock.now);
    expect(await outcome(verifyTotp(harness.auth, { tempToken, code: pendingCode }))).toBe(40103);
    expect(harness.events.filter((event) => event.type === "login.succeeded")).toEqual([]);
  });

  describe("TOTP-4: a step is accepted once", () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const user = totpUser(harness, "replay");

    it("TOTP-4: a code is accepted once", async () => {
      const { secret } = await user;
      const code = nextCode(harness, secret);
      await verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "replay"), code });
      const error = await authError(verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "replay"), code }));
      expect(error.code).toBe(ErrorCode.SecondFactorFailed);
    });

    it("TOTP-4: a replayed code is refused before the temporary token is spent, which then completes with the next code", async () => {
      const { secret } = await user;
      const code = nextCode(harness, secret);
      await verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "replay"), code });
      const tempToken = await tempTokenOf(harness, "replay");
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code }))).toBe(40103);
      await verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) });
    });

    it("TOTP-4: the code of an earlier step is refused once a later step was used", async () => {
      const { secret } = await user;
      harness.clock.advance(120_000);
      const now = harness.clock.now;
      await verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "replay"), code: codeAt(secret, now + 30_000) });
      for (const code of [codeAt(secret, now), codeAt(secret, now - 30_000), codeAt(secret, now + 30_000)]) {
        expect(await outcome(verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "replay"), code }))).toBe(40103);
      }
      harness.clock.advance(60_000);
      await verifyTotp(harness.auth, {
        tempToken: await tempTokenOf(harness, "replay"),
        code: codeAt(secret, harness.clock.now),
      });
    });

    it("TOTP-4: 20 concurrent submissions of one valid code, each with its own temporary token, give one success", async () => {
      const { secret } = await user;
      const code = nextCode(harness, secret);
      const tempTokens = await Promise.all(Array.from({ length: 20 }, () => tempTokenOf(harness, "replay")));
      const results = await tally(tempTokens.map((tempToken) => verifyTotp(harness.auth, { tempToken, code })));
      expect(results).toEqual(
        new Map<number | "fulfilled", number>([
          ["fulfilled", 1],
          [40103, 19],
        ]),
      );
    });
  });

  describe("TOTP-3: the window", () => {
    it("TOTP-3: one step either side is accepted by default; two steps are refused", async () => {
      const harness = makeAuth({ throttle: generousThrottle });
      const { secret } = await totpUser(harness, "window");
      const now = harness.clock.advance(300_000);
      const attempt = async (offsetSteps: number) =>
        outcome(
          verifyTotp(harness.auth, {
            tempToken: await tempTokenOf(harness, "window"),
            code: codeAt(secret, now + offsetSteps * 30_000),
          }),
        );
      expect(await attempt(-2)).toBe(40103);
      expect(await attempt(-1)).toBe("fulfilled");
      expect(await attempt(0)).toBe("fulfilled");
      expect(await attempt(2)).toBe(40103);
      expect(await attempt(1)).toBe("fulfilled");
    });

    it("TOTP-3: with window 0, the neighbouring steps are refused", async () => {
      const harness = makeAuth({ throttle: generousThrottle, totp: { window: 0 } });
      const { secret } = await totpUser(harness, "window-zero");
      const now = harness.clock.advance(300_000);
      for (const offset of [-30_000, 30_000]) {
        const tempToken = await tempTokenOf(harness, "window-zero");
        expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, now + offset) }))).toBe(40103);
      }
      await verifyTotp(harness.auth, { tempToken: await tempTokenOf(harness, "window-zero"), code: codeAt(secret, now) });
    });

    it("TOTP-3: only six digits are accepted", async () => {
      const harness = makeAuth({ throttle: generousThrottle });
      const { secret } = await totpUser(harness, "digits");
      const eight = codeAt(secret, harness.clock.now, 8);
      const six = codeAt(secret, harness.clock.now);
      for (const code of [eight, eight.slice(1), six.slice(1), `${six} `, `0${six}`, "abcdef", `${six.slice(0, 5)}x`]) {
        const tempToken = await tempTokenOf(harness, "digits");
        expect(await outcome(verifyTotp(harness.auth, { tempToken, code })), code).toBe(40103);
      }
    });
  });

  describe("TMP-2, TMP-3, TMP-4: the temporary token", () => {
    const harness = makeAuth({ throttle: generousThrottle });
    const user = totpUser(harness, "temporary");

    it("TMP-2: an access token or a refresh token is refused as the temporary token", async () => {
      const { secret } = await user;
      const tokens = await verifyTotp(harness.auth, {
        tempToken: await tempTokenOf(harness, "temporary"),
        code: nextCode(harness, secret),
      });
      for (const tempToken of [tokens.accessToken, tokens.refreshToken]) {
        const code = nextCode(harness, secret);
        expect(await outcome(verifyTotp(harness.auth, { tempToken, code }))).toBe(ErrorCode.AuthenticationFailed);
      }
    });

    it("TMP-3: 20 concurrent valid verifications on one temporary token give exactly one token pair", async () => {
      const { secret } = await user;
      const tempToken = await tempTokenOf(harness, "temporary");
      const createSession = vi.spyOn(harness.storage.sessions, "createSession");
      const code = nextCode(harness, secret);
      const results = await tally(Array.from({ length: 20 }, () => verifyTotp(harness.auth, { tempToken, code })));
      expect(results.get("fulfilled")).toBe(1);
      expect(createSession).toHaveBeenCalledTimes(1);
      createSession.mockRestore();
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) }))).toBe(40100);
    });

    it("TMP-3: a spent temporary token is refused, also with a new valid code", async () => {
      const { secret } = await user;
      const tempToken = await tempTokenOf(harness, "temporary");
      await verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) });
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) }))).toBe(40100);
    });

    it("TMP-3: an expired temporary token with a valid code is refused", async () => {
      const { secret } = await user;
      const late = await tempTokenOf(harness, "temporary");
      const inTime = await tempTokenOf(harness, "temporary");
      harness.clock.advance(299_000);
      await verifyTotp(harness.auth, { tempToken: inTime, code: codeAt(secret, harness.clock.now) });
      harness.clock.advance(1_000);
      const error = await authError(verifyTotp(harness.auth, { tempToken: late, code: nextCode(harness, secret) }));
      expect(error.code).toBe(ErrorCode.AuthenticationFailed);
      expect(error.message).toBe("The temporary token is invalid or expired");
    });

    it("TMP-4: after 5 wrong codes the temporary token is void, and a right code is then refused", async () => {
      const { secret } = await user;
      const tempToken = await tempTokenOf(harness, "temporary");
      harness.clock.advance(30_000);
      const wrong = wrongCodeAt(secret, harness.clock.now);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        expect(await outcome(verifyTotp(harness.auth, { tempToken, code: wrong }))).toBe(40103);
      }
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }))).toBe(40100);
    });

    it("TMP-4: four wrong codes leave the temporary token usable", async () => {
      const { secret } = await user;
      const tempToken = await tempTokenOf(harness, "temporary");
      harness.clock.advance(30_000);
      for (let attempt = 0; attempt < 4; attempt += 1) {
        await outcome(verifyTotp(harness.auth, { tempToken, code: wrongCodeAt(secret, harness.clock.now) }));
      }
      await verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) });
    });

    it("TMP-4: wrong recovery codes and wrong TOTP codes count together against the temporary token", async () => {
      const { secret } = await user;
      const tempToken = await tempTokenOf(harness, "temporary");
      harness.clock.advance(30_000);
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode: "0000-0000-0000-0000" }))).toBe(40103);
      }
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(await outcome(verifyTotp(harness.auth, { tempToken, code: wrongCodeAt(secret, harness.clock.now) }))).toBe(40103);
      }
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }))).toBe(40100);
    });
  });

  it("SE-1: the session a TOTP code completes records the user agent and network of the request that completed it", async () => {
    const harness = makeAuth();
    const { userId, secret } = await totpUser(harness, "recorded");
    const first = await login(harness.auth, {
      username: "recorded",
      password: goodPassword,
      ip: "192.0.2.1",
      userAgent: "Login/1",
    });
    if (first.status !== "totp_required") throw new Error("expected a second-factor request");
    const code = codeAt(secret, harness.clock.now);
    await verifyTotp(harness.auth, { tempToken: first.tempToken, code, ip: "203.0.113.77", userAgent: "Verifier/2" });
    expect(await listSessions(harness.auth, { userId })).toEqual([
      expect.objectContaining({ amr: ["pwd", "otp"], userAgent: "Verifier/2", address: "203.0.113.0/24" }),
    ]);
  });

  it("PW-7: a completed login's tokens differ from all issued before; the temporary token is never a session", async () => {
    const harness = makeAuth();
    const { secret } = await totpUser(harness, "fixation");
    const earlier = await verifyTotp(harness.auth, {
      tempToken: await tempTokenOf(harness, "fixation"),
      code: codeAt(secret, harness.clock.now),
    });
    const tempToken = await tempTokenOf(harness, "fixation");
    const tokens = await verifyTotp(harness.auth, { tempToken, code: nextCode(harness, secret) });
    const before = [tempToken, earlier.accessToken, earlier.refreshToken];
    expect(before).not.toContain(tokens.accessToken);
    expect(before).not.toContain(tokens.refreshToken);
    expect((await claimsOf(harness, tokens.accessToken)).sid).not.toBe((await claimsOf(harness, earlier.accessToken)).sid);
    expect(await outcome(refresh(harness.auth, { refreshToken: tempToken }))).toBe(40101);
    expect(await outcome(verifyAccessToken(harness.auth, { token: tempToken }))).toBe(40101);
    expect(await outcome(logout(harness.auth, { refreshToken: tempToken }))).toBe(40101);
    await verifyAccessToken(harness.auth, { token: tokens.accessToken });
  });

  describe("RL-1 and RL-2: second-factor failures and the account throttle", () => {
    it("RL-2: a new temporary token does not reset second-factor failures", async () => {
      // Seven attempts per window: two password logins, three wrong codes on the first temporary
      // token, two on the second; the eighth attempt is refused although it is on a fresh token.
      const harness = makeAuth({ throttle: { account: [{ limit: 7, window: "15m" }] } });
      const { secret } = await totpUser(harness, "second-factor");
      const wrong = wrongCodeAt(secret, harness.clock.now);
      const first = await tempTokenOf(harness, "second-factor");
      for (let attempt = 0; attempt < 3; attempt += 1)
        expect(await outcome(verifyTotp(harness.auth, { tempToken: first, code: wrong }))).toBe(40103);
      const second = await tempTokenOf(harness, "second-factor");
      for (let attempt = 0; attempt < 2; attempt += 1)
        expect(await outcome(verifyTotp(harness.auth, { tempToken: second, code: wrong }))).toBe(40103);
      const error = await authError(verifyTotp(harness.auth, { tempToken: second, code: wrong }));
      expect(error.code).toBe(ErrorCode.TooManyAttempts);
      expect(await outcome(verifyTotp(harness.auth, { tempToken: second, code: codeAt(secret, harness.clock.now) }))).toBe(42900);
    });

    it("RL-1: one account counter covers password, TOTP and recovery-code failures", async () => {
      const harness = makeAuth();
      const { secret } = await totpUser(harness, "shared-counter");
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(await outcome(login(harness.auth, { username: "shared-counter", password: "wrong password!" }))).toBe(40100);
      }
      const tempToken = await tempTokenOf(harness, "shared-counter");
      expect(await outcome(verifyTotp(harness.auth, { tempToken, code: wrongCodeAt(secret, harness.clock.now) }))).toBe(40103);
      expect(await outcome(useRecoveryCode(harness.auth, { tempToken, recoveryCode: "0000-0000-0000-0000" }))).toBe(40103);
      const throttled = await authError(verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) }));
      expect(throttled.code).toBe(ErrorCode.TooManyAttempts);
      expect(throttled.retryAfterSeconds).toBeGreaterThan(0);
      expect(await outcome(login(harness.auth, { username: "shared-counter", password: goodPassword }))).toBe(42900);
    });

    it("RL-1: a completed second factor clears the account's failures", async () => {
      const harness = makeAuth();
      const { secret } = await totpUser(harness, "cleared-2fa");
      const tempToken = await tempTokenOf(harness, "cleared-2fa");
      for (let attempt = 0; attempt < 3; attempt += 1) {
        await outcome(verifyTotp(harness.auth, { tempToken, code: wrongCodeAt(secret, harness.clock.now) }));
      }
      await verifyTotp(harness.auth, { tempToken, code: codeAt(secret, harness.clock.now) });
      for (let attempt = 0; attempt < 4; attempt += 1) {
        expect(await outcome(login(harness.auth, { username: "cleared-2fa", password: "wrong password!" }))).toBe(40100);
      }
    });
  });
});
