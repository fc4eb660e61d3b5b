import { describe, expect, it } from "vitest";
import { type AuthClientOptions, createAuthClient } from "./client.js";
import { AuthClientError } from "./errors.js";
import { createClientEvents } from "./events.js";
import {
  type ScriptedAnswer,
  type ScriptedRequest,
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  tokenSet,
} from "./scripted-server.test-support.js";
import { createSession } from "./session.js";
import { type StoredTokens, type TokenStore, memoryTokenStore } from "./token-store.js";
import { createTransport } from "./transport.js";

const signedIn = { code: 0, data: tokenSet(1) };
const expired = { code: 40101, message: "Invalid or expired token", status: 401 };

/** A client of a scripted server whose login answers tokens `access-1`/`refresh-1`; `route` answers the rest. */
function clientOf(
  route: (request: ScriptedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>,
  options: AuthClientOptions = {},
) {
  const server = scriptedServer((request) => (request.path === "/auth/login" ? signedIn : route(request)));
  const store = options.store ?? memoryTokenStore();
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, ...options, store, fetch: server.fetch });
  const signedOut: string[] = [];
  client.on("signedOut", ({ reason }) => signedOut.push(reason));
  return { client, server, store, signedOut, login: () => client.login({ username: "alice", password: "pw" }) };
}

async function rejectionOf(promise: Promise<unknown>): Promise<AuthClientError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AuthClientError);
  return error as AuthClientError;
}

