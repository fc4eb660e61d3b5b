import { describe, expect, it, vi } from "vitest";
import { type ScriptedAnswer, type ScriptedRequest, signedInScriptedClient, tokenSet } from "./scripted-server.test-support.js";
import type { SessionInfo } from "./types.js";

/** An access token shaped like the server's (a JWT), whose payload holds `claims`; the signature is not checked by the client. */
function jwtWith(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "at+jwt" })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** The payload's base64url holds "-" and "_" (from the note's bytes), which a base64 decoder must be given as "+" and "/". */
const currentToken = jwtWith({ sid: "session-1", note: "ÿÿÿ~~~" });

const sessions: SessionInfo[] = [
  {
    id: "session-1",
    current: true,
    createdAt: 2,
    lastUsedAt: 3,
    expiresAt: 4,
    amr: ["pwd"],
    userAgent: "Firefox",
    address: "203.0.113.0/24",
    impersonatedBy: null,
  },
  {
    id: "session/0",
    current: false,
    createdAt: 1,
    lastUsedAt: 1,
    expiresAt: 4,
    amr: ["hwk", "user"],
    userAgent: null,
    address: null,
    impersonatedBy: null,
  },
];

const reauthenticationNeeded = { code: 40001, message: "Confirm it is you", status: 400 };

/** A client signed in with {@link currentToken} (or `accessToken`) to a scripted server whose other routes `route` answers. */
const signedInSessionsClient = (
  route: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
  options: Parameters<typeof signedInScriptedClient>[1] = {},
) => signedInScriptedClient(route, { accessToken: currentToken, ...options });

describe("client.sessions.list", () => {
  it("SE-1: lists the user's sessions as the server answers them, with the bearer token", async () => {
    const { client, server } = await signedInSessionsClient(() => ({ code: 0, data: sessions }));
    expect(await client.sessions.list()).toEqual(sessions);
    expect(server.sentTo("/auth/sessions").map(({ method, authorization }) => [method, authorization])).toEqual([
      ["GET", `Bearer ${currentToken}`],
    ]);
  });
});

describe("client.sessions.end", () => {
  it("SE-1: ends another session with DELETE /auth/sessions/:id (the id encoded, no body) and stays signed in", async () => {
    const { client, server, signedOut } = await signedInSessionsClient(() => ({ code: 0, data: { ended: true } }));
    await client.sessions.end("session/0");
    const [sent] = server.sentTo("/auth/sessions/session%2F0");
    expect({ method: sent?.method, body: sent?.body, type: sent?.headers.get("content-type") }).toEqual({
      method: "DELETE",
      body: undefined,
      type: null,
    });
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe(currentToken);
  });

  it("ending this client's own session (the access token's sid) is a sign-out: tokens forgotten, signedOut logout, no logout request", async () => {
    const { client, server, signedOut } = await signedInSessionsClient(() => ({ code: 0, data: { ended: true } }));
    await client.sessions.end("session-1");
    expect(signedOut).toEqual(["logout"]);
    expect(await client.accessToken()).toBeNull();
    expect(server.sent.map(({ path }) => path)).toEqual(["/auth/login", "/auth/sessions/session-1"]);
  });

  it("an access token that is not a JWT, or whose sid is not a string, never matches: the client stays signed in", async () => {
    for (const accessToken of ["access-1", "a.%%%.c", jwtWith({ sid: 1 }), jwtWith({})]) {
      const { client, signedOut } = await signedInSessionsClient(() => ({ code: 0, data: { ended: true } }), { accessToken });
      await client.sessions.end("1");
      await client.sessions.end("undefined");
      expect(signedOut, accessToken).toEqual([]);
      expect(await client.accessToken()).toBe(accessToken);
    }
  });

  it("a refused end (40400: not this user's session) rejects with the code and keeps the session", async () => {
    const { client, signedOut } = await signedInSessionsClient(() => ({ code: 40400, message: "No such session", status: 404 }));
    await expect(client.sessions.end("session-1")).rejects.toMatchObject({ kind: "server", code: 40400 });
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe(currentToken);
  });

  it("a proof given in the call travels as the DELETE's JSON body", async () => {
    const { client, server } = await signedInSessionsClient(() => ({ code: 0, data: { ended: true } }));
    await client.sessions.end("session-2", { password: "pw" });
    await client.sessions.end("session-3", { totpCode: "123456" });
    expect(server.sent.slice(1).map(({ path, body, headers }) => [path, body, headers.get("content-type")])).toEqual([
      ["/auth/sessions/session-2", { password: "pw" }, "application/json"],
      ["/auth/sessions/session-3", { totpCode: "123456" }, "application/json"],
    ]);
  });

  it("a 40001 asks reauthenticate once for sessions.end, with the password or a TOTP code, and sends the DELETE once more with it", async () => {
    const reauthenticate = vi.fn(() => ({ totpCode: "123456" }));
    const { client, server } = await signedInSessionsClient(
      (request) => (request.body === undefined ? reauthenticationNeeded : { code: 0, data: { ended: true } }),
      { reauthenticate },
    );
    await client.sessions.end("session-2");
    expect(reauthenticate.mock.calls).toEqual([[{ operation: "sessions.end", accepts: ["password", "totpCode"] }]]);
    expect(server.sentTo("/auth/sessions/session-2").map(({ body }) => body)).toEqual([undefined, { totpCode: "123456" }]);
  });
});

