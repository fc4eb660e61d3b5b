import { describe, expect, it } from "vitest";
import { addUser, makeAuth } from "../flows/fixtures.test-support.js";
import { handleRequest } from "../http/handle-request.js";
import type { HttpRequest, HttpResponse } from "../http/types.js";
import { requireSameOrigin } from "./same-origin.js";

/** A JSON POST over TLS from a loopback peer, with `headers`. */
function jsonPost(url: string, body: unknown, headers: Record<string, string> = {}): HttpRequest {
  const all: Record<string, string> = { "content-type": "application/json", host: "app.example.com", ...headers };
  return {
    method: "POST",
    url,
    header: (name) => all[name],
    body: (async function* () {
      yield new TextEncoder().encode(JSON.stringify(body));
    })(),
    peerAddress: "127.0.0.1",
    secure: true,
  };
}

async function send(
  auth: ReturnType<typeof makeAuth>["auth"],
  request: HttpRequest,
): Promise<HttpResponse & { data: Record<string, unknown>; code: number }> {
  const response = await handleRequest(auth, request);
  if (response === null) throw new Error("expected a Portcullis answer");
  const { code, data } = JSON.parse(response.body) as { code: number; data: Record<string, unknown> };
  return { ...response, code, data };
}

const cookieMode = { "x-portcullis-token-delivery": "cookie" };
const maxAgeOf = (cookie: string | undefined) => Number(/Max-Age=(\d+)/.exec(cookie ?? "")?.[1]);
const tokenOf = (cookie: string | undefined) => /^__Host-portcullis_refresh=([^;]*)/.exec(cookie ?? "")?.[1];

describe("cookie mode", () => {
  it("CK-1: the refresh cookie lives as long as its refresh token: the idle lifetime, cut at the session's absolute end", async () => {
    const harness = makeAuth({ ttl: { access: "1m", refresh: "10m", refreshIdle: "7d" } });
    const { auth, clock } = harness;
    await addUser(auth, "alice");
    const signedIn = await send(
      auth,
      jsonPost("/api/v1/auth/login", { username: "alice", password: "correct horse battery staple" }, cookieMode),
    );
    expect(signedIn.code).toBe(0);
    const first = signedIn.cookies?.find((cookie) => cookie.startsWith("__Host-portcullis_refresh="));
    expect(maxAgeOf(first)).toBe(600);
    clock.advance(4 * 60_000);
    const renewed = await send(
      auth,
      jsonPost(
        "/api/v1/auth/refresh",
        {},
        { ...cookieMode, "sec-fetch-site": "same-origin", cookie: `__Host-portcullis_refresh=${tokenOf(first)}` },
      ),
    );
    expect(renewed.code).toBe(0);
    expect(maxAgeOf(renewed.cookies?.[0])).toBe(360);
  });

  it("CK-1: without a long session, the idle lifetime", async () => {
    const { auth } = makeAuth({ ttl: { refresh: "30d", refreshIdle: "2h" } });
    await addUser(auth, "bob");
    const signedIn = await send(
      auth,
      jsonPost("/api/v1/auth/login", { username: "bob", password: "correct horse battery staple" }, cookieMode),
    );
    expect(maxAgeOf(signedIn.cookies?.find((cookie) => cookie.startsWith("__Host-portcullis_refresh=")))).toBe(7200);
  });

  it("CK-3: the same-origin check: Sec-Fetch-Site same-origin, else an Origin equal to the request's scheme and Host", () => {
    const check =
      (headers: Record<string, string>, secure = true) =>
      () =>
        requireSameOrigin({ header: (name) => headers[name], secure });
    expect(check({ "sec-fetch-site": "same-origin" })).not.toThrow();
    expect(check({ "sec-fetch-site": " Same-Origin " })).not.toThrow();
    expect(check({ origin: "https://app.example.com", host: "app.example.com" })).not.toThrow();
    expect(check({ origin: "HTTPS://App.Example.com", host: "APP.example.com" })).not.toThrow();
    expect(check({ origin: "http://localhost:3000", host: "localhost:3000" }, false)).not.toThrow();
    const refusals: Record<string, string>[] = [
      { "sec-fetch-site": "same-site", origin: "https://app.example.com", host: "app.example.com" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "none" },
      { "sec-fetch-site": "" },
      { origin: "http://app.example.com", host: "app.example.com" },
      { origin: "https://app.example.com:8443", host: "app.example.com" },
      { origin: "https://app.example.com" },
      { origin: "null", host: "app.example.com" },
      { host: "app.example.com" },
      {},
    ];
    for (const refused of refusals) {
      expect(check(refused), JSON.stringify(refused)).toThrow(expect.objectContaining({ code: 40300 }));
    }
  });
});