/** A promise and the function that settles it. */
function gate<T = void>(): { opened: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("the session's tokens", () => {
  it("a sign-in answer without a whole token set is invalid_response, and nothing is stored or announced", async () => {
    const whole = tokenSet(1);
    const { user: _, ...withoutUser } = whole;
    const broken: unknown[] = [
      undefined,
      { ...whole, accessToken: undefined },
      { ...whole, refreshToken: 7 },
      { ...whole, expiresIn: "900" },
      withoutUser,
      { ...whole, user: { ...scriptedUser, id: 1 } },
    ];
    for (const data of broken) {
      const server = scriptedServer(() => ({ code: 0, data }));
      const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
      let announced = 0;
      client.on("signedIn", () => {
        announced += 1;
      });
      const error = await rejectionOf(client.login({ username: "alice", password: "pw" }));
      expect(error.kind, JSON.stringify(data)).toBe("invalid_response");
      expect(await client.currentUser()).toBeNull();
      expect(announced).toBe(0);
    }
  });

  it("the access token's expiry is kept as now + expiresIn seconds, by the client's clock", async () => {
    const { store, login } = clientOf(() => expired, { now: () => 1_000_000 });
    await login();
    expect((await store.load())?.expiresAt).toBe(1_000_000 + 900_000);
  });

  it("refreshAheadSeconds: a request refreshes first only once the token expires within that many seconds", async () => {
    let clock = 0;
    const { client, server, login } = clientOf(
      (request) => (request.path === "/auth/refresh" ? { code: 0, data: tokenSet(2) } : { code: 0, data: scriptedUser }),
      { refreshAheadSeconds: 60, now: () => clock },
    );
    await login();
    clock = 900_000 - 60_001;
    await client.me();
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
    clock = 900_000 - 60_000;
    await client.me();
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-1", "Bearer access-2"]);
  });

  it("refreshAheadSeconds: a refresh ahead that fails but keeps the tokens lets the request go with them; one that ends the session sends nothing", async () => {
    let clock = 0;
    let refreshAnswer: ScriptedAnswer = { code: 50000, message: "Internal error", status: 500 };
    const { client, server, signedOut, login } = clientOf(
      (request) => (request.path === "/auth/refresh" ? refreshAnswer : { code: 0, data: scriptedUser }),
      { refreshAheadSeconds: 60, now: () => clock },
    );
    await login();
    clock = 899_000;
    expect(await client.me()).toEqual(scriptedUser);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-1"]);
    refreshAnswer = { code: 40101, message: "Invalid or expired token", status: 401 };
    expect((await rejectionOf(client.me())).code).toBe(40101);
    expect(server.sentTo("/auth/me")).toHaveLength(1);
    expect(signedOut).toEqual(["session_ended"]);
  });

  it("only a 4xx refusal of the refresh ends the session: 40000 and 40100 do; 42900, 50000 and a code outside the contract keep the tokens", async () => {
    for (const [code, ends] of [
      [40000, true],
      [40100, true],
      [42900, false],
      [50000, false],
      [50300, false],
      [1, false],
    ] as const) {
      const { client, signedOut, login } = clientOf(() => ({
        code,
        message: "No",
        status: code === 1 ? 200 : Math.floor(code / 100),
      }));
      await login();
      expect((await rejectionOf(client.refresh())).code, String(code)).toBe(code);
      expect(signedOut, String(code)).toEqual(ends ? ["session_ended"] : []);
      expect((await client.accessToken()) !== null, String(code)).toBe(!ends);
    }
  });

  it("RT-2: a request refused for a newer token than a refresh that failed meanwhile refreshes that newer token itself", async () => {
    const refreshOfFirst = gate();
    const meWithNewer = gate();
    const { client, store, login } = clientOf(async (request) => {
      if (request.path === "/auth/refresh") {
        const { refreshToken } = request.body as { refreshToken: string };
        if (refreshToken === "refresh-1") {
          await refreshOfFirst.opened;
          return { code: 42900, message: "Too many attempts", status: 429 };
        }
        return { code: 0, data: tokenSet(10) };
      }
      if (request.authorization === "Bearer access-9") {
        await meWithNewer.opened;
        return expired;
      }
      return request.authorization === "Bearer access-10" ? { code: 0, data: scriptedUser } : expired;
    });
    await login();
    const first = client.me();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Another tab renews the tokens while this tab's refresh of the first ones is under way.
    await store.save({ accessToken: "access-9", refreshToken: "refresh-9", expiresAt: Date.now() + 900_000, user: scriptedUser });
    const second = client.me();
    await new Promise((resolve) => setTimeout(resolve, 10));
    refreshOfFirst.open();
    expect((await rejectionOf(first)).code).toBe(42900);
    meWithNewer.open();
    expect(await second).toEqual(scriptedUser);
  });
});

describe("the session's end", () => {
  it("logout on a signed-out client sends nothing and announces nothing", async () => {
    const { client, server, signedOut } = clientOf(() => ({ code: 0 }));
    await client.logout();
    expect(server.sent).toEqual([]);
    expect(signedOut).toEqual([]);
  });

  it("logout forgets the tokens whatever the server answered, and rejects unless the session is gone there (0 or 40101)", async () => {
    for (const [answer, rejects] of [
      [{ code: 0 }, null],
      [expired, null],
      [{ code: 50000, message: "Internal error", status: 500 }, 50000],
      [new Response("<html>bad gateway</html>", { status: 502 }), "invalid_response"],
    ] as const) {
      const { client, signedOut, login } = clientOf(() => (answer instanceof Response ? answer.clone() : answer));
      await login();
      const outcome = await client.logout().then(
        () => null,
        (error: AuthClientError) => (error.kind === "server" ? error.code : error.kind),
      );
      expect(outcome).toBe(rejects);
      expect(signedOut).toEqual(["logout"]);
      expect(await client.accessToken()).toBeNull();
    }
  });

  it("signedOut is announced once per session: a logout that ends after the refresh was refused meanwhile announces nothing more", async () => {
    const logoutAnswer = gate();
    const { client, signedOut, login } = clientOf(async (request) => {
      if (request.path === "/auth/logout") await logoutAnswer.opened;
      return expired;
    });
    await login();
    const logout = client.logout();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await rejectionOf(client.refresh())).code).toBe(40101);
    logoutAnswer.open();
    await logout;
    expect(signedOut).toEqual(["session_ended"]);
  });

  it("logout without an answer rejects with kind network, and the tokens are forgotten all the same", async () => {
    const { client, signedOut, login } = clientOf(() => {
      throw new TypeError("fetch failed");
    });
    await login();
    expect((await rejectionOf(client.logout())).kind).toBe("network");
    expect(signedOut).toEqual(["logout"]);
    expect(await client.accessToken()).toBeNull();
  });

  it("a call that needs tokens on a signed-out client is not_signed_in, with its fixed message, and sends nothing", async () => {
    const { client, server } = clientOf(() => ({ code: 0, data: scriptedUser }));
    const error = await rejectionOf(client.me());
    expect({ kind: error.kind, code: error.code, message: error.message }).toEqual({
      kind: "not_signed_in",
      code: 40101,
      message: "Not signed in",
    });
    expect(server.sent).toEqual([]);
  });

  it("me() keeps the newer user beside the tokens, but not once the client has signed out meanwhile", async () => {
    const admin = { ...scriptedUser, roles: ["admin"] };
    const meAnswer = gate();
    let holdMe = false;
    const { client, login } = clientOf(async (request) => {
      if (request.path === "/auth/me" && holdMe) await meAnswer.opened;
      return request.path === "/auth/me" ? { code: 0, data: admin } : { code: 0 };
    });
    await login();
    await client.me();
    expect((await client.currentUser())?.roles).toEqual(["admin"]);
    holdMe = true;
    const me = client.me();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await client.logout();
    meAnswer.open();
    await me;
    expect(await client.currentUser()).toBeNull();
    expect(await client.accessToken()).toBeNull();
  });
});

