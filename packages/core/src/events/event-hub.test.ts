import { describe, expect, it, vi } from "vitest";
import { changePassword } from "../flows/change-password.js";
import {
  addUser,
  codeAt,
  enrolTotp,
  goodPassword,
  makeAuth,
  nextCode,
  outcome,
  wrongCodeAt,
} from "../flows/fixtures.test-support.js";
import { login } from "../flows/login.js";
import { logout } from "../flows/logout.js";
import { refresh } from "../flows/refresh.js";
import { disableTotp, regenerateRecoveryCodes } from "../flows/totp-enrolment.js";
import { useRecoveryCode } from "../flows/use-recovery-code.js";
import { verifyTotp } from "../flows/verify-totp.js";
import { normalizeRecoveryCode } from "../totp/recovery-codes.js";
import { createEventHub } from "./event-hub.js";
import type { AuthEvent } from "./types.js";

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("events", () => {
  it("HTTP-6: no event of a full flow holds a password, code, temporary token, access or refresh token", async () => {
    const harness = makeAuth();
    const { auth } = harness;
    const secrets: string[] = [];
    const codes: string[] = [];
    const tempTokenOf = async (password: string) => {
      const result = await login(auth, { username: "eve", password });
      if (result.status !== "totp_required") throw new Error("expected a second-factor request");
      secrets.push(result.tempToken);
      return result.tempToken;
    };

    const userId = await addUser(auth, "eve");
    const { secret, recoveryCodes } = await enrolTotp(auth, userId);
    codes.push(codeAt(secret, auth.now()));
    secrets.push(goodPassword, Buffer.from(secret).toString("hex"), Buffer.from(secret).toString("base64url"));
    secrets.push(...recoveryCodes, ...recoveryCodes.map((code) => normalizeRecoveryCode(code) as string));

    const wrongPassword = "a wrong password guess";
    secrets.push(wrongPassword);
    expect(await outcome(login(auth, { username: "eve", password: wrongPassword }))).toBe(40100);

    const firstTemp = await tempTokenOf(goodPassword);
    const wrongCode = wrongCodeAt(secret, harness.clock.now);
    codes.push(wrongCode);
    expect(await outcome(verifyTotp(auth, { tempToken: firstTemp, code: wrongCode }))).toBe(40103);
    const code = nextCode(harness, secret);
    codes.push(code);
    const first = await verifyTotp(auth, { tempToken: firstTemp, code });

    const secondTemp = await tempTokenOf(goodPassword);
    expect(await outcome(useRecoveryCode(auth, { tempToken: secondTemp, recoveryCode: "ZZZZ-ZZZZ-ZZZZ-ZZZZ" }))).toBe(40103);
    const second = await useRecoveryCode(auth, { tempToken: secondTemp, recoveryCode: recoveryCodes[0] as string });

    const third = await refresh(auth, { refreshToken: first.refreshToken });
    expect(await outcome(refresh(auth, { refreshToken: first.refreshToken }))).toBe(40101);
    await logout(auth, { refreshToken: second.refreshToken });
    const fourthCode = nextCode(harness, secret);
    codes.push(fourthCode);
    const fourth = await verifyTotp(auth, { tempToken: await tempTokenOf(goodPassword), code: fourthCode });
    secrets.push(...[first, second, third, fourth].flatMap((tokens) => [tokens.accessToken, tokens.refreshToken]));

    const regenerateCode = nextCode(harness, secret);
    codes.push(regenerateCode);
    const { recoveryCodes: fresh } = await regenerateRecoveryCodes(auth, {
      userId,
      password: goodPassword,
      code: regenerateCode,
    });
    secrets.push(...fresh);
    const newPassword = "another long passphrase";
    secrets.push(newPassword);
    const changeCode = nextCode(harness, secret);
    codes.push(changeCode);
    await changePassword(auth, { userId, currentPassword: goodPassword, newPassword, totpCode: changeCode });
    const disableCode = nextCode(harness, secret);
    codes.push(disableCode);
    await disableTotp(auth, { userId, password: newPassword, code: disableCode });
    for (let attempt = 0; attempt < 6; attempt += 1) await outcome(login(auth, { username: "eve", password: wrongPassword }));

    const types = new Set(harness.events.map((event) => event.type));
    expect([...types].sort()).toEqual(
      [
        "login.failed",
        "login.succeeded",
        "password.changed",
        "recovery_codes.regenerated",
        "refresh_token.reused",
        "second_factor.failed",
        "second_factor.required",
        "second_factor.succeeded",
        "session.revoked",
        "throttled",
        "sessions.ended",
        "token.refreshed",
        "totp.disabled",
        "totp.enabled",
        "user.created",
      ].sort(),
    );
    const serialized = harness.events.map((event) => JSON.stringify(event));
    for (const value of secrets) {
      for (const text of serialized) expect(text).not.toContain(value);
    }
    for (const value of new Set(codes)) {
      const standalone = new RegExp(`(?<![0-9])${value}(?![0-9])`);
      for (const text of serialized) expect(text).not.toMatch(standalone);
    }
  });

  it("HTTP-6: a listener that throws does not fail the login, and its error goes to onListenerError", async () => {
    const onListenerError = vi.fn();
    const { auth } = makeAuth({ onListenerError });
    await addUser(auth, "listened");
    const failure = new Error("listener broke");
    auth.events.on("login.succeeded", () => {
      throw failure;
    });
    const rejection = new Error("async listener broke");
    auth.events.on("*", async (event) => {
      if (event.type === "login.succeeded") throw rejection;
    });
    const result = await login(auth, { username: "listened", password: goodPassword });
    expect(result.status).toBe("authenticated");
    await flush();
    expect(onListenerError).toHaveBeenCalledTimes(2);
    expect(onListenerError).toHaveBeenCalledWith(failure, expect.objectContaining({ type: "login.succeeded" }));
    expect(onListenerError).toHaveBeenCalledWith(rejection, expect.objectContaining({ type: "login.succeeded" }));
  });

  it("HTTP-6: an error reporter that throws does not fail the login either", async () => {
    const { auth } = makeAuth({
      onListenerError: () => {
        throw new Error("reporter broke");
      },
    });
    await addUser(auth, "reported");
    auth.events.on("*", () => {
      throw new Error("listener broke");
    });
    expect((await login(auth, { username: "reported", password: goodPassword })).status).toBe("authenticated");
  });

  it("listeners receive their type or every type, and can unsubscribe", () => {
    const hub = createEventHub();
    const typed: AuthEvent[] = [];
    const all: AuthEvent[] = [];
    const stopTyped = hub.on("user.created", (event) => {
      typed.push(event);
    });
    hub.on("*", (event) => {
      all.push(event);
    });
    const created: AuthEvent = { type: "user.created", userId: "u1", by: "service", at: 1 };
    const changed: AuthEvent = { type: "password.changed", userId: "u1", at: 2 };
    hub.emit(created);
    hub.emit(changed);
    stopTyped();
    hub.emit(created);
    expect(typed).toEqual([created]);
    expect(all).toEqual([created, changed, created]);
  });
});
