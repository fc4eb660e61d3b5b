import { generateKeyPairSync } from "node:crypto";
import { INVALID_SPAN_CONTEXT, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { openTelemetry } from "../dependencies.js";
import { fakeDirectory } from "../directory/directory.test-support.js";
import { AuthError, storageUnavailable } from "../errors/auth-error.js";
import { ErrorCode } from "../errors/codes.js";
import { addUser, authError, encryptionKey, enrolTotp, makeAuth, signIn } from "../flows/fixtures.test-support.js";
import { authorizeRequest, errorResponse, handleRequest, normalizePath, resolvedTarget, servesPath } from "./handle-request.js";
import { routes } from "./routes/index.js";
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
    // The password-change alias on, so that every route of the table is served (SE-6).
    const harness = makeAuth({ http: { passwordChangeAlias: true } });
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

describe("handleRequest answers", () => {
  const overTls = (method: string, url: string, options: Parameters<typeof recordingRequest>[2] = {}) =>
    recordingRequest(method, url, { secure: true, ...options }).request;

  it("TMP-1: a TOTP user's password login is 40102 with its own message and a temporary token only", async () => {
    const { auth } = makeAuth();
    await enrolTotp(auth, await addUser(auth, "tina"));
    const body = JSON.stringify({ username: "tina", password: "correct horse battery staple" });
    const response = await envelopeOf(auth, overTls("POST", "/api/v1/auth/login", { body }));
    expect(response.status).toBe(200);
    expect(response.envelope).toEqual({
      code: 40102,
      message: "A second factor is required",
      data: { tempToken: expect.any(String) },
    });
    expect(Object.keys(response.headers)).not.toContain("set-cookie");
  });

  it("an unknown route under the prefix is 40400 'No such route'", async () => {
    const { auth } = makeAuth();
    const response = await envelopeOf(auth, overTls("GET", "/api/v1/auth/no-such-route"));
    expect(response.envelope).toEqual({ code: 40400, message: "No such route" });
  });

  it("AT-1: /.well-known/jwks.json is the bare key set, cacheable for five minutes; with a shared secret it is 40400", async () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const signing = { alg: "EdDSA" as const, privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };
    const { auth } = makeAuth({ secrets: { signing, encryption: encryptionKey } });
    const published = await envelopeOf(auth, overTls("GET", "/.well-known/jwks.json"));
    expect(published.status).toBe(200);
    expect(published.headers["cache-control"]).toBe("public, max-age=300");
    expect(published.headers["x-content-type-options"]).toBe("nosniff");
    expect(JSON.parse(published.body)).toEqual(auth.keys.jwks);
    const shared = await envelopeOf(makeAuth().auth, overTls("GET", "/.well-known/jwks.json"));
    // With a shared secret the route is off, as a feature not configured is.
    expect(shared.envelope).toEqual({ code: 40400, message: "No such route" });
    expect(shared.headers["cache-control"]).toBe("no-store");
  });
});

