import { type FetchFunction, memoryTokenStore } from "@portcullis/client";
import type { AuthConfig } from "@portcullis/core";
import { type LocalProviderAuthentication, driveAuthorization } from "@portcullis/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { storeCookies } from "../../packages/testing/src/local-provider/drive-authorization.js";
import { base32Decode, nextTotpCode } from "../fixtures/auth.js";
import { type OidcTestProvider, corpOAuthConfig, startOidcProvider } from "../fixtures/oidc-provider.js";
import { mapStorage } from "./browser-storage.js";
import { clientTargets, recordEvents, rejection, servedPerTest, statusIn } from "./client-servers.js";

const redirectUri = "https://app.example.com/auth/callback";
let provider: OidcTestProvider;
/** A provider whose ID tokens state `auth_time` as {@link recorded} says (STUP-5). */
let stating: OidcTestProvider;
let recorded: LocalProviderAuthentication = {};

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [redirectUri] });
  stating = await startOidcProvider({ redirectUris: [redirectUri], requireAuthTime: true, authentication: () => recorded });
});
afterAll(async () => {
  await provider.close();
  await stating.close();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

/** The server's configuration of the test provider as `corp`. */
const withProvider = (): Partial<AuthConfig> => ({ oauth: corpOAuthConfig(provider, redirectUri) });

/**
 * A fetch with one browser's cookie jar: what `credentials: "include"` gives a page, and what a
 * Node client passes as `fetch` to carry the OAuth binding cookie from `start` to `finish`.
 */
function browserWithCookies(): FetchFunction {
  const jar = new Map<string, string>();
  return async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (jar.size > 0) headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(new Request(request, { headers }));
    storeCookies(jar, response);
    return response;
  };
}

const callbackPath = (callback: URL) => `/api/v1/auth/oauth/corp/callback${callback.search}`;

describe.each(clientTargets)("client.oauth against %s and a real OpenID provider", (_name, start, statusMode) => {
  const serve = servedPerTest(start, statusMode);

  it("OA-1: providers; start answers the provider's URL without navigating (no window in Node); finish relays the callback's query with the binding cookie: signed in, with the return path", async () => {
    const harness = await serve(withProvider());
    const client = harness.client({ fetch: browserWithCookies() });
    const events = recordEvents(client);

    expect(await client.oauth.providers()).toEqual([{ name: "corp", displayName: "Corp ID" }]);
    const { authUrl } = await client.oauth.start("corp", { returnPath: "/account?tab=keys" });
    expect(new URL(authUrl).origin).toBe(provider.issuer);
    const callback = await driveAuthorization(authUrl, { username: "alice" });
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);

    const step = await client.oauth.finish({ provider: "corp", url: callback });
    expect(step).toEqual({
      status: "authenticated",
      offerPasskey: false,
      user: {
        id: expect.any(String),
        username: "alice",
        roles: [],
        totpEnabled: false,
        email: "alice@example.com",
        emailVerified: false,
        createdAt: expect.any(Number),
      },
      returnPath: "/account?tab=keys",
    });
    expect(harness.countSent("GET", callbackPath(callback))).toBe(1);
    expect(events).toEqual([["signedIn", { user: step.status === "authenticated" ? step.user : null }]]);
    expect((await client.me()).username).toBe("alice");

    // OA-1: the state was spent; the same callback again is refused, and the session stays.
    expect(await rejection(client.oauth.finish({ provider: "corp", url: callback }))).toMatchObject({
      kind: "server",
      code: 40100,
      status: statusIn(statusMode, 401),
    });
    expect((await client.currentUser())?.username).toBe("alice");
  });

  it("OA-1: a callback finished in another browser (no binding cookie) is 40100, and so is a denied consent; nothing is stored", async () => {
    const harness = await serve(withProvider());
    const client = harness.client({ fetch: browserWithCookies() });
    const otherBrowser = harness.client({ fetch: browserWithCookies() });

    const { authUrl } = await client.oauth.start("corp");
    const callback = await driveAuthorization(authUrl, { username: "alice" });
    expect(await rejection(otherBrowser.oauth.finish({ provider: "corp", url: callback }))).toMatchObject({ code: 40100 });
    expect(await otherBrowser.currentUser()).toBeNull();

    const denied = await driveAuthorization((await client.oauth.start("corp")).authUrl, { username: "bob", consent: false });
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect(await rejection(client.oauth.finish({ provider: "corp", url: denied }))).toMatchObject({ code: 40100 });
    expect(await client.currentUser()).toBeNull();
  });

  it("a provider's user with TOTP on: finish answers totp_required, and verifyTotp completes the sign-in with the return path kept", async () => {
    const harness = await serve(withProvider());
    const client = harness.client({ fetch: browserWithCookies() });
    const signInThroughProvider = async () => {
      const { authUrl } = await client.oauth.start("corp", { returnPath: "/settings" });
      return client.oauth.finish({ provider: "corp", url: await driveAuthorization(authUrl, { username: "alice" }) });
    };
    await signInThroughProvider();
    const secret = base32Decode((await client.totp.setup()).secret);
    await client.totp.enable({ code: await nextTotpCode(harness, secret) });
    await client.logout();

    const step = await signInThroughProvider();
    expect(step.status).toBe("totp_required");
    expect(step.returnPath).toBe("/settings");
    expect(await client.currentUser()).toBeNull();
    if (step.status !== "totp_required") return;
    const signedIn = await step.verifyTotp(await nextTotpCode(harness, secret));
    expect(signedIn.user).toMatchObject({ username: "alice", totpEnabled: true });
  });

  it("OA-8: start refuses a return path that leaves the app (40002) and an unknown provider (40400); in Node, finish needs the URL and the provider and sends nothing without them", async () => {
    const harness = await serve(withProvider());
    const client = harness.client({ fetch: browserWithCookies() });
    for (const returnPath of ["//evil.example", "https://evil.example/"]) {
      expect(await rejection(client.oauth.start("corp", { returnPath }))).toMatchObject({
        code: 40002,
        status: statusIn(statusMode, 400),
      });
    }
    expect(await rejection(client.oauth.start("other"))).toMatchObject({ code: 40400, status: statusIn(statusMode, 404) });

    const sentBefore = harness.sent.length;
    await expect(client.oauth.finish({ provider: "corp" })).rejects.toThrow(TypeError);
    await expect(client.oauth.finish({ url: `${redirectUri}?code=a&state=b` })).rejects.toThrow(TypeError);
    expect(harness.sent).toHaveLength(sentBefore);
  });

  it("STUP-5, ASVS 7.6.1, 7.2.4: a provider's hour-old sign-in meets 40104 on a maxAge route; reauthenticate and finish through the provider leave the client with a new session's tokens, and the route answers", async () => {
    const harness = await serve({ oauth: corpOAuthConfig(stating, redirectUri) });
    harness.clock.now = Date.now();
    const store = memoryTokenStore();
    const client = harness.client({ fetch: browserWithCookies(), store });
    recorded = { authTime: Math.floor(Date.now() / 1000) - 3600 };
    const signIn = await client.oauth.start("corp");
    await client.oauth.finish({ provider: "corp", url: await driveAuthorization(signIn.authUrl, { username: "alice" }) });
    const old = await client.fetch("/api/v1/things/recent");
    expect(old.status).toBe(statusIn(statusMode, 401));
    expect(await old.json()).toMatchObject({ code: 40104, data: { required: { maxAge: 300 } } });

    const before = await store.load();
    recorded = {};
    const { authUrl } = await client.oauth.reauthenticate("corp", { returnPath: "/vault" });
    expect(new URL(authUrl).searchParams.get("max_age")).toBe("0");
    const step = await client.oauth.finish({ provider: "corp", url: await driveAuthorization(authUrl, { username: "alice" }) });
    expect(step).toMatchObject({ status: "reauthenticated", user: { username: "alice" }, returnPath: "/vault" });
    const recent = await client.fetch("/api/v1/things/recent");
    expect(await recent.json()).toMatchObject({ code: 0, data: { amr: ["fed"] } });
    expect(harness.refreshesSent()).toBe(0);
    expect((await store.load())?.refreshToken).not.toBe(before?.refreshToken);
    await client.refresh();
    expect((await client.fetch("/api/v1/things/recent")).status).toBe(200);
  });

  it("in a browser: start sends the window to the provider and notes its name; finish on the callback page reads the address, recalls the provider and replaces the URL, never leaving the code in the history", async () => {
    const harness = await serve(withProvider());
    const client = harness.client({ fetch: browserWithCookies() });
    const assigned: string[] = [];
    const replaced: (string | undefined)[] = [];
    const page = { href: "https://app.example.com/sign-in", assign: (url: string) => assigned.push(url) };
    vi.stubGlobal("location", page);
    vi.stubGlobal("history", { replaceState: (_data: unknown, _unused: string, url?: string) => replaced.push(url) });
    vi.stubGlobal("sessionStorage", mapStorage());

    expect((await client.oauth.start("corp", { navigate: false })).authUrl).toEqual(expect.any(String));
    expect(assigned).toEqual([]);
    const { authUrl } = await client.oauth.start("corp", { returnPath: "/account" });
    expect(assigned).toEqual([authUrl]);

    page.href = (await driveAuthorization(authUrl, { username: "alice" })).href;
    expect(await client.oauth.finish()).toMatchObject({ status: "authenticated", returnPath: "/account" });
    expect(replaced).toEqual(["/account"]);

    // The provider was recalled once: a second finish on the page cannot tell it.
    await expect(client.oauth.finish()).rejects.toThrow(TypeError);
    expect(await rejection(client.oauth.finish({ provider: "corp" }))).toMatchObject({ code: 40100 });
    expect(replaced).toEqual(["/account", "/auth/callback"]);
  });
});
