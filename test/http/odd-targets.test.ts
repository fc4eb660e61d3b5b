// HTTP-5 and RL-3: odd request targets, written on raw sockets exactly as given, on every adapter.
import { httpStatusFor } from "@portcullis/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type RawResult, post, rawExchange, rawRequest } from "./client.js";
import { type RunningServer, adapters } from "./servers.js";

/** One odd request under the base path and the business code it must get on every adapter. */
interface OddTarget {
  method: string;
  target: string;
  code: number;
  /** Sent with a live access token. */
  token?: boolean;
  /** A JSON body; POST sends `{` (malformed, 40002 once a route reads it) unless told. */
  body?: string;
}

const long = "a".repeat(15_000);
const label = '{"label":"Laptop"}';

/**
 * Targets that name a path under `<basePath>/auth` (or `/.well-known/jwks.json`) once core reads
 * them: every adapter hands them to core, which answers each in the envelope, byte for byte alike.
 * A malformed or undecodable percent-escape is not decoded: it names no route (40400), or is a
 * route parameter's value that no session, passkey or provider has.
 */
const underBasePath: OddTarget[] = [
  // Percent-escapes that are not UTF-8, or not escapes at all.
  { method: "GET", target: "/api/v1/auth/%ff", code: 40400 },
  { method: "GET", target: "/api/v1/auth/%c3%28", code: 40400 },
  { method: "GET", target: "/api/v1/auth/me%ff", code: 40400 },
  { method: "GET", target: "/api/v1/auth/sessions/%ZZ", code: 40400 },
  { method: "DELETE", target: "/api/v1/auth/sessions/%ZZ", code: 40101 },
  { method: "DELETE", target: "/api/v1/auth/sessions/%ZZ", code: 40400, token: true },
  { method: "GET", target: "/api/v1/auth/%", code: 40400 },
  { method: "GET", target: "/api/v1/auth/me%", code: 40400 },
  { method: "GET", target: "/api/v1/auth/me%2", code: 40400 },
  { method: "POST", target: "/api/v1/auth/login%ff", code: 40400 },
  { method: "GET", target: "/api/v1/auth/oauth/%ff/authorize", code: 40400 },
  { method: "PUT", target: "/api/v1/auth/public-key/credentials/%ZZ", code: 40400, token: true, body: label },
  { method: "PUT", target: "/api/v1/auth/public-key/credentials/%E0%A4%A", code: 40002, token: true, body: "{" },
  { method: "GET", target: "/api/v1/things/%ff/../../auth/me", code: 40101 },
  { method: "GET", target: "/api/v1/auth/me?x=%ff&y=%ZZ&z=%", code: 40101 },
  // NUL, encoded (a raw NUL is refused by Node's parser: see below).
  { method: "GET", target: "/api/v1/auth/%00", code: 40400 },
  { method: "GET", target: "/api/v1/auth/me%00", code: 40400 },
  { method: "DELETE", target: "/api/v1/auth/sessions/%00", code: 40400, token: true },
  // Backslashes, read as `/` as the URL parser reads them (in the query they are data).
  { method: "POST", target: "/api/v1/auth/\\login", code: 40002 },
  { method: "POST", target: "/api/v1\\auth\\login", code: 40002 },
  { method: "GET", target: "/api/v1/things\\..\\auth\\me", code: 40101 },
  { method: "GET", target: "/api/v1/auth/me?next=\\\\evil", code: 40101 },
  // Absolute-form (RFC 9112 §3.2.2): the path of the URL, whatever its host and the scheme's case.
  { method: "GET", target: "http://host.example/api/v1/auth/me", code: 40101 },
  { method: "GET", target: "HTTPS://HOST.EXAMPLE/api/v1/auth/me", code: 40101 },
  { method: "POST", target: "Http://host.example:80/api/v1/auth/login", code: 40002 },
  { method: "GET", target: "http://user@host.example/api/v1/auth/me?x=1", code: 40101 },
  { method: "GET", target: "http://[::1]:8080/api/v1/auth/me", code: 40101 },
  { method: "GET", target: "http://host.example/api/v1/auth/%ff", code: 40400 },
  { method: "GET", target: "http://host.example//api/v1/auth/../auth/me", code: 40101 },
  { method: "POST", target: "http://host.example/api\\v1\\auth\\login", code: 40002 },
  { method: "GET", target: "http://host.example/.well-known/jwks.json", code: 40400 },
  // Doubled slashes.
  { method: "POST", target: "//api/v1/auth/login", code: 40002 },
  { method: "POST", target: "/api/v1/auth//login", code: 40002 },
  { method: "POST", target: "/api/v1//auth//login/", code: 40002 },
  // Dot segments, plain and percent-encoded.
  { method: "POST", target: "/api/v1/auth/../auth/login", code: 40002 },
  { method: "POST", target: "/api/v1/auth/./login", code: 40002 },
  { method: "POST", target: "/api/v1/auth/%2e%2e/auth/login", code: 40002 },
  { method: "POST", target: "/api/v1/auth/.%2E/auth/login", code: 40002 },
  { method: "POST", target: "/api/v1/auth/%2E/login", code: 40002 },
  { method: "GET", target: "/api/v1/things/../auth/me", code: 40101 },
  { method: "GET", target: "/api/v1/things/%2e%2e/auth/me", code: 40101 },
  { method: "POST", target: "/../api/v1/auth/login", code: 40002 },
  { method: "POST", target: "/api/v1/auth/login/..", code: 40400 },
  { method: "GET", target: "/api/v1/auth/me/..%2f..%2fthings", code: 40400 },
  { method: "GET", target: "/.well-known/./jwks.json", code: 40400 },
  { method: "GET", target: "/api/v1/health/../auth/me?x=/../../things", code: 40101 },
  // Encoded slashes and other characters are not decoded into another route.
  { method: "POST", target: "/api/v1/auth/login%2f", code: 40400 },
  { method: "POST", target: "/api/v1/auth/%6cogin", code: 40400 },
  { method: "POST", target: "/api/v1/auth/lo%67in", code: 40400 },
  { method: "POST", target: "/api/v1/auth/login;x", code: 40400 },
  // An overlong path, under Node's 16 KiB limit on the request head.
  { method: "GET", target: `/api/v1/auth/${long}`, code: 40400 },
  { method: "GET", target: `/api/v1/auth/sessions/${long}`, code: 40400 },
  // A fragment, which no client should send, is dropped.
  { method: "POST", target: "/api/v1/auth/login#x", code: 40002 },
  { method: "GET", target: "/api/v1/auth/me#/../../../things", code: 40101 },
  // A method no route has.
  { method: "OPTIONS", target: "/api/v1/auth/login", code: 40400 },
];