describe("errorResponse", () => {
  it("HTTP-5: a 50000 or 50300 AuthError keeps its message and gets a request id, which onInternalError receives; a 4xx does not", () => {
    const reported: [unknown, string][] = [];
    const { auth } = makeAuth({ onInternalError: (error, requestId) => reported.push([error, requestId]) });
    for (const [error, status] of [
      [new AuthError(ErrorCode.Internal, "A stored secret could not be decrypted"), 500],
      [new AuthError(ErrorCode.Unavailable), 503],
    ] as const) {
      const response = errorResponse(auth, error);
      const envelope = JSON.parse(response.body);
      expect(response.status).toBe(status);
      expect(envelope).toEqual({ code: error.code, message: error.message, requestId: expect.any(String) });
      expect(reported.at(-1)).toEqual([error, envelope.requestId]);
    }
    const refusal = errorResponse(auth, new AuthError(ErrorCode.AuthenticationFailed));
    expect(JSON.parse(refusal.body)).toEqual({ code: 40100, message: "Authentication failed" });
    expect(reported).toHaveLength(2);
  });

  it("RL-4: 42900 carries Retry-After with the throttle's seconds, or 1 when none is known; no other answer carries it", () => {
    const { auth } = makeAuth({ onInternalError: () => {} });
    const throttled = errorResponse(auth, new AuthError(ErrorCode.TooManyAttempts, undefined, { retryAfterSeconds: 120 }));
    expect(throttled.status).toBe(429);
    expect(throttled.headers["retry-after"]).toBe("120");
    expect(errorResponse(auth, new AuthError(ErrorCode.TooManyAttempts)).headers["retry-after"]).toBe("1");
    for (const error of [
      new AuthError(ErrorCode.AuthenticationFailed),
      new AuthError(ErrorCode.Unavailable),
      new Error("boom"),
    ]) {
      expect(errorResponse(auth, error).headers, String(error)).not.toHaveProperty("retry-after");
    }
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

  it("AT-6: the Authorization header must be `Bearer` (any case), one or more spaces and the token, nothing else", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "alice");
    const { accessToken } = await signIn(harness, "alice");
    const outcome = (authorization: string | undefined) =>
      authorizeRequest(harness.auth, {
        header: (name) => (name === "authorization" ? authorization : undefined),
        peerAddress: "192.0.2.1",
        secure: true,
      }).then(
        () => "accepted",
        (error: AuthError) => `${error.code} ${error.message}`,
      );
    for (const header of [
      `Bearer ${accessToken}`,
      `bearer ${accessToken}`,
      `BEARER   ${accessToken}`,
      `Bearer ${accessToken}  `,
    ]) {
      expect(await outcome(header), header).toBe("accepted");
    }
    for (const header of [
      undefined,
      "",
      "Bearer",
      `Bearer${accessToken}`,
      `Basic ${accessToken}`,
      `xBearer ${accessToken}`,
      `Token Bearer ${accessToken}`,
      `Bearer ${accessToken} extra`,
      `Bearer ${accessToken},Bearer ${accessToken}`,
    ]) {
      expect(await outcome(header), header).toBe("40101 A bearer access token is required");
    }
  });

  it("roles: a user holding any one of them is let through; none of them, or an empty list, is 40300", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "editor", undefined, ["user", "editor"]);
    const { accessToken } = await signIn(harness, "editor");
    const request = { header: () => `Bearer ${accessToken}`, peerAddress: "192.0.2.1", secure: true };
    expect((await authorizeRequest(harness.auth, request)).roles).toEqual(["user", "editor"]);
    expect((await authorizeRequest(harness.auth, request, { roles: ["admin", "editor"] })).roles).toEqual(["user", "editor"]);
    for (const roles of [["admin"], []]) {
      expect(await authError(authorizeRequest(harness.auth, request, { roles })), JSON.stringify(roles)).toMatchObject({
        code: 40300,
        message: "A role this route requires is missing",
      });
    }
  });
});

describe("storage that cannot be reached", () => {
  it("a store throwing storageUnavailable answers 50300 with a request id; any other storage error is 50000", async () => {
    const reported: unknown[] = [];
    const harness = makeAuth({ onInternalError: (error) => reported.push(error) });
    await addUser(harness.auth, "stored");
    const cut = new Error("connect ECONNREFUSED 127.0.0.1:5432");
    const login = () =>
      envelopeOf(
        harness.auth,
        recordingRequest("POST", "/api/v1/auth/login", {
          secure: true,
          body: JSON.stringify({ username: "stored", password: "whatever it is" }),
        }).request,
      );
    harness.storage.users.findByUsernameKey = async () => {
      throw storageUnavailable(cut);
    };
    const unavailable = await login();
    expect(unavailable.status).toBe(503);
    expect(unavailable.envelope).toEqual({ code: 50300, message: "Storage is unavailable", requestId: expect.any(String) });
    expect(unavailable.body).not.toContain("ECONNREFUSED");
    expect((reported[0] as Error).cause).toBe(cut);
    harness.storage.users.findByUsernameKey = async () => {
      throw new TypeError("a bug");
    };
    expect((await login()).envelope.code).toBe(50000);
  });
});

