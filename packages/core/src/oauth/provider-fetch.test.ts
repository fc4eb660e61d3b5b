// OA-11: a provider's answers (discovery, JWKS, token, user-info) are read up to a size and
// within a time, against a real OpenID provider made to flood or trickle one endpoint.
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, type Server, type Socket, createServer } from "node:net";
import { driveAuthorization } from "@portcullis/testing";
import { afterAll, describe, expect, it } from "vitest";
import {
  type OidcProviderOptions,
  type OidcRoute,
  type OidcTestProvider,
  startOidcProvider,
} from "../../../../test/fixtures/oidc-provider.js";
import { authError, makeAuth, makeClock } from "../flows/fixtures.test-support.js";
import { oauthAuthorize, oauthCallback } from "../flows/oauth-sign-in.js";
import type { MemoryStorage } from "../storage/memory.js";
import { discoveredProvider, plainOAuthProvider } from "./oauth.test-support.js";
import type { OAuthConfig, OAuthProviderConfig } from "./provider-config.js";
import { ProviderRequestFailed, boundedFetch } from "./provider-fetch.js";

const providers: OidcTestProvider[] = [];
afterAll(async () => {
  await Promise.all(providers.map((started) => started.close()));
});

async function provider(options: OidcProviderOptions): Promise<OidcTestProvider> {
  const started = await startOidcProvider(options);
  providers.push(started);
  return started;
}

type Limits = Pick<OAuthConfig, "maxProviderAnswerBytes" | "providerTimeout">;

/** An auth with `corp` configured as `config`, on loopback, its clock at the real time, and the answer limits given. */
function authWith(config: OAuthProviderConfig, limits: Limits = {}) {
  return makeAuth({
    clock: makeClock(Date.now()),
    oauth: { providers: { corp: config }, unsafeAllowHttpLoopbackProviders: true, ...limits },
  });
}

/** A whole sign-in with `corp` as alice, begin to callback; rejects with what refused it. */
async function signIn(harness: ReturnType<typeof authWith>) {
  const { authUrl, browserBinding } = await oauthAuthorize(harness.auth, { provider: "corp" });
  const callback = await driveAuthorization(authUrl, { username: "alice" });
  return oauthCallback(harness.auth, { provider: "corp", query: callback.search, browserBinding });
}

/** What a failed sign-in left in memory storage: no account, and no session (which holds its refresh token). */
function stored(harness: ReturnType<typeof authWith>) {
  const { users, sessions } = (harness.storage as MemoryStorage).sizes();
  return { users, sessions };
}

const nothing = { users: 0, sessions: 0 };
const mebibyte = 1024 * 1024;
const routes: OidcRoute[] = ["discovery", "jwks", "token", "userinfo"];

describe("OA-11: answers from a provider are capped in size and time", () => {
  it("OA-11: a 64 MiB answer at discovery, JWKS, token or user-info is 50300 after reading at most about the 1 MiB cap, and nothing is stored", async () => {
    for (const route of routes) {
      const idp = await provider({ floodAnswer: { route, bytes: 64 * mebibyte } });
      const harness = authWith(discoveredProvider(idp));
      const error = await authError(signIn(harness));
      expect(error, route).toMatchObject({ code: 50300, message: "The sign-in provider could not be reached" });
      expect(error.cause, route).toMatchObject({
        name: "ProviderRequestFailed",
        message: "The provider's answer is longer than 1048576 bytes",
      });
      // What the provider wrote before the connection was dropped: the cap, plus what the
      // sockets' buffers took in; never the whole flood.
      expect(idp.floodSent(), route).toBeLessThan(16 * mebibyte);
      expect(stored(harness), route).toEqual(nothing);
    }
  });

  it("OA-11: a plain OAuth 2.0 provider's 64 MiB user-info answer is 50300 too", async () => {
    const idp = await provider({ floodAnswer: { route: "userinfo", bytes: 64 * mebibyte } });
    const harness = authWith(await plainOAuthProvider(idp, { profile: (info) => ({ subject: String(info.sub) }) }));
    expect(await authError(signIn(harness))).toMatchObject({ code: 50300 });
    expect(idp.floodSent()).toBeLessThan(16 * mebibyte);
    expect(stored(harness)).toEqual(nothing);
  });

  it("OA-11: an answer that trickles a byte every 100 ms is cut at providerTimeout (1 s) with 50300, at each endpoint", async () => {
    for (const route of routes) {
      const idp = await provider({ trickleAnswer: route });
      const harness = authWith(discoveredProvider(idp), { providerTimeout: "1s" });
      const started = performance.now();
      const error = await authError(signIn(harness));
      expect(error, route).toMatchObject({ code: 50300, message: "The sign-in provider could not be reached" });
      expect(String((error.cause as Error).message), route).toBe("The provider did not answer within 1000 ms");
      expect(performance.now() - started, route).toBeLessThan(4000);
      expect(stored(harness), route).toEqual(nothing);
    }
  });

  it("OA-11: maxProviderAnswerBytes sets the cap: a 1.5 MiB user-info answer is 50300 under the default and signs in under 2 MiB", async () => {
    const idp = await provider({ tamperUserInfo: (claims) => ({ ...claims, padding: "x".repeat(1.5 * mebibyte) }) });
    const capped = authWith(discoveredProvider(idp));
    expect(await authError(signIn(capped))).toMatchObject({ code: 50300 });
    const raised = authWith(discoveredProvider(idp), { maxProviderAnswerBytes: 2 * mebibyte });
    expect(await signIn(raised)).toMatchObject({ status: "authenticated", returnPath: "/" });
  });
});

