import {
  type AuthClient,
  AuthClientError,
  type AuthUser,
  type FetchFunction,
  type TokenStore,
  memoryTokenStore,
} from "@portcullis/client";
import { logout } from "@portcullis/core";
import { describe, expect, it } from "vitest";
import {
  type ClientTestServer,
  clientTargets,
  envelopeOf,
  expireAccessTokens,
  recordEvents,
  rejection,
  servedPerTest,
  serverEvents,
  signedInClient,
  startClientServer,
  statusIn,
} from "./client-servers.js";

/** How many requests meet the expired access token at once: half through `client.fetch`, half through `me()`. */
const concurrentRequests = 20;
const thingsPath = "/api/v1/things";
const mePath = "/api/v1/auth/me";

/**
 * `concurrentRequests` requests started together, alternately `client.fetch` of an app route and
 * `client.me()`, each settled.
 */
function concurrently(
  client: AuthClient,
): Promise<{ fetched: PromiseSettledResult<Response>[]; users: PromiseSettledResult<AuthUser>[] }> {
  const fetches: Promise<Response>[] = [];
  const users: Promise<AuthUser>[] = [];
  for (let index = 0; index < concurrentRequests; index += 1) {
    if (index % 2 === 0) fetches.push(client.fetch(thingsPath));
    else users.push(client.me());
  }
  return Promise.all([Promise.allSettled(fetches), Promise.allSettled(users)]).then(([fetched, settledUsers]) => ({
    fetched,
    users: settledUsers,
  }));
}