/**
 * Targets that core reads as outside its paths: each goes to the app (or to what the framework
 * answers for the app), never to Portcullis, on every adapter.
 */
const outsideBasePath: { method: string; target: string }[] = [
  { method: "OPTIONS", target: "*" },
  { method: "GET", target: "*" },
  { method: "GET", target: "/api/v1/health/%ff" },
  { method: "GET", target: "/api/v1/health%ZZ" },
  { method: "GET", target: "/api/v1/auth%2fme" },
  { method: "GET", target: "/api/v1/authx/me" },
  { method: "GET", target: "/api/v1/things/%2e%2e%2fauth/me" },
  { method: "GET", target: "/API/V1/AUTH/ME" },
  { method: "GET", target: "//evil.example/api/v1/auth/me" },
  { method: "GET", target: "http://host.example" },
  { method: "GET", target: "http://host.example/api/v1/health\\%ff" },
  { method: "GET", target: "http:///api/v1/auth/me" },
  { method: "GET", target: "ftp://host.example/api/v1/auth/me" },
  { method: "GET", target: `/api/v1/other/${long}` },
];

/** A Portcullis answer: the envelope, whose code is a number (Fastify's own errors carry a string `code`). */
const isEnvelope = (result: RawResult) => typeof result.body?.code === "number" && typeof result.body?.message === "string";

/** What two adapters must agree on, byte for byte. */
function answerOf(result: RawResult) {
  return {
    status: result.status,
    body: result.text,
    contentType: result.headers.get("content-type"),
    cacheControl: result.headers.get("cache-control"),
    nosniff: result.headers.get("x-content-type-options"),
  };
}

