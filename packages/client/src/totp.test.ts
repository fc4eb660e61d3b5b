import { describe, expect, it } from "vitest";
import { type ScriptedAnswer, scriptedUser, signedInScriptedClient } from "./scripted-server.test-support.js";

const recoveryCodes = Array.from({ length: 10 }, (_, n) => `code-${n}`);

/** A client signed in to a scripted server that answers each TOTP route with `answers` (success by default). */
function signedInTotpClient(answers: Record<string, ScriptedAnswer> = {}) {
  return signedInScriptedClient(
    (request) =>
      answers[request.path] ??
      {
        "/auth/2fa/enable": { code: 0, data: { enabled: true, recoveryCodes } },
        "/auth/2fa/disable": { code: 0, data: { disabled: true } },
        "/auth/2fa/recovery-codes": { code: 0, data: { recoveryCodes } },
        "/auth/me": { code: 0, data: scriptedUser },
      }[request.path] ?? { code: 40400, message: "No such route", status: 404 },
  );
}

describe("client.totp: the user's own changes keep the session (SE-2)", () => {
  it("SE-2: enabling TOTP keeps this client signed in: no signedOut, no logout sent, the next call goes with the same token", async () => {
    const { client, server, signedOut } = await signedInTotpClient();
    expect(await client.totp.enable({ code: "123456" })).toEqual({ recoveryCodes });
    expect(signedOut).toEqual([]);
    expect(server.sentTo("/auth/logout")).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
    await client.me();
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-1"]);
  });

  it("SE-2: disabling TOTP, with a code or the password, keeps this client signed in", async () => {
    const { client, server, signedOut } = await signedInTotpClient();
    await client.totp.disable({ code: "123456" });
    await client.totp.disable({ password: "pw" });
    expect(server.sentTo("/auth/2fa/disable").map((request) => request.body)).toEqual([{ code: "123456" }, { password: "pw" }]);
    expect(signedOut).toEqual([]);
    expect(server.sentTo("/auth/logout")).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
  });

  it("SE-2, STUP-3: new recovery codes keep this client signed in; the code and the password are sent", async () => {
    const { client, server, signedOut } = await signedInTotpClient();
    expect(await client.totp.regenerateRecoveryCodes({ code: "123456", password: "pw" })).toEqual({ recoveryCodes });
    expect(server.sentTo("/auth/2fa/recovery-codes").map((request) => request.body)).toEqual([
      { code: "123456", password: "pw" },
    ]);
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
  });

  it("the stored user follows the change: totpEnabled true after enable, false after disable, without a request", async () => {
    const { client, server } = await signedInTotpClient();
    await client.totp.enable({ code: "123456" });
    expect(await client.currentUser()).toEqual({ ...scriptedUser, totpEnabled: true });
    await client.totp.disable({ code: "123456" });
    expect(await client.currentUser()).toEqual({ ...scriptedUser, totpEnabled: false });
    expect(server.sentTo("/auth/me")).toEqual([]);
  });

  it("a refused change keeps the session and the stored user as they were", async () => {
    const { client, signedOut } = await signedInTotpClient({
      "/auth/2fa/enable": { code: 40103, message: "Invalid code", status: 401 },
    });
    await expect(client.totp.enable({ code: "000000" })).rejects.toMatchObject({ code: 40103 });
    expect(await client.currentUser()).toEqual(scriptedUser);
    expect(signedOut).toEqual([]);
  });

  it("a 40101 on a later call still ends the session as before: the refresh is refused and signedOut says session_ended", async () => {
    const expired = { code: 40101, message: "Invalid or expired token", status: 401 };
    const { client, signedOut } = await signedInTotpClient({ "/auth/me": expired, "/auth/refresh": expired });
    await client.totp.enable({ code: "123456" });
    await expect(client.me()).rejects.toMatchObject({ code: 40101 });
    expect(signedOut).toEqual(["session_ended"]);
    expect(await client.accessToken()).toBeNull();
  });
});