/**
 * The store of one tab among others: `load` reads this tab's copy of the shared storage, which
 * `updateCopy` brings up to date later (as Chromium updates a tab's localStorage); `loadLatest`
 * reads the last save of any tab; `runExclusive` counts its runs; `subscribe` keeps the listener.
 */
function tabStore() {
  const state: {
    copy: StoredTokens | null;
    latest: StoredTokens | null;
    exclusive: number;
    insideExclusive: boolean;
    listener?: () => void;
  } = { copy: null, latest: null, exclusive: 0, insideExclusive: false };
  const store: TokenStore = {
    load: () => state.copy,
    save(tokens) {
      state.copy = tokens;
      state.latest = tokens;
    },
    loadLatest: async () => state.latest,
    async runExclusive(task) {
      state.exclusive += 1;
      state.insideExclusive = true;
      try {
        return await task();
      } finally {
        state.insideExclusive = false;
      }
    },
    subscribe(listener) {
      state.listener = listener;
    },
  };
  /** Another tab saves `tokens`: the last save, which this tab's copy does not show yet. */
  const savedElsewhere = (tokens: StoredTokens | null) => {
    state.latest = tokens;
  };
  const updateCopy = () => {
    state.copy = state.latest;
  };
  return { store, state, savedElsewhere, updateCopy };
}

const storedTokens = (n: number): StoredTokens => ({
  accessToken: `access-${n}`,
  refreshToken: `refresh-${n}`,
  expiresAt: Date.now() + 900_000,
  user: scriptedUser,
});