describe("HTTP-5: odd request targets under the base path get one identical envelope from every adapter", () => {
  const testAuth = makeTestAuth({ throttle: generousThrottle });
  const servers: [string, RunningServer][] = [];
  const context = { token: "" };

  beforeAll(async () => {
    for (const [name, start] of adapters) servers.push([name, await start(testAuth.auth)]);
    await createTestUser(testAuth.auth, "odette");
    const signedIn = await post(servers[0]![1], "/api/v1/auth/login", { username: "odette", password: testPassword });
    context.token = signedIn.body.data.accessToken;
  });
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()));
  });

  for (const { method, target, code, token, body } of underBasePath) {
    const shown = target.length > 80 ? `${target.slice(0, 40)}… (${target.length} characters)` : target;
    it(`HTTP-5: ${method} ${shown}${token ? " with a token" : ""} → ${code}`, async () => {
      const answers: Record<string, unknown> = {};
      for (const [name, server] of servers) {
        const headers: Record<string, string> = token ? { authorization: `Bearer ${context.token}` } : {};
        const result = await rawRequest(server, method, target, body ?? (method === "POST" ? "{" : undefined), headers);
        answers[name] = answerOf(result);
      }
      const [first] = Object.values(answers) as ReturnType<typeof answerOf>[];
      expect(JSON.parse(first!.body)).toMatchObject({ code });
      expect(first!.status).toBe(httpStatusFor(code));
      expect(answers).toEqual(Object.fromEntries(servers.map(([name]) => [name, first])));
    });
  }

  for (const { method, target } of outsideBasePath) {
    const shown = target.length > 80 ? `${target.slice(0, 40)}… (${target.length} characters)` : target;
    it(`HTTP-5: ${method} ${shown} is outside the base path: the app's, never Portcullis's`, async () => {
      for (const [name, server] of servers) {
        const result = await rawRequest(server, method, target);
        expect(isEnvelope(result), `${name}: ${result.status} ${result.text}`).toBe(false);
      }
    });
  }

  it("HTTP-5: an app route reached by an absolute-form target is the app's", async () => {
    for (const [name, server] of servers) {
      const result = await rawRequest(server, "GET", "http://host.example/api/v1/health");
      expect({ name, status: result.status, body: result.body }).toEqual({ name, status: 200, body: { app: "health" } });
    }
  });

  it("HTTP-5: a request head over Node's 16 KiB limit, or a target Node's parser refuses, never reaches an adapter", async () => {
    const refusedByNode: [string, number][] = [
      [`GET /api/v1/auth/${"a".repeat(17 * 1024)} HTTP/1.1`, 431],
      ["GET /api/v1/auth/m e HTTP/1.1", 400],
      ["GET /api/v1/auth/me\0 HTTP/1.1", 400],
      ["GET /api/v1/auth/m\u00e9 HTTP/1.1", 400],
      ["GET http://host.example\\api/v1/auth/me HTTP/1.1", 400],
    ];
    for (const [name, server] of servers) {
      for (const [requestLine, status] of refusedByNode) {
        const head = `${requestLine}\r\nhost: ${server.host}:${server.port}\r\nconnection: close\r\n\r\n`;
        const result = await rawExchange(server, [Buffer.from(head, "utf8")]);
        expect({ name, status: result.status, envelope: isEnvelope(result) }).toEqual({ name, status, envelope: false });
      }
    }
  });
});

describe("RL-3: no odd form of the login path escapes its throttle, on any adapter", () => {
  /** Each reaches the login route, so each wrong password counts against the account. */
  const loginTargets = [
    "/api/v1/auth/login",
    "/api/v1/auth//login",
    "//api/v1/auth/login",
    "/api/v1/auth/login/",
    "/api/v1/auth/./login",
    "/api/v1/auth/%2e/login",
    "/api/v1/auth/x/../login",
    "/api/v1/auth/x/%2E%2E/login",
    "/api/v1/auth\\login",
    "/api/v1/auth/login#x",
    "/api/v1/auth/login?x=1",
    "http://host.example/api/v1/auth/login",
    "HTTP://host.example/api/v1/auth/login",
  ];

  for (const [name, start] of adapters) {
    it(`RL-3: ${name}: every form is counted; the next attempt is 42900, by any form; %6cogin reaches no route`, async () => {
      const testAuth = makeTestAuth({
        throttle: { ...generousThrottle, account: [{ limit: loginTargets.length, window: "15m" }] },
      });
      await createTestUser(testAuth.auth, "tobias");
      const server = await start(testAuth.auth);
      try {
        const wrong = JSON.stringify({ username: "tobias", password: "wrong password" });
        const codes: Record<string, unknown> = {};
        for (const target of loginTargets) codes[target] = (await rawRequest(server, "POST", target, wrong)).body?.code;
        expect(codes).toEqual(Object.fromEntries(loginTargets.map((target) => [target, 40100])));
        const right = JSON.stringify({ username: "tobias", password: testPassword });
        for (const target of loginTargets)
          expect((await rawRequest(server, "POST", target, right)).body?.code, target).toBe(42900);
        expect((await rawRequest(server, "POST", "/api/v1/auth/%6cogin", right)).body?.code).toBe(40400);
      } finally {
        await server.close();
      }
    });
  }
});