describe("admin routes", () => {
  const adminPaths = [
    ["GET", "/api/v1/auth/directory/policy"],
    ["PUT", "/api/v1/auth/directory/policy"],
    ["POST", "/api/v1/auth/directory/policy/test"],
    ["POST", "/api/v1/auth/directory/policy/preview"],
  ] as const;

  it("the directory policy routes need a token whose roles hold the configured admin role: 40101 without one, 40300 without the role", async () => {
    const harness = makeAuth({ adminRole: "operator", directory: fakeDirectory() });
    await addUser(harness.auth, "plain", undefined, ["admin", "user"]);
    await addUser(harness.auth, "operator", undefined, ["operator"]);
    const plain = (await signIn(harness, "plain")).accessToken;
    const operator = (await signIn(harness, "operator")).accessToken;
    for (const [method, path] of adminPaths) {
      const body = JSON.stringify(method === "PUT" ? { searchTimeoutSecs: 3 } : { username: "alice" });
      const call = (token?: string) =>
        envelopeOf(
          harness.auth,
          recordingRequest(method, path, { secure: true, body, headers: token ? { authorization: `Bearer ${token}` } : {} })
            .request,
        );
      expect((await call()).envelope.code, path).toBe(ErrorCode.InvalidToken);
      expect((await call(plain)).envelope, path).toMatchObject({ code: 40300, message: "A role this route requires is missing" });
      expect((await call(operator)).envelope.code, path).not.toBe(40300);
    }
    expect((await harness.auth.storage.settings.get("directory.policy")) as object).toMatchObject({
      policy: { searchTimeoutSecs: 3 },
    });
  });

  it("without a directory given to createAuth, the directory policy routes are 40400, even for an administrator", async () => {
    const harness = makeAuth();
    await addUser(harness.auth, "root", undefined, ["admin"]);
    const { accessToken } = await signIn(harness, "root");
    for (const [method, path] of adminPaths) {
      const request = recordingRequest(method, path, {
        secure: true,
        body: method === "GET" ? undefined : "{}",
        headers: { authorization: `Bearer ${accessToken}` },
      }).request;
      expect((await envelopeOf(harness.auth, request)).envelope.code, path).toBe(ErrorCode.NotFound);
    }
  });

  it("the policy body may carry a CA bundle of 256 KiB", async () => {
    const harness = makeAuth({ directory: fakeDirectory() });
    await addUser(harness.auth, "root", undefined, ["admin"]);
    const { accessToken } = await signIn(harness, "root");
    const pem = `-----BEGIN CERTIFICATE-----\n${"A".repeat(256 * 1024 - 60)}\n-----END CERTIFICATE-----`;
    const request = recordingRequest("PUT", "/api/v1/auth/directory/policy", {
      secure: true,
      body: JSON.stringify({ caBundle: pem }),
      headers: { authorization: `Bearer ${accessToken}` },
    }).request;
    const { envelope } = await envelopeOf(harness.auth, request);
    expect(envelope.code).toBe(0);
  });
});