/** The values of settled promises; fails the test on a rejection. */
function fulfilled<T>(outcomes: PromiseSettledResult<T>[]): T[] {
  return outcomes.map((outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
}

/** The reasons of settled promises; fails the test on a fulfilment. */
function rejected(outcomes: PromiseSettledResult<unknown>[]): unknown[] {
  return outcomes.map((outcome) => {
    expect(outcome.status).toBe("rejected");
    return (outcome as PromiseRejectedResult).reason;
  });
}

/** A fetch that answers `POST …/auth/refresh` itself while `blocking()` says so, as a gateway in front of the server would. */
function refreshBlockedBy(blocking: () => FetchFunction | null): FetchFunction {
  return (input, init) => {
    const request = new Request(input, init);
    const gateway = new URL(request.url).pathname.endsWith("/auth/refresh") ? blocking() : null;
    return (gateway ?? fetch)(request);
  };
}

describe.each(clientTargets)("single-flight refresh against %s", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it(`${concurrentRequests} concurrent requests across an access-token expiry: one refresh, each request sent again once and answered; the session lives on (RT-2 never fired)`, async () => {
    const harness = await serve();
    const reused = serverEvents(harness.auth, "refresh_token.reused");
    const { client, user } = await signedInClient(harness, "alice");
    const expired = await client.accessToken();
    expireAccessTokens(harness);

    const { fetched, users } = await concurrently(client);

    expect(harness.refreshesSent()).toBe(1);
    expect(harness.countSent("GET", thingsPath)).toBe(concurrentRequests);
    expect(harness.countSent("GET", mePath)).toBe(concurrentRequests);
    for (const response of fulfilled(fetched)) {
      expect(response.status).toBe(200);
      expect(await envelopeOf(response)).toMatchObject({ code: 0, data: { userId: user.id } });
    }
    expect(fulfilled(users).map(({ username }) => username)).toEqual(Array(concurrentRequests / 2).fill("alice"));
    expect(await client.accessToken()).not.toBe(expired);
    expect(reused).toEqual([]);

    // The renewed refresh token is the session's live one: another refresh works.
    expect((await client.refresh()).username).toBe("alice");
    expect(harness.refreshesSent()).toBe(2);
    expect(reused).toEqual([]);
  });

  it("refreshAheadSeconds: requests near the expiry refresh first, once between them, and each is sent once", async () => {
    const harness = await serve();
    const { client } = await signedInClient(harness, "bob", { refreshAheadSeconds: 60 });
    harness.clock.advance((harness.auth.config.ttl.access - 30) * 1000);

    const { fetched, users } = await concurrently(client);

    expect(fulfilled(fetched).map(({ status }) => status)).toEqual(Array(concurrentRequests / 2).fill(200));
    expect(fulfilled(users)).toHaveLength(concurrentRequests / 2);
    expect(harness.refreshesSent()).toBe(1);
    expect(harness.countSent("GET", thingsPath) + harness.countSent("GET", mePath)).toBe(concurrentRequests);
  });

  it("client.refresh() called many times at once sends one refresh; logout() while it is under way waits for it and revokes the renewed session", async () => {
    const harness = await serve();
    const store = memoryTokenStore();
    const revoked: unknown[] = [];
    const notingLogouts: FetchFunction = async (input, init) => {
      const request = new Request(input, init);
      if (request.url.endsWith("/auth/logout"))
        revoked.push(((await request.clone().json()) as { refreshToken: unknown }).refreshToken);
      return fetch(request);
    };
    const { client } = await signedInClient(harness, "erin", { store, fetch: notingLogouts });
    const events = recordEvents(client);

    const refreshed = Array.from({ length: 5 }, () => client.refresh());
    const loggedOut = client.logout();
    expect((await Promise.all(refreshed)).map(({ username }) => username)).toEqual(Array(5).fill("erin"));
    const renewed = await store.load();
    await loggedOut;

    expect(harness.refreshesSent()).toBe(1);
    expect(revoked).toEqual([renewed?.refreshToken]);
    expect(events).toEqual([["signedOut", { reason: "logout" }]]);
    expect(await store.load()).toBeNull();
    const afterLogout = await fetch(`${harness.baseUrl}/auth/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refreshToken: renewed?.refreshToken }),
    });
    expect((await envelopeOf(afterLogout)).code).toBe(40101);
  });

  const refusedRefreshes: [string, (harness: ClientTestServer, store: TokenStore) => Promise<void>][] = [
    [
      "the session was revoked on the server",
      async (harness, store) => {
        await logout(harness.auth, { refreshToken: (await store.load())?.refreshToken as string });
        expireAccessTokens(harness);
      },
    ],
    [
      "the refresh token expired",
      async (harness) => {
        harness.clock.advance((harness.auth.config.ttl.refresh + 60) * 1000);
      },
    ],
  ];

  it.each(refusedRefreshes)(
    "a refused refresh (%s): every caller rejects with its 40101, one signedOut, the store empty, and no refresh again",
    async (_reason, endSession) => {
      const harness = await serve();
      const store = memoryTokenStore();
      const { client } = await signedInClient(harness, "carol", { store });
      const events = recordEvents(client);
      await endSession(harness, store);

      const { fetched, users } = await concurrently(client);

      expect(harness.refreshesSent()).toBe(1);
      for (const reason of rejected([...fetched, ...users])) {
        expect(reason).toBeInstanceOf(AuthClientError);
        expect(reason).toMatchObject({ kind: "server", code: 40101, status: statusIn(statusMode, 401) });
      }
      expect(events).toEqual([["signedOut", { reason: "session_ended" }]]);
      expect(await client.currentUser()).toBeNull();
      expect(await client.accessToken()).toBeNull();

      // Signed out: nothing more is refreshed, and an app request goes without a token.
      expect(await rejection(client.me())).toMatchObject({ kind: "not_signed_in" });
      const anonymous = await client.fetch(thingsPath);
      expect(anonymous.status).toBe(statusIn(statusMode, 401));
      expect((await envelopeOf(anonymous)).code).toBe(40101);
      expect(harness.refreshesSent()).toBe(1);
      expect(events).toHaveLength(1);
    },
  );

  it("a throttled refresh (42900 from a gateway: the server never throttles refresh) or an unreachable one keeps the tokens; the next request refreshes", async () => {
    const harness = await serve();
    const closed = await startClientServer(start, statusMode);
    await closed.close();
    const throttled = () =>
      new Response(JSON.stringify({ code: 42900, message: "Too many attempts" }), {
        status: statusIn(statusMode, 429),
        headers: { "content-type": "application/json", "retry-after": "30" },
      });
    const unreachable: FetchFunction = () => fetch(`${closed.baseUrl}/auth/refresh`, { method: "POST" });
    const gateways: [FetchFunction, Partial<AuthClientError>][] = [
      [async () => throttled(), { kind: "server", code: 42900, status: statusIn(statusMode, 429), retryAfter: 30 }],
      [unreachable, { kind: "network", code: null, status: 0 }],
    ];
    let gateway: FetchFunction | null = null;
    const { client } = await signedInClient(harness, "dave", { fetch: refreshBlockedBy(() => gateway) });
    const events = recordEvents(client);

    let refreshes = 0;
    for (const [blocking, expected] of gateways) {
      gateway = blocking;
      expireAccessTokens(harness);
      const stored = await client.accessToken();
      const { fetched, users } = await concurrently(client);
      refreshes += 1;
      expect(harness.refreshesSent()).toBe(refreshes);
      for (const reason of rejected([...fetched, ...users])) expect(reason).toMatchObject(expected);
      expect(events).toEqual([]);
      expect(await client.accessToken()).toBe(stored);

      gateway = null;
      expect((await client.me()).username).toBe("dave");
      refreshes += 1;
      expect(harness.refreshesSent()).toBe(refreshes);
    }
  });
});