describe("client.sessions.endOthers", () => {
  it("SE-2: ends the others with POST /auth/sessions/end-others, answers how many, and stays signed in", async () => {
    const { client, server, signedOut } = await signedInSessionsClient(() => ({ code: 0, data: { ended: 3 } }));
    expect(await client.sessions.endOthers()).toEqual({ ended: 3 });
    expect(await client.sessions.endOthers({ password: "pw" })).toEqual({ ended: 3 });
    expect(server.sentTo("/auth/sessions/end-others").map(({ method, body }) => [method, body])).toEqual([
      ["POST", {}],
      ["POST", { password: "pw" }],
    ]);
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe(currentToken);
  });

  it("a 40001 asks reauthenticate once for sessions.endOthers and sends the request once more with the proof", async () => {
    const reauthenticate = vi.fn(() => ({ password: "pw" }));
    const { client, server } = await signedInSessionsClient(
      (request) => ((request.body as { password?: string }).password ? { code: 0, data: { ended: 1 } } : reauthenticationNeeded),
      { reauthenticate },
    );
    expect(await client.sessions.endOthers()).toEqual({ ended: 1 });
    expect(reauthenticate.mock.calls).toEqual([[{ operation: "sessions.endOthers", accepts: ["password", "totpCode"] }]]);
    expect(server.sentTo("/auth/sessions/end-others").map(({ body }) => body)).toEqual([{}, { password: "pw" }]);
  });
});

describe("client.sessions.endAll", () => {
  it("signs out everywhere with DELETE /auth/sessions, answers how many ended, forgets the tokens and emits signedOut logout_everywhere", async () => {
    const { client, server, signedOut } = await signedInSessionsClient(() => ({ code: 0, data: { ended: 2 } }));
    expect(await client.sessions.endAll()).toEqual({ ended: 2 });
    expect(server.sentTo("/auth/sessions").map(({ method, authorization }) => [method, authorization])).toEqual([
      ["DELETE", `Bearer ${currentToken}`],
    ]);
    expect(signedOut).toEqual(["logout_everywhere"]);
    expect(await client.accessToken()).toBeNull();
    expect(server.sentTo("/auth/logout")).toEqual([]);
  });

  it("a refused sign-out everywhere rejects and keeps the tokens: nothing ended", async () => {
    const { client, signedOut } = await signedInSessionsClient(() => ({ code: 50000, message: "Internal error", status: 500 }));
    await expect(client.sessions.endAll()).rejects.toMatchObject({ code: 50000 });
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe(currentToken);
  });

  it("waits for a refresh under way before forgetting the tokens, so the refresh cannot store them again after", async () => {
    let openRefresh!: () => void;
    const refreshHeld = new Promise<void>((resolve) => {
      openRefresh = resolve;
    });
    const { client, server } = await signedInSessionsClient(async (request) => {
      if (request.path === "/auth/refresh") {
        await refreshHeld;
        return { code: 0, data: tokenSet(2) };
      }
      return { code: 0, data: { ended: 1 } };
    });
    const refreshed = client.refresh();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const ended = client.sessions.endAll();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.sentTo("/auth/sessions")).toHaveLength(1);
    openRefresh();
    await refreshed;
    await ended;
    expect(await client.accessToken()).toBeNull();
  });
});