describe("servesPath", () => {
  it("RL-3: is true exactly for the paths handleRequest answers, after the same normalisation", async () => {
    const { auth } = makeAuth();
    const cases: [string, boolean][] = [
      ["/api/v1/auth/login", true],
      ["/api/v1/auth", true],
      ["/api/v1/auth/no-such-route", true],
      ["/api/v1/things/../auth/me?x=1", true],
      ["/api/v1//auth/login/", true],
      ["/.well-known/jwks.json", true],
      ["/api/v1/things", false],
      ["/api/v1/authx", false],
      ["/", false],
      ["/api/v1/auth/../things", false],
      // A route's path without the base path is the app's, not a route at the root.
      ["/auth/login", false],
      ["/auth/me", false],
    ];
    for (const [url, expected] of cases) {
      expect(servesPath(auth, url), url).toBe(expected);
      const response = await handleRequest(auth, recordingRequest("GET", url, { peerAddress: "127.0.0.1" }).request);
      expect(response !== null, url).toBe(expected);
    }
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

  it("RL-3: plain paths, which skip the URL parser, come out as the parser would give them", () => {
    const reference = (url: string) => {
      const { pathname } = new URL(`http://portcullis.invalid${url.startsWith("/") ? "" : "/"}${url}`);
      const collapsed = pathname.replace(/\/{2,}/g, "/");
      return collapsed.length > 1 && collapsed.endsWith("/") ? collapsed.slice(0, -1) : collapsed;
    };
    const pieces = ["/", "/", "a", "Z", "9", "-", "_", "~", ".", "..", "%2e", "%41", "\\", "?", "#", ";", " ", "\t", "é"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed;
    };
    for (let index = 0; index < 5_000; index += 1) {
      const length = next() % 9;
      const url = Array.from({ length }, () => pieces[next() % pieces.length]).join("");
      expect(normalizePath(url), JSON.stringify(url)).toBe(reference(url));
    }
    for (const url of ["", "api", "/api/v1/", "/.well-known/jwks.json", "/a/.b/c", "/a/b./c"]) {
      expect(normalizePath(url), url).toBe(reference(url));
    }
  });

  it("RL-3: a leading // is a path, never a host", () => {
    expect(normalizePath("//evil.example/api/v1/auth/login")).toBe("/evil.example/api/v1/auth/login");
    expect(normalizePath("//evil.example/../api/v1/auth/login")).toBe("/api/v1/auth/login");
  });

  it("RL-3: a target without a leading slash is a path too, never part of the origin's host", () => {
    expect(normalizePath("api/v1/auth/login")).toBe("/api/v1/auth/login");
    expect(normalizePath("*")).toBe("/*");
    expect(normalizePath("ftp://evil.example/api/v1/auth/login")).toBe("/ftp:/evil.example/api/v1/auth/login");
    expect(normalizePath("http:///api/v1/auth/login")).toBe("/http:/api/v1/auth/login");
    expect(normalizePath("http:/api/v1/auth/login")).toBe("/http:/api/v1/auth/login");
  });

  it("HTTP-5/RL-3: an absolute-form target (RFC 9112 §3.2.2) is its URL's path and query, whatever the host and the scheme's case", () => {
    const cases: [string, string, string][] = [
      ["http://evil.example/api/v1/auth/login", "/api/v1/auth/login", ""],
      ["HTTPS://EVIL.EXAMPLE/api/v1/auth/me?x=1#y", "/api/v1/auth/me", "?x=1"],
      ["Http://user:pw@host:8080/api/v1/auth/me", "/api/v1/auth/me", ""],
      ["http://[::1]/api/v1/things/../auth/me", "/api/v1/auth/me", ""],
      ["http://host//api/v1//auth/login/", "/api/v1/auth/login", ""],
      ["http://host\\api\\v1\\auth\\login", "/api/v1/auth/login", ""],
      ["http://host?next=/api/v1/auth/me", "/", "?next=/api/v1/auth/me"],
      ["http://host#/api/v1/auth/me", "/", ""],
      ["http://host", "/", ""],
      ["http://host/http://other/api/v1/auth/me", "/http:/other/api/v1/auth/me", ""],
    ];
    for (const [target, path] of cases) expect(normalizePath(target), target).toBe(path);
    for (const [target, path, query] of cases) {
      // The reference: the URL parser's reading of the same URL, its slashes collapsed.
      const url = new URL(target);
      expect(normalizePath(`${url.pathname}${url.search}`), target).toBe(path);
      expect(url.search, target).toBe(query);
    }
  });
});

describe("resolvedTarget", () => {
  it("HTTP-5: the target in origin-form as core reads it: the normalised path and the query, no fragment, scheme or host", () => {
    const cases: [string, string][] = [
      ["/api/v1/auth/login", "/api/v1/auth/login"],
      ["/api/v1/auth\\login?next=\\x#y", "/api/v1/auth/login?next=\\x"],
      ["HTTP://HOST/api/v1/things/../auth/me?a=%ff&b=%ZZ", "/api/v1/auth/me?a=%ff&b=%ZZ"],
      ["//api/v1//auth/me/?", "/api/v1/auth/me"],
      ["/api/v1/auth/%ff?", "/api/v1/auth/%ff"],
      ["*", "/*"],
    ];
    for (const [url, expected] of cases) expect(resolvedTarget(url), url).toBe(expected);
    for (const [url, expected] of cases) expect(resolvedTarget(expected), url).toBe(expected);
  });
});

describe("redirects and cookies", () => {
  const oauth = {
    providers: {
      forge: {
        authorizationUrl: "https://forge.example/authorize",
        tokenUrl: "https://forge.example/token",
        userInfoUrl: "https://forge.example/user",
        clientId: "client",
        redirectUri: "https://app.example.com/callback",
        profile: (info: Record<string, unknown>) => ({ subject: String(info.id) }),
      },
    },
  };

  it("OA-1: authorize with mode=redirect answers an empty 302 to the provider with the binding cookie, Secure over TLS only", async () => {
    const { auth } = makeAuth({ oauth });
    const url = "/api/v1/auth/oauth/forge/authorize?mode=redirect&redirect=%2Faccount";
    const overTls = await handleRequest(auth, recordingRequest("GET", url, { secure: true }).request);
    expect(overTls).toMatchObject({ status: 302, body: "" });
    expect(overTls?.headers.location).toMatch(/^https:\/\/forge\.example\/authorize\?/);
    expect(overTls?.cookies).toEqual([expect.stringMatching(/; Secure$/)]);
    const onLoopback = await handleRequest(auth, recordingRequest("GET", url, { peerAddress: "127.0.0.1" }).request);
    expect(onLoopback?.cookies).toEqual([expect.not.stringMatching(/Secure/)]);
  });

  it("HTTP-5: an absolute-form target's query reaches the route as an origin-form one's does", async () => {
    const { auth } = makeAuth({ oauth });
    for (const target of ["HTTP://app.example", "https://user@app.example:8443"]) {
      const url = `${target}/api/v1/auth/oauth/forge/authorize?mode=redirect&redirect=%2Faccount`;
      const response = await handleRequest(auth, recordingRequest("GET", url, { secure: true }).request);
      expect(response, target).toMatchObject({ status: 302, body: "" });
    }
  });
});

describe("with telemetry", () => {
  it("an unknown route's span starts with its operation and method only: no http.route key, not even an undefined one", async () => {
    await openTelemetry();
    const started: Record<string, unknown>[] = [];
    const tracer = {
      startSpan(_name: string, options: { attributes: Record<string, unknown> }) {
        started.push(options.attributes);
        return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
      },
    };
    const { auth } = makeAuth({ telemetry: { tracerProvider: { getTracer: () => tracer } } });
    await new Promise((resolve) => setImmediate(resolve));
    for (const url of ["/api/v1/auth/no-such-route", "/api/v1/auth/me"]) {
      await handleRequest(auth, recordingRequest("GET", url, { secure: true }).request);
    }
    expect(started.map((attributes) => Object.keys(attributes))).toEqual([
      ["portcullis.operation", "http.request.method"],
      ["portcullis.operation", "http.request.method", "http.route"],
    ]);
    expect(started[0]).toMatchObject({ "portcullis.operation": "unknownRoute", "http.request.method": "GET" });
  });
});
