import { driveAuthorization } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type OidcProviderOptions,
  type OidcTestProvider,
  defaultOidcRedirectUri,
  startOidcProvider,
} from "../../../../test/fixtures/oidc-provider.js";
import { authError, makeClock } from "../flows/fixtures.test-support.js";
import { beginOAuthSignIn } from "./authorize.js";
import { verifyOAuthCallback } from "./callback.js";
import { authWithProviders, discoveredProvider, plainOAuthProvider } from "./oauth.test-support.js";

const providers: OidcTestProvider[] = [];

async function provider(options: OidcProviderOptions = {}): Promise<OidcTestProvider> {
  const started = await startOidcProvider(options);
  providers.push(started);
  return started;
}

let honest: OidcTestProvider;

beforeAll(async () => {
  honest = await provider();
});

afterAll(async () => {
  await Promise.all(providers.map((started) => started.close()));
});

function authFor(idp: OidcTestProvider, client: "confidential" | "public" = "confidential") {
  return authWithProviders({ corp: discoveredProvider(idp, {}, client) });
}

/** Begins a sign-in, signs in at the provider as `username`, and returns the callback's query and the browser binding. */
async function throughProvider(harness: ReturnType<typeof authFor>, username = "alice", consent = true) {
  const { authUrl, browserBinding } = await beginOAuthSignIn(harness.auth, { provider: "corp", redirect: "/welcome" });
  const callback = await driveAuthorization(authUrl, { username, consent });
  return { query: callback.search, browserBinding, callback };
}

