import { describe, expect, it } from "vitest";
import { AuthError } from "../errors/auth-error.js";
import { addUser, makeAuth, signIn } from "../flows/fixtures.test-support.js";
import { authorizeRequest, handleRequest, normalizePath } from "./handle-request.js";
import { routes } from "./routes.js";
import type { HttpRequest } from "./types.js";

const tlsRequired =
  "TLS is required. If a proxy terminates TLS in front of this service, list its address in http.trustedProxies so that its X-Forwarded-Proto is believed.";

/** A request that records which headers were asked for and whether its body was read. */
function recordingRequest(
  method: string,
  url: string,
  options: { peerAddress?: string; secure?: boolean; headers?: Record<string, string>; body?: string } = {},
) {
  const read = { headers: [] as string[], body: false };
  const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
  const request: HttpRequest = {
    method,
    url,
    header(name) {
      read.headers.push(name);
      return headers[name];
    },
    body: {
      async *[Symbol.asyncIterator]() {
        read.body = true;
        yield new TextEncoder().encode(options.body ?? "{");
      },
    },
    peerAddress: "peerAddress" in options ? options.peerAddress : "192.0.2.1",
    secure: options.secure ?? false,
  };
  return { request, read };
}

const pathOf = (route: (typeof routes)[number]) => (route.atRoot ? route.path : `/api/v1${route.path}`);

async function envelopeOf(auth: ReturnType<typeof makeAuth>["auth"], request: HttpRequest) {
  const response = await handleRequest(auth, request);
  if (response === null) throw new Error("expected a Portcullis response");
  return { ...response, envelope: JSON.parse(response.body) as { code: number; message: string; requestId?: string } };
}

describe("handleRequest", () => {
  it("HTTP-7: plain HTTP from a non-loopback peer gets 40300 on every route, before the Authorization header or the body is read", async () => {
    const harness = makeAuth();
    const { auth } = harness;
    await addUser(auth, "alice");
    const token = (await signIn(harness, "alice")).accessToken;
    const targets = [
      ...routes.map((route) => [route.method, pathOf(route)] as const),
      ["GET", "/api/v1/auth/no-such-route"] as const,
    ];
    for (const [method, path] of targets) {
      const { request, read } = recordingRequest(method, path, { headers: { authorization: `Bearer ${token}` } });
      const response = await envelopeOf(auth, request);
      expect(response.status, path).toBe(403);
      expect(response.envelope, path).toEqual({ code: 40300, message: tlsRequired });
      expect(response.headers["cache-control"]).toBe("no-store");
      expect(response.headers["x-content-type-options"]).toBe("nosniff");
      expect(read.headers, path).not.toContain("authorization");
      expect(read.body, path).toBe(false);
    }
  });

  it("HTTP-7: over TLS, or from a loopback client, the same request reaches its route", async () => {
    const { auth } = makeAuth();
    const overTls = recordingRequest("POST", "/api/v1/auth/login", { secure: true });
    expect((await envelopeOf(auth, overTls.request)).envelope.code).toBe(40002);
    const fromLoopback = recordingRequest("POST", "/api/v1/auth/login", { peerAddress: "127.0.0.1" });
    expect((await envelopeOf(auth, fromLoopback.request)).envelope.code).toBe(40002);
  });

  it("HTTP-7: unsafeAllowPlainHttp lets plain HTTP from a non-loopback peer through", async () => {
    const { auth } = makeAuth({ http: { unsafeAllowPlainHttp: true } });
    const { request } = recordingRequest("POST", "/api/v1/auth/login");
    expect((await envelopeOf(auth, request)).envelope.code).toBe(40002);
  });

  it("RL-3: an unknown peer address is 50000 with a request id, and onInternalError gets a TypeError naming getPeerAddress", async () => {
    const reported: [unknown, string][] = [];
    const { auth, events } = makeAuth({ onInternalError: (error, requestId) => reported.push([error, requestId]) });
    await addUser(auth, "alice");
    for (const secure of [false, true]) {
      const { request, read } = recordingRequest("POST", "/api/v1/auth/login", {
        peerAddress: undefined,
        secure,
        body: JSON.stringify({ username: "alice", password: "correct horse battery staple" }),
      });
      const response = await envelopeOf(auth, request);
      expect(response.status).toBe(500);
      expect(response.envelope).toEqual({ code: 50000, message: "Internal error", requestId: expect.any(String) });
      expect(read.body).toBe(false);
      const [error, requestId] = reported.at(-1) ?? [];
      expect(requestId).toBe(response.envelope.requestId);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(
        "Portcullis could not read the client address of this request; pass getPeerAddress to the adapter",
      );
    }
    expect(events.filter((event) => event.type.startsWith("login"))).toEqual([]);
  });
});

describe("authorizeRequest", () => {
  it("HTTP-7: refuses plain HTTP from a non-loopback peer with 40300 before it reads the token; over TLS it verifies it", async () => {
    const harness = makeAuth();
    const userId = await addUser(harness.auth, "alice");
    const { accessToken } = await signIn(harness, "alice");
    const { request, read } = recordingRequest("GET", "/api/v1/things", { headers: { authorization: `Bearer ${accessToken}` } });
    const refusal = await authorizeRequest(harness.auth, request).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AuthError);
    expect(refusal).toMatchObject({ code: 40300, message: tlsRequired });
    expect(read.headers).not.toContain("authorization");
    const access = await authorizeRequest(harness.auth, { ...request, secure: true });
    expect(access.userId).toBe(userId);
  });
});

describe("normalizePath", () => {
  it("RL-3: resolves a path as the WHATWG URL parser does for an http URL, then collapses slashes and drops a trailing one", () => {
    const cases: [string, string][] = [
      ["/api/v1/auth/login", "/api/v1/auth/login"],
      ["/api/v1/auth/../auth/login", "/api/v1/auth/login"],
      ["/api/v1/auth/./login", "/api/v1/auth/login"],
      ["/api/v1/auth/%2e%2e/auth/login", "/api/v1/auth/login"],
      ["/api/v1/auth/.%2E/auth/login", "/api/v1/auth/login"],
      ["/api/v1/auth/%2E/login", "/api/v1/auth/login"],
      ["/api/v1\\auth\\login", "/api/v1/auth/login"],
      ["/api/v1/things/../auth/me", "/api/v1/auth/me"],
      ["/../../api/v1/auth/login", "/api/v1/auth/login"],
      ["//api/v1//auth//login/", "/api/v1/auth/login"],
      ["/api/v1/auth/login/..", "/api/v1/auth"],
      ["/api/v1/auth/login%2f", "/api/v1/auth/login%2f"],
      ["/api/v1/auth/login;x", "/api/v1/auth/login;x"],
      ["/api/v1/auth/lo%67in", "/api/v1/auth/lo%67in"],
      ["/api/v1/auth/lo\tgin", "/api/v1/auth/login"],
      ["/api/v1/auth/login?next=/../../x#y", "/api/v1/auth/login"],
      ["/", "/"],
    ];
    for (const [path, expected] of cases) expect(normalizePath(path), path).toBe(expected);
  });

  it("RL-3: a leading // is a path, never a host", () => {
    expect(normalizePath("//evil.example/api/v1/auth/login")).toBe("/evil.example/api/v1/auth/login");
    expect(normalizePath("//evil.example/../api/v1/auth/login")).toBe("/api/v1/auth/login");
  });
});
