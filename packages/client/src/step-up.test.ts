import { IDBFactory } from "fake-indexeddb";
import { describe, expect, it } from "vitest";
import { AuthClientError } from "./errors.js";
import { createClientEvents } from "./events.js";
import { browserPasskeyCeremonies } from "./passkeys.js";
import {
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  signedInScriptedClient,
  tokenSet,
} from "./scripted-server.test-support.js";
import { createSession } from "./session.js";
import { type StepUpRequest, createStepUp, requirementOf } from "./step-up.js";
import {
  type KeyValueStorage,
  type LockManagerLike,
  type TokenStore,
  memoryTokenStore,
  webStorageTokenStore,
} from "./token-store.js";
import { createTransport } from "./transport.js";

/** A signed-in session of a scripted server whose re-authentication answers `access-9`, and its step-up. */
async function stepUpOf(reauthentication: () => { code: number; data?: unknown }) {
  const server = scriptedServer((request) =>
    request.path === "/auth/login" ? { code: 0, data: tokenSet(1) } : reauthentication(),
  );
  const store = memoryTokenStore();
  const events = createClientEvents();
  const session = createSession({
    transport: createTransport(scriptedBaseUrl, server.fetch),
    store,
    events,
    now: () => 0,
    refreshAheadSeconds: 0,
  });
  await session.begin({ ...tokenSet(1), tokenType: "Bearer" });
  return { server, store, events, stepUp: createStepUp(session, events, browserPasskeyCeremonies) };
}

/** A Web Storage area in a Map. */
function mapStorage(): KeyValueStorage {
  const entries = new Map<string, string>();
  return {
    getItem: (key) => entries.get(key) ?? null,
    setItem: (key, value) => {
      entries.set(key, value);
    },
    removeItem: (key) => {
      entries.delete(key);
    },
  };
}

