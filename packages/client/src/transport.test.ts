import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import type { AuthClientError } from "./errors.js";
import { type ScriptedAnswer, scriptedBaseUrl, scriptedServer, tokenSet } from "./scripted-server.test-support.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as AuthClientError,
  );

/** A client whose every request is answered `answer`. */
function answering(answer: ScriptedAnswer | (() => ScriptedAnswer), baseUrl = scriptedBaseUrl) {
  const server = scriptedServer(() => (typeof answer === "function" ? answer() : answer));
  return { server, client: createAuthClient({ baseUrl, fetch: server.fetch }) };
}

const login = { username: "alice", password: "pw" };

describe("requests", () => {
  it("go to the base URL without its trailing slashes, JSON in and out, with the token only when there is one", async () => {
    const { client, server } = answering({ code: 0, data: tokenSet(1) }, `${scriptedBaseUrl}//`);
    await client.login(login);
    await client.me().catch(() => undefined);
    const [signIn, me] = server.sent;
    expect(signIn?.url).toBe(`${scriptedBaseUrl}/auth/login`);
    expect(signIn?.headers.get("accept")).toBe("application/json");
    expect(signIn?.headers.get("content-type")).toBe("application/json");
    expect(signIn?.authorization).toBeNull();
    expect(signIn?.body).toEqual(login);
    expect(me?.url).toBe(`${scriptedBaseUrl}/auth/me`);
    expect(me?.headers.get("content-type")).toBeNull();
    expect(me?.authorization).toBe("Bearer access-1");
  });

  it("the OAuth routes send the browser's cookies (credentials include); the others the default", async () => {
    const { client, server } = answering({ code: 0, data: { authUrl: "https://id.example.com/authorize?x=1" } });
    await client.oauth.start("corp", { navigate: false });
    await errorOf(client.login(login));
    expect(server.sent.map((request) => request.credentials)).toEqual(["include", "same-origin"]);
  });

  it("without an answer a call is kind network, with the cause kept and no URL in the message", async () => {
    const cause = new TypeError("fetch failed");
    const client = createAuthClient({
      baseUrl: scriptedBaseUrl,
      fetch: () => Promise.reject(cause),
    });
    const error = await errorOf(client.login(login));
    expect({ kind: error?.kind, message: error?.message, cause: error?.cause }).toEqual({
      kind: "network",
      message: "The server could not be reached",
      cause,
    });
  });

  it("a body cut off while it is read is kind network too", async () => {
    const broken = new ReadableStream({
      start(controller) {
        controller.error(new Error("connection reset"));
      },
    });
    const { client } = answering(() => new Response(broken, { status: 200, headers: { "content-type": "application/json" } }));
    expect((await errorOf(client.login(login)))?.kind).toBe("network");
  });
});

describe("answers", () => {
  it("an answer that is not the envelope is invalid_response, with the status in a fixed message", async () => {
    const notEnvelopes = [
      "<html>Bad gateway</html>",
      "null",
      '"OK"',
      JSON.stringify({ code: 0 }),
      JSON.stringify({ message: "OK" }),
      JSON.stringify({ code: "0", message: "OK" }),
    ];
    for (const body of notEnvelopes) {
      const { client } = answering(() => new Response(body, { status: 502 }));
      const error = await errorOf(client.login(login));
      expect({ kind: error?.kind, status: error?.status, message: error?.message }, body).toEqual({
        kind: "invalid_response",
        status: 502,
        message: "The server answered HTTP 502 without a Portcullis envelope",
      });
    }
  });

  it("a successful answer without what the contract promises is invalid_response with its code and status", async () => {
    const { client } = answering({ code: 0, data: { accessToken: "access-1" } });
    const error = await errorOf(client.login(login));
    expect({ kind: error?.kind, code: error?.code, status: error?.status, message: error?.message }).toEqual({
      kind: "invalid_response",
      code: 0,
      status: 200,
      message: "The server's answer lacks what the Portcullis contract promises",
    });
  });

  it("a refusal carries the envelope's requestId when it is a string, and Retry-After when it is a number of seconds", async () => {
    const throttled = (retryAfter: string, requestId?: unknown) => () =>
      new Response(JSON.stringify({ code: 42900, message: "Too many attempts", requestId }), {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": retryAfter },
      });
    const cases: [ReturnType<typeof throttled>, { requestId: unknown; retryAfter: unknown }][] = [
      [throttled("120", "req-1"), { requestId: "req-1", retryAfter: 120 }],
      [throttled(" 7 ", 42), { requestId: undefined, retryAfter: 7 }],
      [throttled("x5"), { requestId: undefined, retryAfter: undefined }],
      [throttled("5x"), { requestId: undefined, retryAfter: undefined }],
      [throttled("Wed, 21 Oct 2026 07:28:00 GMT"), { requestId: undefined, retryAfter: undefined }],
    ];
    for (const [answer, expected] of cases) {
      const { client } = answering(answer);
      const error = await errorOf(client.login(login));
      expect({ requestId: error?.requestId, retryAfter: error?.retryAfter }).toEqual(expected);
    }
  });
});

describe("defaults", () => {
  it("the base URL is /api/v1 of the page, and requests go through the global fetch", async () => {
    const inputs: string[] = [];
    vi.stubGlobal("fetch", async (input: string | URL | Request) => {
      inputs.push(String(input));
      return new Response(JSON.stringify({ code: 40100, message: "Invalid credentials" }), { status: 401 });
    });
    const client = createAuthClient();
    expect((await errorOf(client.login(login)))?.code).toBe(40100);
    expect(inputs).toEqual(["/api/v1/auth/login"]);
  });
});
