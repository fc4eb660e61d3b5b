import { describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import { AuthClientError } from "./errors.js";
import { type ScriptedAnswer, scriptedBaseUrl, scriptedServer, scriptedUser, tokenSet } from "./scripted-server.test-support.js";

function clientAnswering(answers: Record<string, ScriptedAnswer>, reauthenticate?: Parameters<typeof createAuthClient>[0]) {
  const server = scriptedServer((request) => answers[request.path] ?? { code: 40400, message: "No such route", status: 404 });
  return { server, client: createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, ...reauthenticate }) };
}

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as AuthClientError,
  );

describe("sign-in steps", () => {
  it("a 40102 without a temporary token is invalid_response, data or no data", async () => {
    for (const data of [undefined, {}, { tempToken: 7 }]) {
      const { client } = clientAnswering({ "/auth/login": { code: 40102, message: "TOTP required", data } });
      const error = await errorOf(client.login({ username: "alice", password: "pw" }));
      expect(error?.kind, JSON.stringify(data)).toBe("invalid_response");
    }
  });

  it("a refused second factor rejects with the server's code (40103), and the step may be tried again", async () => {
    const { client, server } = clientAnswering({
      "/auth/login": { code: 40102, message: "TOTP required", data: { tempToken: "temp-1" } },
      "/auth/2fa/verify": { code: 40103, message: "Invalid code", status: 401 },
    });
    const step = await client.login({ username: "alice", password: "pw" });
    if (step.status !== "totp_required") throw new Error("expected the second-factor step");
    const error = await errorOf(step.verifyTotp("000000"));
    expect({ kind: error?.kind, code: error?.code }).toEqual({ kind: "server", code: 40103 });
    expect(await client.accessToken()).toBeNull();
    await errorOf(step.useRecoveryCode("aaaa-bbbb"));
    expect(server.sent.map((request) => [request.path, request.body])).toEqual([
      ["/auth/login", { username: "alice", password: "pw" }],
      ["/auth/2fa/verify", { tempToken: "temp-1", code: "000000" }],
      ["/auth/2fa/recovery", { tempToken: "temp-1", recoveryCode: "aaaa-bbbb" }],
    ]);
  });
});

describe("RL-5: the device token", () => {
  it("RL-5: a login sends the device token of the client's last sign-in, after a sign-out too; none before the first", async () => {
    const { client, server } = clientAnswering({
      "/auth/login": { code: 0, data: { ...tokenSet(1), deviceToken: "device-1" } },
      "/auth/2fa/verify": { code: 0, data: { ...tokenSet(2), deviceToken: "device-2" } },
      "/auth/logout": { code: 0, data: {} },
    });
    await client.login({ username: "alice", password: "pw" });
    await client.logout();
    await client.login({ username: "alice", password: "pw" });
    expect(server.sent.filter((request) => request.path === "/auth/login").map((request) => request.body)).toEqual([
      { username: "alice", password: "pw" },
      { username: "alice", password: "pw", deviceToken: "device-1" },
    ]);
  });

  it("RL-5: the token of a completed second factor is the one sent next; an answer without one keeps the last", async () => {
    const answers: Record<string, ScriptedAnswer> = {
      "/auth/login": { code: 40102, message: "TOTP required", data: { tempToken: "temp-1" } },
      "/auth/2fa/verify": { code: 0, data: { ...tokenSet(2), deviceToken: "device-2" } },
    };
    const { client, server } = clientAnswering(answers);
    const step = await client.login({ username: "alice", password: "pw" });
    if (step.status !== "totp_required") throw new Error("expected the second-factor step");
    await step.verifyTotp("123456");
    answers["/auth/login"] = { code: 0, data: tokenSet(3) };
    await client.login({ username: "alice", password: "pw" });
    await client.login({ username: "alice", password: "pw" });
    expect(
      server.sent
        .filter((request) => request.path === "/auth/login")
        .map((request) => (request.body as { deviceToken?: string }).deviceToken),
    ).toEqual([undefined, "device-2", "device-2"]);
  });
});

describe("re-authentication", () => {
  it("TOTP-5: only the server's 40001 asks reauthenticate; a 40100 (wrong password) rejects as it is", async () => {
    const reauthenticate = vi.fn(() => ({ password: "pw" }));
    const { client } = clientAnswering(
      {
        "/auth/login": { code: 0, data: tokenSet(1) },
        "/auth/2fa/setup": { code: 40100, message: "Invalid password", status: 401 },
      },
      { reauthenticate },
    );
    await client.login({ username: "alice", password: "pw" });
    expect((await errorOf(client.totp.setup({ password: "wrong" })))?.code).toBe(40100);
    expect((await errorOf(client.totp.setup()))?.code).toBe(40100);
    expect(reauthenticate).not.toHaveBeenCalled();
  });
});

describe("AuthClientError", () => {
  it("has a cause only when one was given", () => {
    const plain = new AuthClientError("Not signed in", { kind: "not_signed_in", code: 40101 });
    expect(Object.hasOwn(plain, "cause")).toBe(false);
    const cause = new TypeError("fetch failed");
    expect(new AuthClientError("The server could not be reached", { kind: "network", cause }).cause).toBe(cause);
  });
});

describe("sign-up", () => {
  it("SU-1: register sends only the username and password, stores the new session's tokens and emits signedIn", async () => {
    const { client, server } = clientAnswering({
      "/auth/register": { code: 0, data: { ...tokenSet(1), deviceToken: "device-1" } },
    });
    const signedIn: unknown[] = [];
    client.on("signedIn", (detail) => signedIn.push(detail));
    const answer = await client.register({ username: "newcomer", password: "a long passphrase" });
    expect(answer).toEqual({ status: "authenticated", user: scriptedUser, offerPasskey: false });
    expect(signedIn).toEqual([{ user: scriptedUser }]);
    expect(await client.accessToken()).toBe("access-1");
    expect(server.sent.map(({ method, path, body }) => [method, path, body])).toEqual([
      ["POST", "/auth/register", { username: "newcomer", password: "a long passphrase" }],
    ]);
  });

  it("a refused sign-up (40400 off, 40900 taken) rejects with the code and stores nothing", async () => {
    for (const code of [40400, 40900]) {
      const { client } = clientAnswering({ "/auth/register": { code, message: "No", status: Math.floor(code / 100) } });
      const error = await errorOf(client.register({ username: "taken", password: "pw" }));
      expect({ kind: error?.kind, code: error?.code }).toEqual({ kind: "server", code });
      expect(await client.currentUser()).toBeNull();
    }
  });

  it("the device token of a sign-up is sent with the next login (RL-5)", async () => {
    const { client, server } = clientAnswering({
      "/auth/register": { code: 0, data: { ...tokenSet(1), deviceToken: "device-1" } },
      "/auth/login": { code: 0, data: tokenSet(2) },
    });
    await client.register({ username: "newcomer", password: "pw" });
    await client.login({ username: "newcomer", password: "pw" });
    expect(server.sent.at(-1)?.body).toEqual({ username: "newcomer", password: "pw", deviceToken: "device-1" });
  });
});
