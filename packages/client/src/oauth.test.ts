import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuthClient } from "./client.js";
import {
  type ScriptedAnswer,
  scriptedBaseUrl,
  scriptedServer,
  scriptedUser,
  signedInScriptedClient,
  tokenSet,
} from "./scripted-server.test-support.js";
import type { KeyValueStorage } from "./token-store.js";

const callbackUrl = "https://app.example.com/auth/callback?code=the-code&state=the-state";
const begun = { code: 0, data: { authUrl: "https://id.example.com/authorize?state=the-state" } };

afterEach(() => {
  vi.unstubAllGlobals();
});

/**
 * A client of a scripted server whose `authorize` route answers an authUrl and whose `callback`
 * route answers `callbackAnswer` (or throws, as a network failure). Records the credentials mode
 * of every request.
 */
function oauthClientOf(callbackAnswer: () => ScriptedAnswer) {
  const server = scriptedServer((request) => (request.path.includes("/authorize") ? begun : callbackAnswer()));
  const credentials: RequestInit["credentials"][] = [];
  const client = createAuthClient({
    baseUrl: scriptedBaseUrl,
    fetch: (input, init) => {
      credentials.push(init?.credentials);
      return server.fetch(input, init);
    },
  });
  return { client, server, credentials, callbacks: () => server.sent.filter(({ path }) => path.includes("/callback")) };
}

/** A `history` whose replaced URLs are recorded. */
function stubHistory(): (string | undefined)[] {
  const replaced: (string | undefined)[] = [];
  vi.stubGlobal("history", { replaceState: (_data: unknown, _unused: string, url?: string) => replaced.push(url) });
  return replaced;
}

const signedInWith = (returnPath: unknown) => ({ code: 0, data: { ...tokenSet(1), returnPath } });

