import { driveAuthorization } from "@portcullis/testing";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type OidcTestProvider, defaultOidcRedirectUri, startOidcProvider } from "../../../../test/fixtures/oidc-provider.js";
import { sha256 } from "../crypto/random.js";
import { authError } from "../flows/fixtures.test-support.js";
import { oauthAuthorize } from "../flows/oauth-sign-in.js";
import type { MemoryStorage } from "../storage/memory.js";
import type { EncryptedSecret } from "../storage/types.js";
import { beginOAuthSignIn, verifierContext } from "./authorize.js";
import { authWithProviders, discoveredProvider, plainOAuthProvider } from "./oauth.test-support.js";

let provider: OidcTestProvider;

beforeAll(async () => {
  provider = await startOidcProvider();
});

afterAll(async () => {
  await provider.close();
});

function authWithProvider(issuer = provider.issuer) {
  return authWithProviders({ corp: discoveredProvider(provider, { issuer }) });
}

describe("beginOAuthSignIn", () => {
  it("OA-1, OA-2, OA-5: the authorization URL carries a 256-bit state, PKCE S256, a nonce and the exact redirect URI; the provider answers with a code for that state", async () => {
    const harness = authWithProvider();
    const { authUrl, browserBinding } = await beginOAuthSignIn(harness.auth, { provider: "corp", redirect: "/account" });
    const url = new URL(authUrl);
    expect(url.origin).toBe(provider.issuer);
    const state = url.searchParams.get("state") as string;
    expect(Buffer.from(state, "base64url")).toHaveLength(32);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("redirect_uri")).toBe(defaultOidcRedirectUri);
    expect(url.searchParams.get("scope")).toBe("openid email profile");
    expect(url.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(browserBinding).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const stored = await harness.storage.challenges.find(sha256(state), "oauth_state", harness.clock.now);
    expect(stored).toMatchObject({ userId: null, expiresAt: harness.clock.now + 10 * 60 * 1000 });
    expect(stored?.data).toMatchObject({
      provider: "corp",
      issuer: provider.issuer,
      returnPath: "/account",
      bindingHash: sha256(browserBinding),
    });
    expect(JSON.stringify(stored)).not.toContain(browserBinding);
    const sealed = (stored?.data as { sealedVerifier?: EncryptedSecret } | undefined)?.sealedVerifier as EncryptedSecret;
    expect(harness.auth.secretBox.open(sealed, verifierContext(sha256(state))).toString()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(() => harness.auth.secretBox.open(sealed, verifierContext(sha256("another state")))).toThrow();

    const callback = await driveAuthorization(authUrl, { username: "alice" });
    expect(callback.searchParams.get("state")).toBe(state);
    expect(callback.searchParams.get("iss")).toBe(provider.issuer);
    expect(callback.searchParams.get("code")).toBeTruthy();
  });

  it("OA-5: a provider with no scopes configured is asked for none (no empty scope parameter)", async () => {
    const harness = authWithProviders({
      corp: await plainOAuthProvider(provider, { scopes: [], profile: () => ({ subject: "x" }) }),
    });
    const { authUrl } = await beginOAuthSignIn(harness.auth, { provider: "corp" });
    expect(new URL(authUrl).searchParams.has("scope")).toBe(false);
  });

  it("OA-2: the S256 challenge of RFC 7636 appendix B", async () => {
    expect(await oauth.calculatePKCECodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe(
      "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    );
  });

  it("OA-8: a hostile return path is 40002 before anything is stored; an unknown provider 40400; an unreachable one 50300", async () => {
    const harness = authWithProvider();
    expect((await authError(beginOAuthSignIn(harness.auth, { provider: "corp", redirect: "//evil.example" }))).code).toBe(40002);
    expect(await authError(beginOAuthSignIn(harness.auth, { provider: "other" }))).toMatchObject({
      code: 40400,
      message: "No such sign-in provider",
    });
    expect((await authError(beginOAuthSignIn(harness.auth, { provider: undefined as never }))).message).toMatch(/provider/);
    const unreachable = authWithProvider("http://127.0.0.1:9");
    const error = await authError(beginOAuthSignIn(unreachable.auth, { provider: "corp" }));
    expect(error).toMatchObject({ code: 50300, message: "The sign-in provider could not be reached" });
    expect(error.cause).toBeInstanceOf(Error);
  });

  it("OA-4: the discovery document is fetched once an hour per auth, and again if the clock goes back", async () => {
    const fetches = vi.spyOn(globalThis, "fetch");
    try {
      const harness = authWithProvider();
      const discoveries = () =>
        fetches.mock.calls.filter(([url]) =>
          String(url instanceof Request ? url.url : url).includes("/.well-known/openid-configuration"),
        ).length;
      const begin = () => beginOAuthSignIn(harness.auth, { provider: "corp" });
      await begin();
      await begin();
      expect(discoveries()).toBe(1);
      harness.clock.advance(60 * 60 * 1000 - 1);
      await begin();
      expect(discoveries()).toBe(1);
      harness.clock.advance(1);
      await begin();
      expect(discoveries()).toBe(2);
      harness.clock.advance(-1);
      await begin();
      expect(discoveries()).toBe(3);
      await beginOAuthSignIn(authWithProvider().auth, { provider: "corp" });
      expect(discoveries()).toBe(4);
    } finally {
      fetches.mockRestore();
    }
  });

  it("OA-4: a discovery document whose issuer differs from the configured one, even by a trailing slash, is refused (50300)", async () => {
    const harness = authWithProvider(`${provider.issuer}/`);
    expect(await authError(beginOAuthSignIn(harness.auth, { provider: "corp" }))).toMatchObject({
      code: 50300,
      message: "The provider's discovery document names another issuer than the configured one",
    });
  });

  it("RL-7: each address may begin 30 sign-ins a minute (throttle.unauthenticatedWrites): the 31st is 42900 and stores nothing; other addresses, and refused input, are not counted", async () => {
    const harness = authWithProvider();
    const states = () => (harness.storage as MemoryStorage).sizes().challenges;
    const begin = (ip: string, redirect?: string) => oauthAuthorize(harness.auth, { provider: "corp", redirect, ip });
    expect((await authError(begin("203.0.113.7", "//evil.example"))).code).toBe(40002);
    for (let index = 0; index < 30; index += 1) await begin("203.0.113.7");
    expect(states()).toBe(30);
    expect(await authError(begin("203.0.113.7"))).toMatchObject({ code: 42900, retryAfterSeconds: 60 });
    expect(states()).toBe(30);
    expect(harness.events.filter((event) => event.type === "throttled")).toEqual([
      expect.objectContaining({ scope: "unauthenticatedWrites", key: "203.0.113.7", ip: "203.0.113.7" }),
    ]);
    await begin("203.0.113.8");
    expect(states()).toBe(31);
    harness.clock.advance(60_000);
    await begin("203.0.113.7");
    expect(states()).toBe(32);
  });

  it("RL-7: the hourly tier holds too: 300 an hour from one address, then 42900 until the hour's window ends", async () => {
    const harness = authWithProvider();
    let begun = 0;
    for (let minute = 0; minute < 12; minute += 1) {
      for (let index = 0; index < 30; index += 1) {
        const outcome = await oauthAuthorize(harness.auth, { provider: "corp", ip: "2001:db8:1:2::1" }).catch((error) => error);
        if (!(outcome instanceof Error)) begun += 1;
      }
      harness.clock.advance(60_000);
    }
    expect(begun).toBe(300);
    expect(await authError(oauthAuthorize(harness.auth, { provider: "corp", ip: "2001:db8:1:2::ffff" }))).toMatchObject({
      code: 42900,
      retryAfterSeconds: 48 * 60,
    });
  });
});
