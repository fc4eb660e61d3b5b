import { describe, expect, it } from "vitest";
import { createAuthClient } from "./client.js";
import { cookieModeTokenStore, cookieRefreshLock } from "./cookie-mode.js";
import { AuthClientError } from "./errors.js";
import {
  type ScriptedAnswer,
  type ScriptedRequest,
  scriptedBaseUrl,
  scriptedServer,
  tokenSet,
} from "./scripted-server.test-support.js";
import { memoryTokenStore } from "./token-store.js";

/** A token set as the server answers it in cookie mode: no refresh token. */
function cookieTokenSet(n: number) {
  const { refreshToken: _inTheCookie, ...set } = tokenSet(n);
  return set;
}

/** A cookie-mode client of a scripted server; its login answers {@link cookieTokenSet} 1, `route` the rest. */
function cookieClient(route: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>) {
  const server = scriptedServer((request) =>
    request.path === "/auth/login" ? { code: 0, data: cookieTokenSet(1) } : route(request),
  );
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, tokens: "cookie", fetch: server.fetch });
  const events: string[] = [];
  client.on("signedIn", ({ user }) => events.push(`signedIn ${user.username}`));
  client.on("signedOut", ({ reason }) => events.push(`signedOut ${reason}`));
  return { client, server, events };
}

const refused = { code: 40101, message: "No session cookie was sent; sign in again", status: 401 };

describe('cookie mode (tokens: "cookie")', () => {
  it("CK-1: every request asks for cookie mode and carries the origin's cookies; the body of refresh and logout holds no token", async () => {
    let n = 1;
    const { client, server } = cookieClient(() => {
      n += 1;
      return { code: 0, data: cookieTokenSet(n) };
    });
    await client.login({ username: "alice", password: "pw" });
    await client.refresh();
    await client.logout();
    expect(server.sent.map((request) => request.path)).toEqual(["/auth/login", "/auth/refresh", "/auth/logout"]);
    for (const request of server.sent) {
      expect(request.headers.get("x-portcullis-token-delivery")).toBe("cookie");
      expect(request.credentials).toBe("same-origin");
    }
    expect(server.sentTo("/auth/refresh")[0]?.body).toEqual({});
    expect(server.sentTo("/auth/logout")[0]?.body).toEqual({});
    expect(await client.accessToken()).toBeNull();
  });

  it("CK-1: a client that keeps its tokens in a store sends no such header, and its refresh token in the body", async () => {
    const server = scriptedServer((request) => ({ code: 0, data: tokenSet(request.path === "/auth/login" ? 1 : 2) }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await client.login({ username: "alice", password: "pw" });
    await client.refresh();
    expect(server.sent.map((request) => request.headers.get("x-portcullis-token-delivery"))).toEqual([null, null]);
    expect(server.sentTo("/auth/refresh")[0]?.body).toEqual({ refreshToken: "refresh-1" });
  });

  it("CK-1: an answer that carries a refresh token in cookie mode is invalid_response: the server did not take up cookie mode", async () => {
    const server = scriptedServer(() => ({ code: 0, data: tokenSet(1) }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, tokens: "cookie", fetch: server.fetch });
    const error = await client.login({ username: "alice", password: "pw" }).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(AuthClientError);
    expect((error as AuthClientError).kind).toBe("invalid_response");
    expect(await client.currentUser()).toBeNull();
  });

  it("restore after a reload: one refresh for every call at once, the session back and signedIn emitted; then no request", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { client, server, events } = cookieClient(async (request) => {
      if (request.path === "/auth/refresh") await held;
      return { code: 0, data: cookieTokenSet(2) };
    });
    const restores = [client.restore(), client.restore(), client.restore()];
    release();
    const users = await Promise.all(restores);
    expect(users.map((user) => user?.username)).toEqual(["alice", "alice", "alice"]);
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
    expect(server.sentTo("/auth/refresh")[0]?.body).toEqual({});
    expect(events).toEqual(["signedIn alice"]);
    expect(await client.accessToken()).toBe("access-2");
    expect((await client.restore())?.username).toBe("alice");
    expect(server.sent).toHaveLength(1);
  });

  it("restore without a session: null, nothing emitted, and the next restore asks again", async () => {
    const { client, server, events } = cookieClient(() => refused);
    expect(await client.restore()).toBeNull();
    expect(await client.restore()).toBeNull();
    expect(server.sentTo("/auth/refresh")).toHaveLength(2);
    expect(events).toEqual([]);
  });

  it("restore that meets no answer, or a throttle, rejects and keeps nothing", async () => {
    const { client } = cookieClient(() => ({ code: 42900, message: "Too many attempts", status: 429 }));
    const error = await client.restore().catch((reason: unknown) => reason);
    expect((error as AuthClientError).code).toBe(42900);
    expect(await client.currentUser()).toBeNull();
  });

  it("restore outside cookie mode sends nothing", async () => {
    const server = scriptedServer(() => ({ code: 0, data: tokenSet(1) }));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    expect(await client.restore()).toBeNull();
    await client.login({ username: "alice", password: "pw" });
    expect((await client.restore())?.username).toBe("alice");
    expect(server.sent.map((request) => request.path)).toEqual(["/auth/login"]);
  });

  it("logout after a reload, before any restore, still sends the cookie to be revoked; with no session it is quiet", async () => {
    const { client, server, events } = cookieClient((request) =>
      request.path === "/auth/logout" ? { code: 0, data: {} } : refused,
    );
    await client.logout();
    expect(server.sentTo("/auth/logout")).toHaveLength(1);
    expect(server.sentTo("/auth/logout")[0]?.body).toEqual({});
    expect(events).toEqual([]);
    const gone = cookieClient(() => refused);
    await gone.client.logout();
    expect(gone.server.sentTo("/auth/logout")).toHaveLength(1);
    expect(gone.events).toEqual([]);
  });

  it("a refused refresh by cookie signs out", async () => {
    const { client, events } = cookieClient(() => refused);
    await client.login({ username: "alice", password: "pw" });
    await expect(client.refresh()).rejects.toMatchObject({ code: 40101 });
    expect(events).toEqual(["signedIn alice", "signedOut session_ended"]);
  });

  it("cookie mode takes no store, and tokens takes only its two values", () => {
    expect(() => createAuthClient({ tokens: "cookie", store: memoryTokenStore() })).toThrow(TypeError);
    expect(() => createAuthClient({ tokens: "session" as "cookie" })).toThrow(/tokens must be "store" or "cookie"/);
  });

  it("RT-2: the cookie-mode store runs refreshes under one Web Lock of the origin", async () => {
    const taken: string[] = [];
    const store = cookieModeTokenStore({
      request: (name, task) => {
        taken.push(name);
        return task();
      },
    });
    expect(await store.runExclusive?.(async () => "done")).toBe("done");
    expect(taken).toEqual([cookieRefreshLock]);
    expect(cookieModeTokenStore(undefined).runExclusive).toBeUndefined();
  });
});