describe("tabs sharing a store", () => {
  it("RT-2: the refresh reads the store's loadLatest under the lock: tokens another tab renewed are used while this tab's copy still shows the spent ones, and no refresh is sent", async () => {
    const tab = tabStore();
    const { client, server, signedOut, login } = clientOf(
      (request) => (request.authorization === "Bearer access-2" ? { code: 0, data: scriptedUser } : expired),
      { store: tab.store },
    );
    await login();
    tab.savedElsewhere(storedTokens(2));

    expect(await client.me()).toEqual(scriptedUser);
    expect(server.sentTo("/auth/refresh")).toEqual([]);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-1", "Bearer access-2"]);
    expect(tab.state.exclusive).toBe(1);
    expect(signedOut).toEqual([]);
  });

  it("RT-2: when the tokens another tab renewed are refused too (renewed before this expiry as well), the refresh goes from them, once", async () => {
    const tab = tabStore();
    const { client, server, signedOut, login } = clientOf(
      (request) => {
        if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(3) };
        return request.authorization === "Bearer access-3" ? { code: 0, data: scriptedUser } : expired;
      },
      { store: tab.store },
    );
    await login();
    tab.savedElsewhere(storedTokens(2));

    expect(await client.me()).toEqual(scriptedUser);
    expect(server.sentTo("/auth/refresh").map((request) => request.body)).toEqual([{ refreshToken: "refresh-2" }]);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual([
      "Bearer access-1",
      "Bearer access-2",
      "Bearer access-3",
    ]);
    expect(signedOut).toEqual([]);
  });

  it("STUP-2, RT-2, ASVS 7.2.4: a re-authentication is sent under the lock with the access token another tab renewed last (loadLatest), and stores the new session's tokens; once another tab signed out it sends nothing", async () => {
    const tab = tabStore();
    const renewed = {
      accessToken: "access-9",
      refreshToken: "refresh-9",
      tokenType: "Bearer",
      expiresIn: 60,
      user: scriptedUser,
    };
    const sentUnderLock: boolean[] = [];
    const { client, server, login } = clientOf(
      () => {
        sentUnderLock.push(tab.state.insideExclusive);
        return { code: 0, data: renewed };
      },
      { store: tab.store },
    );
    await login();
    tab.savedElsewhere(storedTokens(2));
    await client.stepUp.reauthenticate({ password: "pw" });
    expect(server.sentTo("/auth/reauthenticate").map((request) => request.authorization)).toEqual(["Bearer access-2"]);
    expect(sentUnderLock).toEqual([true]);
    expect(tab.state.latest).toMatchObject({ accessToken: "access-9", refreshToken: "refresh-9" });
    tab.savedElsewhere(null);
    expect(await rejectionOf(client.stepUp.reauthenticate({ password: "pw" }))).toMatchObject({ kind: "not_signed_in" });
    expect(server.sentTo("/auth/reauthenticate")).toHaveLength(1);
    expect(tab.state.latest).toBeNull();
  });

  it("logout runs under the lock and revokes the session with the latest refresh token, not this tab's copy of a spent one", async () => {
    const tab = tabStore();
    let exclusiveWhenSent: boolean | undefined;
    const { client, server, signedOut, login } = clientOf(
      () => {
        exclusiveWhenSent = tab.state.insideExclusive;
        return { code: 0 };
      },
      { store: tab.store },
    );
    await login();
    tab.savedElsewhere(storedTokens(2));

    await client.logout();
    expect(server.sentTo("/auth/logout").map((request) => request.body)).toEqual([{ refreshToken: "refresh-2" }]);
    expect(exclusiveWhenSent).toBe(true);
    expect(signedOut).toEqual(["logout"]);
    expect(tab.state.latest).toBeNull();
    expect(await client.currentUser()).toBeNull();
    expect(signedOut).toEqual(["logout"]);
  });

  it("a session another tab ended is announced as signed_out_elsewhere at this tab's next read, once, and the call is not_signed_in", async () => {
    const tab = tabStore();
    const { client, server, signedOut, login } = clientOf(() => ({ code: 0, data: scriptedUser }), { store: tab.store });
    expect((await rejectionOf(client.me())).kind).toBe("not_signed_in");
    expect(signedOut).toEqual([]);
    await login();
    tab.savedElsewhere(null);
    tab.updateCopy();

    expect((await rejectionOf(client.me())).kind).toBe("not_signed_in");
    expect(signedOut).toEqual(["signed_out_elsewhere"]);
    expect(await client.currentUser()).toBeNull();
    await client.logout();
    expect(signedOut).toEqual(["signed_out_elsewhere"]);
    expect(server.sent.map((request) => request.path)).toEqual(["/auth/login"]);
  });

  it("the store's subscribe makes the announcement at once, without a call; a session this tab never saw is not announced", async () => {
    const tab = tabStore();
    const { signedOut, login } = clientOf(() => ({ code: 0 }), { store: tab.store });
    tab.state.listener?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signedOut).toEqual([]);
    await login();
    tab.savedElsewhere(null);
    tab.updateCopy();
    tab.state.listener?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signedOut).toEqual(["signed_out_elsewhere"]);
  });

  it("a tab that finds the session gone under the lock (another tab's refresh was refused) announces signed_out_elsewhere, and its request rejects with its own refusal", async () => {
    const tab = tabStore();
    const { client, server, signedOut, login } = clientOf(() => expired, { store: tab.store });
    await login();
    tab.savedElsewhere(null);

    const error = await rejectionOf(client.me());
    expect({ kind: error.kind, code: error.code }).toEqual({ kind: "server", code: 40101 });
    expect(signedOut).toEqual(["signed_out_elsewhere"]);
    expect(server.sentTo("/auth/refresh")).toEqual([]);
  });

  it("a store whose load fails when another tab writes costs the page nothing: no unhandled rejection, no event", async () => {
    const tab = tabStore();
    const { signedOut, login } = clientOf(() => ({ code: 0 }), { store: tab.store });
    await login();
    tab.store.load = () => {
      throw new Error("storage is gone");
    };
    tab.state.listener?.();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signedOut).toEqual([]);
  });
});

describe("a session's end, announced once", () => {
  /** An access token the client can read the `sid` of (the signature is never checked by the client). */
  const tokenOfSession = (sid: string, n: number) =>
    `${Buffer.from('{"alg":"HS256"}').toString("base64url")}.${Buffer.from(JSON.stringify({ sid, n })).toString("base64url")}.c2ln`;

  it("RT-2: tokens of a session this tab saw end, saved by another tab after it, are not held again: its end is announced once", async () => {
    const store = memoryTokenStore();
    const server = scriptedServer((request) =>
      request.path === "/auth/login" ? { code: 0, data: { ...tokenSet(1), accessToken: tokenOfSession("s1", 1) } } : expired,
    );
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, store, fetch: server.fetch });
    const events: string[] = [];
    client.on("signedOut", ({ reason }) => events.push(reason));
    await client.login({ username: "alice", password: "pw" });
    // This tab's refresh meets the reuse the other tab's caused: the session has ended.
    await rejectionOf(client.refresh());
    expect(events).toEqual(["session_ended"]);
    // The other tab's refresh of the same session answered first and saves its tokens only now.
    await store.save({
      accessToken: tokenOfSession("s1", 2),
      refreshToken: "refresh-2",
      expiresAt: Date.now() + 60_000,
      user: scriptedUser,
    });
    expect((await rejectionOf(client.me())).code).toBe(40101);
    expect(events).toEqual(["session_ended"]);
    // A new session's tokens are held again, and their end is announced.
    await store.save({
      accessToken: tokenOfSession("s2", 1),
      refreshToken: "refresh-3",
      expiresAt: Date.now() + 60_000,
      user: scriptedUser,
    });
    await rejectionOf(client.me());
    expect(events).toEqual(["session_ended", "session_ended"]);
  });
});

