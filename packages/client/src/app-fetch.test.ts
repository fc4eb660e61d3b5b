import { afterEach, describe, expect, it, vi } from "vitest";
import { type AuthClientOptions, createAuthClient } from "./client.js";
import { type ScriptedRequest, scriptedBaseUrl, scriptedServer, tokenSet } from "./scripted-server.test-support.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

const appUrl = "https://api.example.com/things";

/** A signed-in client whose app route answers `appAnswer` to `access-1` and 200 to `access-2`. */
async function signedInClient(appAnswer: () => Response, options: AuthClientOptions = {}) {
  const server = scriptedServer((request: ScriptedRequest) => {
    if (request.path === "/auth/login") return { code: 0, data: tokenSet(1) };
    if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(2) };
    if (request.authorization === "Bearer access-2") return new Response("ok", { status: 200 });
    return appAnswer();
  });
  const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch, ...options });
  await client.login({ username: "alice", password: "pw" });
  return { client, server, refreshes: () => server.sentTo("/auth/refresh").length };
}

const json = (body: unknown, status: number, contentType = "application/json") =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": contentType } });
const invalidToken = { code: 40101, message: "Invalid or expired token" };

describe("client.fetch", () => {
  it("refreshes on a 401 whose JSON envelope is 40101, and on nothing else that could look like it", async () => {
    const notRefusals: [string, () => Response][] = [
      ["a 200 with a 40101 body, in standard mode", () => json(invalidToken, 200)],
      ["a 403 with a 40101 body", () => json(invalidToken, 403)],
      ["a 401 with a 40101 body that is not labelled JSON", () => json(invalidToken, 401, "text/plain")],
      ["a 401 without a body", () => new Response(null, { status: 401 })],
      [
        "a 401 labelled JSON that is not",
        () => new Response("<html>401</html>", { status: 401, headers: { "content-type": "application/json" } }),
      ],
      ["a 401 with another code", () => json({ code: 40100, message: "Invalid credentials" }, 401)],
    ];
    for (const [name, answer] of notRefusals) {
      const { client, refreshes } = await signedInClient(answer);
      const response = await client.fetch(appUrl);
      expect(refreshes(), name).toBe(0);
      expect(response.status, name).toBe(answer().status);
    }
    const { client, refreshes } = await signedInClient(() => json(invalidToken, 401));
    expect((await client.fetch(appUrl)).status).toBe(200);
    expect(refreshes()).toBe(1);
  });

  it("under always-200, a 40101 body with status 200 is a refusal, one with another status is not", async () => {
    const refused = await signedInClient(() => json(invalidToken, 200), { statusMode: "always-200" });
    expect(await (await refused.client.fetch(appUrl)).text()).toBe("ok");
    expect(refused.refreshes()).toBe(1);
    const other = await signedInClient(() => json(invalidToken, 502), { statusMode: "always-200" });
    expect((await other.client.fetch(appUrl)).status).toBe(502);
    expect(other.refreshes()).toBe(0);
  });

  it("a Request or URL object goes where it points; a relative path resolves against the API's base URL", async () => {
    const { client, server } = await signedInClient(() => new Response("ok"));
    await client.fetch(new Request("https://api.example.com/from-request", { method: "DELETE" }));
    await client.fetch(new URL("https://api.example.com/from-url"));
    await client.fetch("/api/v1/things?page=2");
    const app = server.sent.filter((request) => !request.path.startsWith("/auth/"));
    expect(app.map((request) => [request.method, request.url, request.authorization])).toEqual([
      ["DELETE", "https://api.example.com/from-request", "Bearer access-1"],
      ["GET", "https://api.example.com/from-url", "Bearer access-1"],
      ["GET", "https://api.example.com/api/v1/things?page=2", "Bearer access-1"],
    ]);
  });

  it("the token goes to the API's origin and bearerOrigins only, also on a page whose own origin is another; a relative path is the API's", async () => {
    vi.stubGlobal("location", { href: "https://app.example.com/account" });
    const { client, server } = await signedInClient(() => new Response("ok"), { bearerOrigins: ["https://files.example.com"] });
    for (const url of ["https://app.example.com/x", "https://files.example.com/y", "https://evil.example/z", "/account/data"]) {
      await client.fetch(url);
    }
    const app = server.sent.filter((request) => !request.path.startsWith("/auth/"));
    expect(app.map((request) => [request.url, request.authorization])).toEqual([
      ["https://app.example.com/x", null],
      ["https://files.example.com/y", "Bearer access-1"],
      ["https://evil.example/z", null],
      ["https://api.example.com/account/data", "Bearer access-1"],
    ]);
  });

  it("without bearerOrigins, the page's own origin gets no token when the API is elsewhere", async () => {
    vi.stubGlobal("location", { href: "https://app.example.com/account" });
    const { client, server } = await signedInClient(() => new Response("ok"));
    await client.fetch("https://app.example.com/x");
    expect(server.sent.at(-1)?.authorization).toBeNull();
  });

  it("signed out, a request goes without any Authorization header", async () => {
    const server = scriptedServer(() => new Response("ok"));
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: server.fetch });
    await client.fetch(appUrl);
    expect(server.sent[0]?.authorization).toBeNull();
  });

  it("an aborted or timed-out request rejects with the fetch's own AbortError or TimeoutError, not a network error", async () => {
    for (const name of ["AbortError", "TimeoutError"]) {
      const failure = new DOMException("The operation was aborted", name);
      const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: () => Promise.reject(failure) });
      await expect(client.fetch(appUrl)).rejects.toBe(failure);
    }
    const client = createAuthClient({ baseUrl: scriptedBaseUrl, fetch: () => Promise.reject(new TypeError("fetch failed")) });
    await expect(client.fetch(appUrl)).rejects.toMatchObject({ name: "AuthClientError", kind: "network" });
  });
});