describe("client.oauth against a scripted server", () => {
  it("OA-1: start and finish send the browser's cookies (credentials: include), where the binding cookie travels", async () => {
    const { client, credentials } = oauthClientOf(() => signedInWith("/"));
    await client.oauth.start("corp", { navigate: false });
    await client.oauth.finish({ provider: "corp", url: callbackUrl });
    expect(credentials).toEqual(["include", "include"]);
  });

  it("OA-8: a return path in the answer that is not a path of this app reads as `/`, in the step and in the address bar", async () => {
    const hostile: unknown[] = [
      "//evil.example",
      "https://evil.example/",
      "/\t/evil.example",
      "/\\evil.example",
      ["/account"],
      7,
      undefined,
    ];
    for (const returnPath of [...hostile, "/account?tab=keys"]) {
      const replaced = stubHistory();
      const { client } = oauthClientOf(() => signedInWith(returnPath));
      const expected = returnPath === "/account?tab=keys" ? returnPath : "/";
      const step = await client.oauth.finish({ provider: "corp", url: callbackUrl });
      expect(step.returnPath, JSON.stringify(returnPath)).toBe(expected);
      expect(replaced, JSON.stringify(returnPath)).toEqual([expected]);
    }
  });

  it("a second factor required (40102) is a sign-in under way: the address bar gets its return path, as the step does", async () => {
    const replaced = stubHistory();
    const { client } = oauthClientOf(() => ({ code: 40102, data: { tempToken: "temp", returnPath: "/settings" } }));
    const step = await client.oauth.finish({ provider: "corp", url: callbackUrl });
    expect(step).toMatchObject({ status: "totp_required", returnPath: "/settings" });
    expect(replaced).toEqual(["/settings"]);
  });

  it("a callback that gets no answer is the network error, and the code still leaves the address bar", async () => {
    const replaced = stubHistory();
    const { client } = oauthClientOf(() => {
      throw new TypeError("fetch failed");
    });
    await expect(client.oauth.finish({ provider: "corp", url: callbackUrl })).rejects.toMatchObject({
      name: "AuthClientError",
      kind: "network",
    });
    expect(replaced).toEqual(["/auth/callback"]);
  });

  it("replaceUrl: false leaves the address bar as it is", async () => {
    const replaced = stubHistory();
    const { client } = oauthClientOf(() => signedInWith("/account"));
    await client.oauth.finish({ provider: "corp", url: callbackUrl, replaceUrl: false });
    expect(replaced).toEqual([]);
    await client.oauth.finish({ provider: "corp", url: callbackUrl });
    expect(replaced).toEqual(["/account"]);
  });

  it("outside a browser, finish says which it lacks, the callback URL or the provider, and sends nothing", async () => {
    const { client, server } = oauthClientOf(() => signedInWith("/"));
    await expect(client.oauth.finish({ provider: "corp" })).rejects.toThrow(
      new TypeError("oauth.finish() needs the callback URL outside a browser: pass { url }"),
    );
    await expect(client.oauth.finish({ url: callbackUrl })).rejects.toThrow(
      new TypeError("oauth.finish() cannot tell the provider: pass { provider }, or call oauth.start() in this tab first"),
    );
    expect(server.sent).toEqual([]);
  });

  it("with sessionStorage disabled (it throws, as in privacy modes), start still answers and finish cannot tell the provider, sending nothing", async () => {
    const refuse = () => {
      throw new DOMException("The operation is insecure.", "SecurityError");
    };
    const disabled: KeyValueStorage = { getItem: refuse, setItem: refuse, removeItem: refuse };
    vi.stubGlobal("sessionStorage", disabled);
    const { client, callbacks } = oauthClientOf(() => signedInWith("/"));
    expect(await client.oauth.start("corp", { navigate: false })).toEqual(begun.data);
    await expect(client.oauth.finish({ url: callbackUrl })).rejects.toThrow(/cannot tell the provider/);
    expect(callbacks()).toEqual([]);
  });

  it("STUP-5, ASVS 7.2.4: reauthenticate sends the access token, the browser's cookies, the return path and a TOTP code; finish keeps the answer as the tokens of the new session, as a sign-in's", async () => {
    const raised = tokenSet(2);
    const { client, server } = await signedInScriptedClient((request) => {
      if (request.path.endsWith("/reauthenticate")) return begun;
      if (request.path === "/auth/refresh") return { code: 0, data: tokenSet(3) };
      return { code: 0, data: { ...raised, returnPath: "/vault", reauthenticated: true } };
    });
    const replaced = stubHistory();
    expect(await client.oauth.reauthenticate("corp", { returnPath: "/vault", totpCode: "123456", navigate: false })).toEqual(
      begun.data,
    );
    const [sent] = server.sentTo("/auth/oauth/corp/reauthenticate");
    expect(sent).toMatchObject({
      method: "POST",
      authorization: "Bearer access-1",
      credentials: "include",
      body: { redirect: "/vault", totpCode: "123456" },
    });
    const step = await client.oauth.finish({ provider: "corp", url: callbackUrl });
    expect(step).toEqual({ status: "reauthenticated", user: scriptedUser, returnPath: "/vault" });
    expect(replaced).toEqual(["/vault"]);
    expect(await client.accessToken()).toBe("access-2");
    const [callback] = server.sent.filter(({ path }) => path.includes("/callback"));
    expect(callback).toMatchObject({ path: "/auth/oauth/corp/callback?code=the-code&state=the-state", credentials: "include" });
    await client.refresh();
    expect(server.sentTo("/auth/refresh").map(({ body }) => body)).toEqual([{ refreshToken: "refresh-2" }]);
  });

  it("STUP-5: reauthenticate needs a signed-in client and sends nothing without one", async () => {
    const { client, server } = oauthClientOf(() => signedInWith("/"));
    await expect(client.oauth.reauthenticate("corp", { navigate: false })).rejects.toMatchObject({ kind: "not_signed_in" });
    expect(server.sent).toEqual([]);
  });
});