describe("verifyOAuthCallback against a real OpenID provider", () => {
  it("OA-1..OA-6: the whole code flow with PKCE and nonce yields the person's profile, for a confidential and a public client", async () => {
    for (const client of ["confidential", "public"] as const) {
      const harness = authFor(honest, client);
      const { query, browserBinding } = await throughProvider(harness);
      const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding });
      expect(verified.profile).toMatchObject({
        subject: honest.accounts.alice?.sub,
        email: honest.accounts.alice?.email,
        emailVerified: honest.accounts.alice?.email_verified,
        displayName: honest.accounts.alice?.name,
      });
      expect(verified).toMatchObject({ returnPath: "/welcome", userId: null });
    }
  });

  it("OA-1: a missing, unknown or replayed state, or another browser's, is 40100", async () => {
    const harness = authFor(honest);
    const { query, browserBinding } = await throughProvider(harness);
    const withoutState = new URLSearchParams(query);
    withoutState.delete("state");
    const code = async (q: string, binding: string | undefined) =>
      (await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query: q, browserBinding: binding }))).code;
    expect(await code(withoutState.toString(), browserBinding)).toBe(40100);
    const unknown = new URLSearchParams(query);
    unknown.set("state", "A".repeat(43));
    expect(await code(unknown.toString(), browserBinding)).toBe(40100);
    expect(await code(query, "another browser's cookie")).toBe(40100);
    await verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding });
    expect(await code(query, browserBinding), "replayed").toBe(40100);

    const fresh = await throughProvider(harness);
    expect(
      await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query: fresh.query, browserBinding: undefined })),
    ).toMatchObject({ code: 40100, message: "The sign-in state is missing, unknown, expired or already used" });
  });

  it("OA-10: a callback with another browser's binding, none, or for another provider does not spend the state: the browser that began it still finishes", async () => {
    const harness = authWithProviders({ corp: discoveredProvider(honest), twin: discoveredProvider(honest) });
    const { query, browserBinding } = await throughProvider(harness);
    for (const [provider, binding] of [
      ["corp", "another browser's cookie"],
      ["corp", undefined],
      ["twin", browserBinding],
    ] as const) {
      const error = await authError(verifyOAuthCallback(harness.auth, { provider, query, browserBinding: binding }));
      expect(error, `${provider} ${binding}`).toMatchObject({ code: 40100 });
    }
    const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding });
    expect(verified.profile.subject).toBe(honest.accounts.alice?.sub);
  });

  it("OA-1: a state begun for one provider is refused at another's callback, even from the same browser", async () => {
    const harness = authWithProviders({ corp: discoveredProvider(honest), twin: discoveredProvider(honest) });
    const { query, browserBinding } = await throughProvider(harness);
    expect((await authError(verifyOAuthCallback(harness.auth, { provider: "twin", query, browserBinding }))).code).toBe(40100);
  });

  it("OA-1: a flow begun under one issuer and finished where the provider's issuer is configured otherwise is 40100", async () => {
    const other = await provider();
    const before = authFor(honest);
    const after = authWithProviders({ corp: discoveredProvider(other) }, { storage: before.storage });
    const { query, browserBinding } = await throughProvider(before);
    expect(await authError(verifyOAuthCallback(after.auth, { provider: "corp", query, browserBinding }))).toMatchObject({
      code: 40100,
      message: "The provider's issuer changed during the sign-in",
    });
  });

  it("OA-6: claims map to the profile: strings only, roles from the configured claim, the ID token's claims over user-info's", async () => {
    const idp = await provider({
      tamperIdTokenClaims: (claims) => ({ ...claims, name: "Name In ID Token" }),
      tamperUserInfo: (claims) => ({ ...claims, name: "Name In User-Info", preferred_username: 42, groups: ["staff", 5, "ops"] }),
    });
    const harness = authWithProviders({ corp: discoveredProvider(idp, { claims: { roles: "groups" } }) });
    const alice = await throughProvider(harness);
    const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", ...alice });
    expect(verified.profile).toEqual({
      subject: idp.accounts.alice?.sub,
      username: undefined,
      email: idp.accounts.alice?.email,
      emailVerified: true,
      displayName: "Name In ID Token",
      roles: ["staff", "ops"],
    });
    const bobHarness = authFor(honest);
    const bob = await throughProvider(bobHarness, "bob");
    const verifiedBob = await verifyOAuthCallback(bobHarness.auth, {
      provider: "corp",
      query: bob.query,
      browserBinding: bob.browserBinding,
    });
    expect(verifiedBob.profile).toMatchObject({ subject: honest.accounts.bob?.sub, emailVerified: false });
  });

  it("OA-6: a provider that stops answering between the redirect and the code exchange is 50300, not a refusal", async () => {
    const idp = await startOidcProvider();
    const harness = authFor(idp);
    const { query, browserBinding } = await throughProvider(harness);
    await idp.close();
    expect(await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }))).toMatchObject({
      code: 50300,
      message: "The sign-in provider could not be reached",
      cause: expect.any(Error),
    });
  });

  it("OA-3: an iss other than the provider's, or none while the provider advertises it, is 40100", async () => {
    const harness = authFor(honest);
    for (const iss of ["https://evil.example", null]) {
      const { query, browserBinding } = await throughProvider(harness);
      const changed = new URLSearchParams(query);
      if (iss === null) changed.delete("iss");
      else changed.set("iss", iss);
      const error = await authError(
        verifyOAuthCallback(harness.auth, { provider: "corp", query: changed.toString(), browserBinding }),
      );
      expect(error, String(iss)).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
    }
  });

  it("OA-12: with unsafeAllowMissingIss a callback without iss signs in; a wrong or empty iss is still 40100", async () => {
    const harness = authWithProviders({ corp: discoveredProvider(honest, { unsafeAllowMissingIss: true }) });
    const dropped = await throughProvider(harness);
    const withoutIss = new URLSearchParams(dropped.query);
    expect(withoutIss.get("iss"), "the provider sends iss").toBe(honest.issuer);
    withoutIss.delete("iss");
    const verified = await verifyOAuthCallback(harness.auth, {
      provider: "corp",
      query: withoutIss.toString(),
      browserBinding: dropped.browserBinding,
    });
    expect(verified.profile.subject).toBe(honest.accounts.alice?.sub);
    for (const iss of ["https://evil.example", ""]) {
      const { query, browserBinding } = await throughProvider(harness);
      const changed = new URLSearchParams(query);
      changed.set("iss", iss);
      const error = await authError(
        verifyOAuthCallback(harness.auth, { provider: "corp", query: changed.toString(), browserBinding }),
      );
      expect(error, JSON.stringify(iss)).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
    }
  });

  it("OA-12: the option relaxes only its own provider: another provider's callback without iss is still 40100", async () => {
    const harness = authWithProviders({
      lax: discoveredProvider(honest, { unsafeAllowMissingIss: true, redirectUri: "https://app.example.com/oauth/lax" }),
      corp: discoveredProvider(honest),
    });
    const { query, browserBinding } = await throughProvider(harness);
    const withoutIss = new URLSearchParams(query);
    withoutIss.delete("iss");
    const error = await authError(
      verifyOAuthCallback(harness.auth, { provider: "corp", query: withoutIss.toString(), browserBinding }),
    );
    expect(error).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
  });

  it("OA-12: createAuth refuses unsafeAllowMissingIss on a provider whose redirectUri another provider shares, naming both", () => {
    expect(() =>
      authWithProviders({ corp: discoveredProvider(honest, { unsafeAllowMissingIss: true }), twin: discoveredProvider(honest) }),
    ).toThrow(
      new TypeError(
        `Portcullis configuration: oauth.providers.corp.unsafeAllowMissingIss needs a redirectUri no other provider uses, but providers.twin uses the same "${defaultOidcRedirectUri}"`,
      ),
    );
  });

  it("OA-9: the provider's error is answered with a fixed message, never its text", async () => {
    const harness = authFor(honest);
    const { query, browserBinding } = await throughProvider(harness, "alice", false);
    expect(new URLSearchParams(query).get("error")).toBe("access_denied");
    const error = await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }));
    expect(error).toMatchObject({ code: 40100, message: "The provider did not sign you in" });
    const again = await throughProvider(harness, "alice", false);
    const spoofed = new URLSearchParams(again.query);
    spoofed.set("error_description", "<script>alert(1)</script>");
    const second = await authError(
      verifyOAuthCallback(harness.auth, { provider: "corp", query: spoofed.toString(), browserBinding: again.browserBinding }),
    );
    expect(second.message).not.toContain("script");
  });

  it("OA-6: an ID token with a wrong nonce, audience or issuer, or expired, is 40100", async () => {
    const tampered: Record<string, (claims: Record<string, unknown>) => Record<string, unknown>> = {
      nonce: (claims) => ({ ...claims, nonce: "another nonce" }),
      aud: (claims) => ({ ...claims, aud: "another-client" }),
      iss: (claims) => ({ ...claims, iss: "https://evil.example" }),
      exp: (claims) => ({ ...claims, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }),
    };
    for (const [name, tamper] of Object.entries(tampered)) {
      const idp = await provider({ tamperIdTokenClaims: tamper as never });
      const harness = authFor(idp);
      const { query, browserBinding } = await throughProvider(harness);
      const error = await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }));
      expect(error.code, name).toBe(40100);
    }
  });

  it("OA-6: an ID token whose iat is more than 30 seconds ahead of the instance's clock (a day, 31 s) is 40100; 30 s ahead passes", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const issuedAhead = async (seconds: number) => {
      const idp = await provider({
        tamperIdTokenClaims: (claims) => ({ ...claims, iat: nowSeconds + seconds, exp: nowSeconds + seconds + 3600 }),
      });
      const harness = authWithProviders({ corp: discoveredProvider(idp) }, { clock: makeClock(nowSeconds * 1000) });
      const { query, browserBinding } = await throughProvider(harness);
      return verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding });
    };
    for (const seconds of [86_400, 31]) {
      const error = await authError(issuedAhead(seconds));
      expect(error, String(seconds)).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
      expect((error.cause as Error).message, String(seconds)).toBe("the ID token's iat is in the future");
    }
    expect((await issuedAhead(30)).profile.subject).toBe(honest.accounts.alice?.sub);
  });

  it("STUP-5, ASVS 6.8.4: the acr, amr and auth_time the provider recorded are read from its ID token, never from user-info", async () => {
    const authTime = Math.floor(Date.now() / 1000) - 600;
    const recorded = await provider({
      requireAuthTime: true,
      authentication: () => ({ amr: ["pwd", "otp"], acr: "urn:example:mfa", authTime }),
      tamperUserInfo: (claims) => ({ ...claims, amr: ["mfa"], acr: "urn:example:other" }),
    });
    const harness = authFor(recorded);
    const { query, browserBinding } = await throughProvider(harness);
    const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding });
    expect(verified.authentication).toEqual({ authTime, amr: ["pwd", "otp"], acr: "urn:example:mfa" });

    const boasting = authFor(
      await provider({ tamperUserInfo: (claims) => ({ ...claims, amr: ["mfa"], acr: "urn:x", auth_time: 1 }) }),
    );
    const again = await throughProvider(boasting);
    const plain = await verifyOAuthCallback(boasting.auth, {
      provider: "corp",
      query: again.query,
      browserBinding: again.browserBinding,
    });
    expect(plain.authentication).toEqual({ authTime: undefined, amr: [], acr: undefined });
  });

  it("STUP-5, ASVS 6.8.4: an ID token whose amr is no list of strings, acr no string, or auth_time more than 30 s ahead is 40100", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    const tampered: Record<string, (claims: Record<string, unknown>) => Record<string, unknown>> = {
      "amr a string": (claims) => ({ ...claims, amr: "pwd otp" }),
      "amr with a number": (claims) => ({ ...claims, amr: ["pwd", 2] }),
      "acr a number": (claims) => ({ ...claims, acr: 2 }),
      "auth_time ahead": (claims) => ({ ...claims, auth_time: nowSeconds + 600 }),
      "auth_time a string": (claims) => ({ ...claims, auth_time: String(nowSeconds) }),
    };
    for (const [name, tamper] of Object.entries(tampered)) {
      const harness = authWithProviders(
        { corp: discoveredProvider(await provider({ tamperIdTokenClaims: tamper as never })) },
        { clock: makeClock(nowSeconds * 1000) },
      );
      const { query, browserBinding } = await throughProvider(harness);
      const error = await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }));
      expect(error, name).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
    }
  });

  it("OA-6: an unsigned ID token (alg none) or one signed with a key the provider does not publish is 40100", async () => {
    for (const idTokenSigning of ["none", "foreign-key"] as const) {
      const harness = authFor(await provider({ idTokenSigning }));
      const { query, browserBinding } = await throughProvider(harness);
      const error = await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }));
      expect(error, idTokenSigning).toMatchObject({ code: 40100, message: "The provider's answer was not valid" });
      expect(error.cause, idTokenSigning).toBeInstanceOf(Error);
    }
  });

  it("OA-6: user-info naming another subject than the ID token is 40100", async () => {
    const harness = authFor(await provider({ tamperUserInfo: (claims) => ({ ...claims, sub: "someone-else" }) }));
    const { query, browserBinding } = await throughProvider(harness);
    const error = await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }));
    expect(error.code).toBe(40100);
    const unchanged = authFor(await provider({ tamperUserInfo: (claims) => ({ ...claims, name: "Changed Name" }) }));
    const passing = await throughProvider(unchanged);
    const verified = await verifyOAuthCallback(unchanged.auth, { provider: "corp", ...passing });
    expect(verified.profile).toMatchObject({ subject: honest.accounts.alice?.sub, displayName: "Changed Name" });
  });

  it("OA-1: 20 simultaneous callbacks with one state give exactly one verified sign-in", async () => {
    const harness = authFor(honest);
    const { query, browserBinding } = await throughProvider(harness);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding })),
    );
    expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") expect(outcome.reason).toMatchObject({ code: 40100 });
    }
  });

  it("OA-5: a plain OAuth 2.0 provider, configured by its URLs with a profile function, signs the person in through user-info", async () => {
    const harness = authWithProviders({
      corp: await plainOAuthProvider(honest, {
        scopes: ["openid", "email"],
        profile: (info) => ({ subject: `forge:${String(info.sub)}`, username: "forge-alice", email: String(info.email) }),
      }),
    });
    const { authUrl, browserBinding } = await beginOAuthSignIn(harness.auth, { provider: "corp" });
    expect(new URL(authUrl).searchParams.has("nonce")).toBe(false);
    const callback = await driveAuthorization(authUrl, { username: "alice" });
    const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", query: callback.search, browserBinding });
    expect(verified.profile).toEqual({
      subject: `forge:${honest.accounts.alice?.sub}`,
      username: "forge-alice",
      email: honest.accounts.alice?.email,
    });
  });

  it("OA-7: without a roles claim configured no roles are read, whatever the provider sends", async () => {
    const idp = await provider({ tamperUserInfo: (claims) => ({ ...claims, roles: ["admin"], undefined: ["admin"] }) });
    const harness = authFor(idp);
    const alice = await throughProvider(harness);
    expect((await verifyOAuthCallback(harness.auth, { provider: "corp", ...alice })).profile.roles).toBeUndefined();
  });

  it("OA-6: without a user-info endpoint the ID token's claims make the profile", async () => {
    const idp = await provider({ tamperDiscovery: ({ userinfo_endpoint: _left, ...document }) => document });
    const harness = authFor(idp);
    const alice = await throughProvider(harness);
    const verified = await verifyOAuthCallback(harness.auth, { provider: "corp", ...alice });
    expect(verified.profile).toMatchObject({ subject: idp.accounts.alice?.sub, email: undefined });
  });

  it("OA-6: a subject claim the provider does not send, or a profile function without a string subject, is 40100", async () => {
    const unmapped = authWithProviders({ corp: discoveredProvider(honest, { claims: { subject: "employee_id" } }) });
    const refusedProfiles: Array<() => never> = [() => undefined as never, () => ({ subject: 5 }) as never];
    const harnesses = [
      unmapped,
      ...(await Promise.all(
        refusedProfiles.map(async (profile) => authWithProviders({ corp: await plainOAuthProvider(honest, { profile }) })),
      )),
    ];
    for (const harness of harnesses) {
      const { query, browserBinding } = await throughProvider(harness);
      expect(await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }))).toMatchObject({
        code: 40100,
        message: "The provider did not say who you are",
      });
    }
  });

  it("OA-6: a profile without a subject is 40100", async () => {
    const harness = authWithProviders({ corp: await plainOAuthProvider(honest, { profile: () => ({ subject: "" }) }) });
    const { query, browserBinding } = await throughProvider(harness);
    expect(await authError(verifyOAuthCallback(harness.auth, { provider: "corp", query, browserBinding }))).toMatchObject({
      code: 40100,
      message: "The provider did not say who you are",
    });
  });
});