/** Listens on loopback; answers `url` and how many connections it took so far. */
async function listening(server: Server): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  server.on("connection", () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const limits = { maxBytes: 1024, timeoutMs: 2000 };

describe("boundedFetch", () => {
  it("OA-11: an answer of exactly the cap is read whole, with its status and headers; one byte more is refused; no body reads as none", async () => {
    const bodies: Record<string, string> = { "/exact": "x".repeat(1024), "/over": "x".repeat(1025), "/empty": "" };
    const server = await listening(
      createHttpServer((req, res) => {
        res.writeHead(req.url === "/empty" ? 204 : 201, "Made", { "x-answer": String(req.url) }).end(bodies[req.url ?? ""]);
      }),
    );
    try {
      const exact = await boundedFetch(`${server.url}exact`, { method: "GET" }, limits);
      expect([exact.status, exact.statusText, exact.headers.get("x-answer")]).toEqual([201, "Made", "/exact"]);
      expect(await exact.text()).toHaveLength(1024);
      await expect(boundedFetch(`${server.url}over`, { method: "GET" }, limits)).rejects.toThrow(
        new ProviderRequestFailed("The provider's answer is longer than 1024 bytes"),
      );
      const empty = await boundedFetch(`${server.url}empty`, { method: "GET" }, limits);
      expect([empty.status, empty.body]).toEqual([204, null]);
    } finally {
      await server.close();
    }
  });

  it("OA-11: a GET whose connection is reset before any answer (a pooled connection the provider had just closed) is sent once more; a POST is not", async () => {
    // The second connection answers the accept header the retried request carried.
    const resetFirst = (socket: Socket, first: boolean) =>
      socket.once("data", (data: Buffer) => {
        if (first) socket.resetAndDestroy();
        else socket.end(`HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n${/^accept: (.*)$/im.exec(data.toString())?.[1]}`);
      });
    for (const method of ["GET", "POST"]) {
      let seen = 0;
      const server = await listening(
        createServer((socket) => {
          seen += 1;
          resetFirst(socket, seen === 1);
        }),
      );
      try {
        const headers = { accept: "application/json" };
        const answer = boundedFetch(server.url, { method, headers, body: method === "POST" ? "code=x" : undefined }, limits);
        if (method === "GET") expect(await (await answer).text()).toBe("application/json");
        else {
          const error = await answer.catch((failure: unknown) => failure);
          expect(error).toMatchObject({ name: "ProviderRequestFailed", message: "The provider could not be reached" });
          expect((error as Error).cause).toMatchObject({ name: "TypeError", message: "fetch failed" });
        }
        expect(server.connections(), method).toBe(method === "GET" ? 2 : 1);
      } finally {
        await server.close();
      }
    }
  });
});