/** Exclusive locks within this process, as `navigator.locks` gives them: each callback runs once the earlier ones settled. */
function processLocks(): LockManagerLike {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    request(_name, callback) {
      const turn = queue.then(callback);
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

/** Every way the client may keep its tokens. */
const storeModes: [string, () => TokenStore][] = [
  ["memoryTokenStore", memoryTokenStore],
  ["webStorageTokenStore", () => webStorageTokenStore(mapStorage())],
  ["webStorageTokenStore with locks", () => webStorageTokenStore(mapStorage(), { locks: processLocks() })],
  [
    "webStorageTokenStore with locks and an IndexedDB copy",
    () => webStorageTokenStore(mapStorage(), { locks: processLocks(), indexedDB: new IDBFactory() }),
  ],
];

/** A promise and the function that resolves it: a script's answer held until the test lets it go. */
function held<T = void>(): { promise: Promise<T>; release: (value: T) => void } {
  let release: (value: T) => void = () => {};
  const promise = new Promise<T>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

/** A re-authentication's answer: the tokens of the new session that replaced the signed-in one (ASVS 7.2.4). */
const raised = { code: 0, data: tokenSet(9, 60) };

describe("STUP-2, ASVS 7.5.3: the client's step-up", () => {
  it("STUP-2, ASVS 7.5.3, 7.2.4: requests that meet a 40104 together wait on one stepUpRequired; a re-authentication lets them all go, and stores the new session's access and refresh tokens", async () => {
    const { events, stepUp, store, server } = await stepUpOf(() => raised);
    const steps: StepUpRequest[] = [];
    const signedIn: unknown[] = [];
    events.on("stepUpRequired", (step) => steps.push(step));
    events.on("signedIn", (detail) => signedIn.push(detail));
    const waiting = [stepUp.satisfy({ maxAge: 300 }), stepUp.satisfy({ amr: ["mfa"] }), stepUp.satisfy({})];
    expect(steps.map((step) => step.required)).toEqual([{ maxAge: 300 }]);
    expect(await steps[0]?.reauthenticate({ password: "pw", totpCode: "123456" })).toEqual(scriptedUser);
    expect(await Promise.all(waiting)).toEqual([true, true, true]);
    expect(server.sentTo("/auth/reauthenticate").map((request) => [request.body, request.authorization])).toEqual([
      [{ password: "pw", totpCode: "123456" }, "Bearer access-1"],
    ]);
    expect(await store.load()).toEqual({
      accessToken: "access-9",
      refreshToken: "refresh-9",
      expiresAt: 60_000,
      user: scriptedUser,
    });
    expect(signedIn, "the same user carries on: no second signedIn").toEqual([]);
    // The next 40104 is a step-up of its own.
    void stepUp.satisfy({ maxAge: 60 });
    expect(steps).toHaveLength(2);
  });

  it("STUP-2, ASVS 7.5.3: without a listener nothing waits; a cancel lets every waiting request answer its 40104; a refused proof leaves them waiting", async () => {
    let answer: { code: number; data?: unknown } = { code: 40100 };
    const { events, stepUp } = await stepUpOf(() => answer);
    expect(await stepUp.satisfy({ maxAge: 300 })).toBe(false);
    const steps: StepUpRequest[] = [];
    events.on("stepUpRequired", (step) => steps.push(step));
    const waiting = [stepUp.satisfy({ maxAge: 300 }), stepUp.satisfy({ maxAge: 300 })];
    const refused = await steps[0]?.reauthenticate({ password: "wrong" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AuthClientError);
    expect((refused as AuthClientError).code).toBe(40100);
    answer = { code: 0, data: { accessToken: "access-9", tokenType: "Bearer", expiresIn: 60, user: scriptedUser } };
    const noRefreshToken = await steps[0]?.reauthenticate({ password: "pw" }).catch((error: unknown) => error);
    expect((noRefreshToken as AuthClientError).kind, "a re-authentication answers a whole token set").toBe("invalid_response");
    answer = { code: 0, data: { accessToken: 7 } };
    const malformed = await steps[0]?.reauthenticate({ password: "pw" }).catch((error: unknown) => error);
    expect((malformed as AuthClientError).kind).toBe("invalid_response");
    steps[0]?.cancel();
    expect(await Promise.all(waiting)).toEqual([false, false]);
    answer = raised;
    expect(await steps[0]?.reauthenticate({ password: "pw" })).toEqual(scriptedUser);
  });

  it("STUP-2, ASVS 7.5.3: the requirement of a 40104 is read as far as it is one: maxAge a number, amr the strings of a list", () => {
    expect(requirementOf({ required: { maxAge: 300, amr: ["mfa", 7, "hwk"] } })).toEqual({ maxAge: 300, amr: ["mfa", "hwk"] });
    expect(requirementOf({ required: { maxAge: "300", amr: "mfa" } })).toEqual({});
    for (const data of [undefined, null, {}, { required: null }, { required: "x" }]) expect(requirementOf(data)).toEqual({});
  });

  it("STUP-2, ASVS 7.5.3: client.fetch waits on a 40104 of the app, then sends the request once more with the raised token; a second 40104 is the answer", async () => {
    const stepUpRequired = (required: unknown) =>
      new Response(JSON.stringify({ code: 40104, message: "Step-up required", data: { required } }), {
        status: 401,
        headers: { "content-type": "application/json" },
      });
    const { client, server } = await signedInScriptedClient((request) => {
      if (request.path === "/auth/reauthenticate") return raised;
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(2) };
      if (request.url.endsWith("/still")) return stepUpRequired({ amr: ["hwk"] });
      return request.authorization === "Bearer access-9" ? new Response("ok") : stepUpRequired({ maxAge: 300 });
    });
    const seen: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      seen.push(step.required);
      void step.reauthenticate({ password: "pw" });
    });
    const answered = await client.fetch(`${scriptedBaseUrl}/things`);
    expect([answered.status, await answered.text()]).toEqual([200, "ok"]);
    const still = await client.fetch(`${scriptedBaseUrl}/still`);
    expect(still.status).toBe(401);
    expect(await still.json()).toMatchObject({ code: 40104 });
    expect(seen).toEqual([{ maxAge: 300 }, { amr: ["hwk"] }]);
    expect(server.sent.filter((request) => request.url.endsWith("/still"))).toHaveLength(2);
    expect(server.sentTo("/auth/refresh")).toHaveLength(0);
  });
  it.each(storeModes)(
    "STUP-2, ASVS 7.2.4: in every token store (%s) a re-authentication leaves the new session's access and refresh tokens, as a sign-in does: the retry and the next refresh use them",
    async (_mode, makeStore) => {
      const store = makeStore();
      const { client, server, signedOut } = await signedInScriptedClient(
        (request) => {
          if (request.path === "/auth/reauthenticate") return raised;
          if (request.path === "/auth/refresh") {
            return request.body && (request.body as { refreshToken?: string }).refreshToken === "refresh-9"
              ? { code: 0, data: tokenSet(10) }
              : { code: 40101, status: 401 };
          }
          if (request.authorization === "Bearer access-1") {
            return { code: 40104, status: 401, data: { required: { maxAge: 300 } } };
          }
          return { code: 0, data: scriptedUser };
        },
        { store },
      );
      client.on("stepUpRequired", (step) => {
        void step.reauthenticate({ password: "pw" });
      });
      const answered = await client.fetch(`${scriptedBaseUrl}/things`);
      expect(answered.status).toBe(200);
      expect(server.sent.filter((request) => request.path === "/things").map((request) => request.authorization)).toEqual([
        "Bearer access-1",
        "Bearer access-9",
      ]);
      expect(await store.load()).toMatchObject({ accessToken: "access-9", refreshToken: "refresh-9" });
      if (store.loadLatest) expect(await store.loadLatest()).toMatchObject({ refreshToken: "refresh-9" });
      await client.refresh();
      expect(server.sentTo("/auth/refresh").map((request) => request.body)).toEqual([{ refreshToken: "refresh-9" }]);
      expect(await client.accessToken()).toBe("access-10");
      expect(signedOut).toEqual([]);
    },
  );

  it("STUP-2, ASVS 7.2.4: a request refused (40101) while a re-authentication is under way waits for it and goes again with the new session's access token; nothing refreshes with the ended session's refresh token", async () => {
    const reauthenticating = held();
    const refused = held();
    const answer = held();
    const { client, server, signedOut } = await signedInScriptedClient(async (request) => {
      if (request.path === "/auth/reauthenticate") {
        reauthenticating.release();
        await answer.promise;
        return raised;
      }
      if (request.path === "/auth/refresh") {
        answer.release();
        return { code: 40101, status: 401 };
      }
      if (request.authorization === "Bearer access-9") return { code: 0, data: scriptedUser };
      // The server ended the session of access-1 as the re-authentication began.
      refused.release();
      return { code: 40101, status: 401 };
    });
    const renewal = client.stepUp.reauthenticate({ password: "pw" });
    await reauthenticating.promise;
    const me = client.me();
    await refused.promise;
    // One turn of the event loop: the client reads the 40101 and decides (a refresh would be sent
    // now, and would let the re-authentication's answer go), before that answer comes.
    await new Promise((resolve) => setImmediate(resolve));
    answer.release();
    expect(await renewal).toEqual(scriptedUser);
    expect(await me).toEqual(scriptedUser);
    expect(server.sentTo("/auth/me").map((request) => request.authorization)).toEqual(["Bearer access-1", "Bearer access-9"]);
    expect(server.sentTo("/auth/refresh")).toEqual([]);
    expect(signedOut).toEqual([]);
    expect(await client.accessToken()).toBe("access-9");
  });

  it("STUP-2, ASVS 7.2.4: a sign-out during a re-authentication waits for it, then ends the new session", async () => {
    const answer = held();
    const reauthenticating = held();
    const { client, server, signedOut } = await signedInScriptedClient(async (request) => {
      if (request.path === "/auth/reauthenticate") {
        reauthenticating.release();
        await answer.promise;
        return raised;
      }
      return { code: 0, data: { ended: true } };
    });
    const renewal = client.stepUp.reauthenticate({ password: "pw" });
    await reauthenticating.promise;
    const loggedOut = client.logout();
    answer.release();
    await renewal;
    await loggedOut;
    expect(server.sentTo("/auth/logout").map((request) => request.body)).toEqual([{ refreshToken: "refresh-9" }]);
    expect(await client.currentUser()).toBeNull();
    expect(signedOut).toEqual(["logout"]);
  });
});

describe("STUP-2: what the client reads and sends", () => {
  it("STUP-2, ASVS 7.2.4: a re-authentication answer that is no whole token set (a string accessToken and refreshToken, a number expiresIn, a user with an id) is invalid_response (code 0, status 200), and the tokens stay as they were", async () => {
    const good = tokenSet(9, 60);
    let answer: unknown = good;
    const { stepUp, store } = await stepUpOf(() => ({ code: 0, data: answer }));
    for (const data of [
      undefined,
      null,
      { ...good, accessToken: 7 },
      { ...good, refreshToken: null },
      { ...good, expiresIn: "60" },
      { ...good, user: {} },
      { accessToken: "access-9", tokenType: "Bearer", expiresIn: 60, user: scriptedUser },
    ]) {
      answer = data;
      const thrown = await stepUp.client.reauthenticate({ password: "pw" }).catch((error: unknown) => error);
      expect(thrown, JSON.stringify(data)).toBeInstanceOf(AuthClientError);
      expect(thrown).toMatchObject({ kind: "invalid_response", code: 0, status: 200 });
      expect(await store.load()).toMatchObject({ accessToken: "access-1", refreshToken: "refresh-1" });
    }
    answer = good;
    expect(await stepUp.client.reauthenticate({ password: "pw" })).toEqual(scriptedUser);
  });

  it("STUP-2, ASVS 7.5.3: a passkey re-authentication begins, runs the ceremony on its options and finishes with the assertion under the ceremony's header", async () => {
    const server = scriptedServer((request) => {
      if (request.path === "/auth/reauthenticate/public-key/begin") {
        return { code: 0, data: { ceremonyId: "ceremony-7", options: { challenge: "Y2g" } } };
      }
      return raised;
    });
    const events = createClientEvents();
    const store = memoryTokenStore();
    const session = createSession({
      transport: createTransport(scriptedBaseUrl, server.fetch),
      store,
      events,
      now: () => 0,
      refreshAheadSeconds: 0,
    });
    await session.begin({ ...tokenSet(1), tokenType: "Bearer" });
    const assertion = {
      id: "credential-1",
      rawId: "credential-1",
      type: "public-key" as const,
      response: { clientDataJSON: "e30", authenticatorData: "AA", signature: "AA" },
      clientExtensionResults: {},
    };
    const given: unknown[] = [];
    const stepUp = createStepUp(session, events, {
      startAuthentication: async (options) => {
        given.push(options);
        return assertion;
      },
      startRegistration: () => Promise.reject(new Error("no registration here")),
    });
    expect(await stepUp.client.reauthenticateWithPasskey()).toEqual(scriptedUser);
    expect(given).toEqual([{ optionsJSON: { challenge: "Y2g" } }]);
    expect(server.sent.map((request) => [request.method, request.path, request.body])).toEqual([
      ["POST", "/auth/reauthenticate/public-key/begin", {}],
      ["POST", "/auth/reauthenticate/public-key/finish", assertion],
    ]);
    expect(server.sentTo("/auth/reauthenticate/public-key/finish")[0]?.headers.get("x-webauthn-ceremony")).toBe("ceremony-7");
    expect(await store.load()).toMatchObject({ accessToken: "access-9", refreshToken: "refresh-9" });
  });

  it("STUP-2: client.fetch emits no stepUpRequired for an answer that is no 40104", async () => {
    const { client } = await signedInScriptedClient(() => new Response("ok"));
    const seen: unknown[] = [];
    client.on("stepUpRequired", (step) => {
      seen.push(step.required);
      step.cancel();
    });
    const answered = await client.fetch(`${scriptedBaseUrl}/things`);
    expect([answered.status, await answered.text()]).toEqual([200, "ok"]);
    expect(seen).toEqual([]);
  });
});