describe("the session's re-authentication (STUP-2)", () => {
  it("STUP-2, RL-5: a re-authentication's answer, which carries no device token, keeps the one the sign-in gave for the next sign-in", async () => {
    const server = scriptedServer((request) =>
      request.path === "/auth/login"
        ? { code: 0, data: { ...tokenSet(1), deviceToken: "device-1" } }
        : request.path === "/auth/reauthenticate"
          ? { code: 0, data: tokenSet(2) }
          : { code: 0 },
    );
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, store: memoryTokenStore() });
    await client.login({ username: "alice", password: "pw" });
    await client.stepUp.reauthenticate({ password: "pw" });
    expect(await client.accessToken()).toBe("access-2");
    await client.login({ username: "alice", password: "pw" });
    expect(server.sentTo("/auth/login").map((request) => (request.body as { deviceToken?: string }).deviceToken)).toEqual([
      undefined,
      "device-1",
    ]);
  });

  it("STUP-2: a re-authentication whose access token is refused refreshes once and is sent again; a refused proof rejects with its own code", async () => {
    const { client, server, login } = clientOf((request) => {
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(2) };
      if (request.authorization === "Bearer access-1") return expired;
      const { password } = request.body as { password?: string };
      return password === "pw" ? { code: 0, data: tokenSet(3) } : { code: 40100, message: "Invalid password", status: 401 };
    });
    await login();
    expect(await client.stepUp.reauthenticate({ password: "pw" })).toEqual(scriptedUser);
    expect(server.sentTo("/auth/reauthenticate").map((request) => request.authorization)).toEqual([
      "Bearer access-1",
      "Bearer access-2",
    ]);
    expect(server.sentTo("/auth/refresh")).toHaveLength(1);
    expect(await client.accessToken()).toBe("access-3");
    const refused = await rejectionOf(client.stepUp.reauthenticate({ password: "wrong" }));
    expect([refused.kind, refused.code, refused.message]).toEqual(["server", 40100, "Invalid password"]);
    expect(await client.accessToken()).toBe("access-3");
  });

  it("STUP-2, ASVS 7.2.4: while a second re-authentication is under way, the end of the first does not stop a refused request from waiting for it: no refresh is sent", async () => {
    const arrived = gate();
    const held = gate();
    const { client, server, login } = clientOf(async (request) => {
      if (request.path === "/auth/reauthenticate") {
        if ((request.body as { password: string }).password === "first") return { code: 0, data: tokenSet(2) };
        arrived.open();
        await held.opened;
        return { code: 0, data: tokenSet(3) };
      }
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(9) };
      return request.authorization === "Bearer access-3" ? { code: 0, data: scriptedUser } : expired;
    });
    await login();
    const first = client.stepUp.reauthenticate({ password: "first" });
    const second = client.stepUp.reauthenticate({ password: "second" });
    await first;
    await arrived.opened;
    const me = client.me();
    held.open();
    expect(await me).toEqual(scriptedUser);
    expect(await second).toEqual(scriptedUser);
    expect(server.sentTo("/auth/refresh")).toEqual([]);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-2", "Bearer access-3"]);
  });

  it("STUP-2, STUP-5: replace keeps a new session's tokens under the lock and answers its user", async () => {
    const tab = tabStore();
    const session = createSession({
      transport: createTransport(scriptedBaseUrl, scriptedServer(() => ({ code: 0 })).fetch),
      store: tab.store,
      events: createClientEvents(),
      now: () => 0,
      refreshAheadSeconds: 0,
    });
    expect(await session.replace({ ...tokenSet(5), tokenType: "Bearer" })).toEqual(scriptedUser);
    expect(tab.state.latest).toMatchObject({ accessToken: "access-5", refreshToken: "refresh-5" });
    expect(tab.state.exclusive).toBe(1);
  });
});
