import { describe, expect, it } from "vitest";
import { createAuthClient } from "./client.js";
import { tokenFromLink } from "./email.js";
import {
  type ScriptedAnswer,
  scriptedBaseUrl,
  scriptedServer,
  signedInScriptedClient,
  tokenSet,
} from "./scripted-server.test-support.js";

const invalidLink: ScriptedAnswer = { code: 40101, message: "The link is invalid, expired or already used", status: 401 };

/** A client of a scripted server that answers each email route with `answers`, success by default. */
function emailRoutes(answers: Record<string, ScriptedAnswer> = {}) {
  return (request: { path: string }): ScriptedAnswer =>
    answers[request.path] ??
    {
      "/auth/password/forgot": { code: 0, data: {} },
      "/auth/password/reset": { code: 0, data: { reset: true } },
      "/auth/email": { code: 0, data: { pending: true } },
      "/auth/email/verify": { code: 0, data: { verified: true } },
    }[request.path] ?? { code: 40400, message: "No such route", status: 404 };
}

describe("client.email: the public routes", () => {
  it("PR-1: forgotPassword sends only the username or only the email, without a token, and resolves alike", async () => {
    const server = scriptedServer(emailRoutes());
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await client.email.forgotPassword({ username: "alice" });
    await client.email.forgotPassword({ email: "alice@example.com" });
    expect(
      server.sentTo("/auth/password/forgot").map(({ method, body, authorization }) => [method, body, authorization]),
    ).toEqual([
      ["POST", { username: "alice" }, null],
      ["POST", { email: "alice@example.com" }, null],
    ]);
  });

  it("PR-3: resetPassword sends the token, the new password and a code only when given; a 40103 rejects with its code", async () => {
    const server = scriptedServer(
      emailRoutes({
        "/auth/password/reset": { code: 40103, message: "Second factor failed", status: 401 },
      }),
    );
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await expect(client.email.resetPassword({ token: "t", newPassword: "new pw" })).rejects.toMatchObject({
      kind: "server",
      code: 40103,
      status: 401,
    });
    const ok = scriptedServer(emailRoutes());
    const second = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: ok.fetch });
    await second.email.resetPassword({ token: "t", newPassword: "new pw", totpCode: "123456" });
    await second.email.resetPassword({ token: "u", newPassword: "new pw", recoveryCode: "AAAA-BBBB" });
    expect(server.sentTo("/auth/password/reset").map((request) => request.body)).toEqual([{ token: "t", newPassword: "new pw" }]);
    expect(ok.sentTo("/auth/password/reset").map((request) => request.body)).toEqual([
      { token: "t", newPassword: "new pw", totpCode: "123456" },
      { token: "u", newPassword: "new pw", recoveryCode: "AAAA-BBBB" },
    ]);
  });

  it("a 40101 of the reset or the verification (a used link) rejects, and a signed-in client neither refreshes nor signs out nor sends its token", async () => {
    const { client, server, signedOut } = await signedInScriptedClient(
      emailRoutes({ "/auth/password/reset": invalidLink, "/auth/email/verify": invalidLink }),
    );
    await expect(client.email.resetPassword({ token: "used", newPassword: "new pw" })).rejects.toMatchObject({ code: 40101 });
    await expect(client.email.verifyEmail({ token: "used" })).rejects.toMatchObject({ code: 40101 });
    await client.email.forgotPassword({ username: "alice" });
    expect(server.sentTo("/auth/refresh")).toEqual([]);
    expect(server.sentTo("/auth/logout")).toEqual([]);
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe("access-1");
    const publicRoutes = ["/auth/password/reset", "/auth/email/verify", "/auth/password/forgot"];
    expect(server.sent.filter((request) => publicRoutes.includes(request.path)).map((request) => request.authorization)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it("verifyEmail sends the token; a 40900 (the address verified by another account first) rejects with its code", async () => {
    const server = scriptedServer(emailRoutes({ "/auth/email/verify": { code: 40900, message: "Taken", status: 409 } }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await expect(client.email.verifyEmail({ token: "v" })).rejects.toMatchObject({ code: 40900 });
    expect(server.sentTo("/auth/email/verify").map((request) => request.body)).toEqual([{ token: "v" }]);
  });
});

describe("client.email.changeEmail", () => {
  it("sends the address with the bearer token, and the proof only when given", async () => {
    const { client, server, signedOut } = await signedInScriptedClient(emailRoutes());
    await client.email.changeEmail({ email: "new@example.com" });
    await client.email.changeEmail({ email: "new@example.com", password: "pw" });
    await client.email.changeEmail({ email: "new@example.com", totpCode: "123456" });
    expect(server.sentTo("/auth/email").map(({ body, authorization }) => [body, authorization])).toEqual([
      [{ email: "new@example.com" }, "Bearer access-1"],
      [{ email: "new@example.com", password: "pw" }, "Bearer access-1"],
      [{ email: "new@example.com", totpCode: "123456" }, "Bearer access-1"],
    ]);
    expect(signedOut).toEqual([]);
  });

  it("on 40001 asks reauthenticate (operation email.change, password or TOTP code) and sends once more with the proof", async () => {
    const asked: unknown[] = [];
    const { client, server } = await signedInScriptedClient(
      (request) =>
        request.path === "/auth/email" && (request.body as { password?: string }).password === undefined
          ? { code: 40001, message: "Confirm it is you", status: 400 }
          : emailRoutes()(request),
      {
        reauthenticate: (request) => {
          asked.push(request);
          return { password: "pw" };
        },
      },
    );
    await client.email.changeEmail({ email: "new@example.com" });
    expect(asked).toEqual([{ operation: "email.change", accepts: ["password", "totpCode"] }]);
    expect(server.sentTo("/auth/email").map((request) => request.body)).toEqual([
      { email: "new@example.com" },
      { email: "new@example.com", password: "pw" },
    ]);
  });

  it("without tokens rejects not_signed_in and sends nothing", async () => {
    const server = scriptedServer(emailRoutes());
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await expect(client.email.changeEmail({ email: "new@example.com" })).rejects.toMatchObject({ kind: "not_signed_in" });
    expect(server.sent).toEqual([]);
  });

  it("a 40101 of the bearer route is about the session: one refresh, then the call again", async () => {
    let refused = false;
    const { client, server } = await signedInScriptedClient((request) => {
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(2) };
      if (request.path === "/auth/email" && !refused) {
        refused = true;
        return { code: 40101, message: "Invalid or expired token", status: 401 };
      }
      return emailRoutes()(request);
    });
    await client.email.changeEmail({ email: "new@example.com", password: "pw" });
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
    expect(server.sentTo("/auth/email").map((request) => request.authorization)).toEqual(["Bearer access-1", "Bearer access-2"]);
  });
});

describe("client.register with an address", () => {
  it("sends the email beside the username and password, and nothing when none is given", async () => {
    const server = scriptedServer(() => ({ code: 0, data: tokenSet(1) }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await client.register({ username: "newcomer", password: "pw", email: "newcomer@example.com" });
    await client.register({ username: "other", password: "pw" });
    expect(server.sentTo("/auth/register").map((request) => request.body)).toEqual([
      { username: "newcomer", password: "pw", email: "newcomer@example.com" },
      { username: "other", password: "pw" },
    ]);
  });
});

describe("tokenFromLink", () => {
  it("reads the token from location.hash or a whole link, and null when there is none", () => {
    expect(tokenFromLink("#token=abc-DEF_123")).toBe("abc-DEF_123");
    expect(tokenFromLink("token=abc")).toBe("abc");
    expect(tokenFromLink("https://app.example.com/reset-password#token=xyz")).toBe("xyz");
    expect(tokenFromLink("#other=1&token=xyz")).toBe("xyz");
    expect(tokenFromLink("")).toBeNull();
    expect(tokenFromLink("#")).toBeNull();
    expect(tokenFromLink("#token=")).toBeNull();
    expect(tokenFromLink("https://app.example.com/reset-password?token=query")).toBeNull();
  });
});
