import { describe, expect, it } from "vitest";
import { type OAuthProviderConfig, resolveOAuthConfig } from "./provider-config.js";

const oidc: OAuthProviderConfig = {
  issuer: "https://id.example.com",
  clientId: "portcullis",
  clientSecret: "a client secret",
  redirectUri: "https://app.example.com/auth/oauth/corp/callback",
};

const plain: OAuthProviderConfig = {
  authorizationUrl: "https://forge.example/login/oauth/authorize",
  tokenUrl: "https://forge.example/login/oauth/access_token",
  userInfoUrl: "https://api.forge.example/user",
  clientId: "forge-client",
  clientSecret: "forge secret",
  redirectUri: "https://app.example.com/auth/oauth/forge/callback",
  scopes: ["read:user"],
  profile: (info) => ({ subject: String(info.id), username: String(info.login) }),
};

function refusal(config: unknown): string {
  try {
    resolveOAuthConfig(config as never);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    const { message } = error as Error;
    expect(message, "the message says what to fix").toMatch(/ (must|is required|needs|either|set) /);
    return message;
  }
  throw new Error("accepted");
}

describe("resolveOAuthConfig", () => {
  it("OA-4, OA-5: an OIDC provider and a plain OAuth 2.0 provider with their defaults", () => {
    const providers = resolveOAuthConfig({ providers: { corp: oidc, forge: plain } });
    expect(providers.get("corp")).toMatchObject({
      name: "corp",
      displayName: "corp",
      kind: "oidc",
      clientId: "portcullis",
      redirectUri: oidc.redirectUri,
      scopes: ["openid", "email", "profile"],
      claims: {
        subject: "sub",
        username: "preferred_username",
        email: "email",
        emailVerified: "email_verified",
        displayName: "name",
      },
      provisioning: { enabled: true, defaultRoles: [] },
      linkByVerifiedEmail: false,
      trustedForSecondFactor: false,
      secondFactorAcrValues: [],
      trustWithoutAssertion: false,
    });
    expect(providers.get("corp")?.issuer?.href).toBe("https://id.example.com/");
    expect(providers.get("forge")).toMatchObject({ kind: "oauth2", scopes: ["read:user"], issuer: undefined });
    expect(resolveOAuthConfig(undefined).size).toBe(0);
  });

  it("OA-4: openid is always asked of an OIDC provider; a public client has no secret", () => {
    const [provider] = resolveOAuthConfig({
      providers: { pub: { ...oidc, clientSecret: undefined, scopes: ["email"], provisioning: { defaultRoles: ["user"] } } },
    }).values();
    expect(provider).toMatchObject({
      scopes: ["openid", "email"],
      clientSecret: undefined,
      provisioning: { enabled: true, defaultRoles: ["user"] },
    });
  });

  it("OA-5: provider URLs are https; http only on a loopback host and only with the named unsafe option", () => {
    const local = { ...oidc, issuer: "http://127.0.0.1:4000" };
    expect(refusal({ providers: { corp: local } })).toMatch(
      /providers\.corp\.issuer uses http on a loopback host: set oauth\.unsafeAllowHttpLoopbackProviders/,
    );
    expect(
      resolveOAuthConfig({ providers: { corp: local }, unsafeAllowHttpLoopbackProviders: true }).get("corp")?.allowHttpLoopback,
    ).toBe(true);
    for (const issuer of [
      "http://id.example.com",
      "ftp://id.example.com",
      "not a url",
      "https://user:pw@id.example.com",
      "https://id.example.com/#x",
    ]) {
      expect(refusal({ providers: { corp: { ...oidc, issuer } }, unsafeAllowHttpLoopbackProviders: true }), issuer).toMatch(
        /providers\.corp\.issuer/,
      );
    }
  });

  it("HTTP-6: a URL with a password in it is refused without echoing the password", () => {
    const message = refusal({ providers: { corp: { ...oidc, issuer: "https://client:s3cret-value@id.example.com" } } });
    expect(message).toMatch(/providers\.corp\.issuer must be a URL without credentials/);
    expect(message).not.toContain("s3cret-value");
  });

  it("OA-5: the redirect URI is an exact https URL without a fragment, or http on localhost", () => {
    expect(
      resolveOAuthConfig({ providers: { corp: { ...oidc, redirectUri: "http://localhost:3000/cb" } } }).get("corp")?.redirectUri,
    ).toBe("http://localhost:3000/cb");
    for (const redirectUri of [
      "http://app.example.com/cb",
      "https://app.example.com/cb#frag",
      "https://u:p@app.example.com/cb",
      "/relative",
      undefined,
    ]) {
      expect(refusal({ providers: { corp: { ...oidc, redirectUri } } }), String(redirectUri)).toMatch(
        /providers\.corp\.redirectUri/,
      );
    }
  });

  it("STUP-5, ASVS 6.8.4: secondFactorAcrValues and the unsafe trust without an assertion refine trustedForSecondFactor, and need it", () => {
    const trusted = { ...oidc, trustedForSecondFactor: true };
    expect(
      resolveOAuthConfig({ providers: { corp: { ...trusted, secondFactorAcrValues: ["urn:example:mfa", "2"] } } }).get("corp"),
    ).toMatchObject({
      trustedForSecondFactor: true,
      secondFactorAcrValues: ["urn:example:mfa", "2"],
      trustWithoutAssertion: false,
    });
    expect(
      resolveOAuthConfig({ providers: { corp: { ...trusted, unsafeTrustForSecondFactorWithoutAssertion: true } } }).get("corp"),
    ).toMatchObject({ trustedForSecondFactor: true, trustWithoutAssertion: true });
    expect(refusal({ providers: { corp: { ...oidc, secondFactorAcrValues: ["2"] } } })).toBe(
      "Portcullis configuration: oauth.providers.corp.secondFactorAcrValues needs trustedForSecondFactor: true (it says which acr values prove a second factor)",
    );
    expect(refusal({ providers: { corp: { ...oidc, unsafeTrustForSecondFactorWithoutAssertion: true } } })).toBe(
      "Portcullis configuration: oauth.providers.corp.unsafeTrustForSecondFactorWithoutAssertion needs trustedForSecondFactor: true",
    );
    for (const secondFactorAcrValues of ["2", [""], [2], [" "], null, ["urn:example:mfa", ""], ["2", 3]]) {
      expect(refusal({ providers: { corp: { ...trusted, secondFactorAcrValues } } }), String(secondFactorAcrValues)).toMatch(
        /^Portcullis configuration: oauth\.providers\.corp\.secondFactorAcrValues must be a list of acr values/,
      );
    }
    expect(refusal({ providers: { corp: { ...trusted, unsafeTrustForSecondFactorWithoutAssertion: "yes" } } })).toMatch(
      /providers\.corp\.unsafeTrustForSecondFactorWithoutAssertion must be true or false/,
    );
    expect(refusal({ providers: { forge: { ...plain, trustedForSecondFactor: true } } })).toBe(
      "Portcullis configuration: oauth.providers.forge.trustedForSecondFactor needs an OpenID Connect provider, whose ID tokens can assert a second factor (amr, acr); a plain OAuth 2.0 provider asserts none: set unsafeTrustForSecondFactorWithoutAssertion as well to trust every sign-in",
    );
    expect(
      resolveOAuthConfig({
        providers: { forge: { ...plain, trustedForSecondFactor: true, unsafeTrustForSecondFactorWithoutAssertion: true } },
      }).get("forge"),
    ).toMatchObject({ trustedForSecondFactor: true, trustWithoutAssertion: true });
  });

  it("each mistake names the setting: names, kinds, client, profile, scopes, flags", () => {
    expect(refusal({ providers: { Corp: oidc } })).toMatch(/the name "Corp"/);
    expect(refusal({ providers: { directory: oidc } })).toMatch(
      /providers: a provider must not be named "directory", which is kept for directory \(LDAP\) accounts/,
    );
    expect(refusal({ providers: { corp: { ...oidc, tokenUrl: plain.tokenUrl } } })).toMatch(/either issuer .* not both/);
    expect(refusal({ providers: { forge: { ...plain, userInfoUrl: undefined } } })).toMatch(/needs issuer/);
    expect(refusal({ providers: { forge: { ...plain, profile: undefined } } })).toMatch(/providers\.forge\.profile is required/);
    expect(refusal({ providers: { corp: { ...oidc, clientId: "" } } })).toMatch(/providers\.corp\.clientId/);
    expect(refusal({ providers: { corp: { ...oidc, scopes: ["open id"] } } })).toMatch(/providers\.corp\.scopes/);
    expect(refusal({ providers: { corp: { ...oidc, linkByVerifiedEmail: "yes" } } })).toMatch(
      /providers\.corp\.linkByVerifiedEmail/,
    );
    expect(refusal({ providers: { corp: { ...oidc, provisioning: "yes" } } })).toMatch(/providers\.corp\.provisioning/);
    expect(refusal({ providers: { corp: { ...oidc, claims: { subject: "" } } } })).toMatch(/providers\.corp\.claims\.subject/);
    expect(refusal({ providers: null })).toMatch(/oauth\.providers must be an object/);
    expect(refusal({ providers: {}, unsafeAllowHttpLoopbackProviders: "yes" })).toMatch(/unsafeAllowHttpLoopbackProviders/);
  });

  it("each mistake names the setting, at its edges", () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /oauth\.providers must be an object/],
      ["corp", /oauth\.providers must be an object/],
      [{ providers: [] }, /oauth\.providers must be an object/],
      [{ providers: { "corp!": oidc } }, /the name "corp!"/],
      [{ providers: { ["a".repeat(33)]: oidc } }, /the name "a{33}"/],
      [{ providers: { corp: null } }, /oauth\.providers\.corp must be an object/],
      [{ providers: { corp: "https://id.example.com" } }, /oauth\.providers\.corp must be an object/],
      [{ providers: { corp: { ...oidc, profile: "id" } } }, /providers\.corp\.profile must be a function/],
      [{ providers: { corp: { ...oidc, clientId: "  " } } }, /providers\.corp\.clientId must be a non-empty string/],
      [{ providers: { corp: { ...oidc, clientSecret: "" } } }, /providers\.corp\.clientSecret must be a non-empty string/],
      [{ providers: { corp: { ...oidc, displayName: "" } } }, /providers\.corp\.displayName must be a non-empty string/],
      [{ providers: { corp: { ...oidc, scopes: ["openid", 5] } } }, /providers\.corp\.scopes/],
      [{ providers: { corp: { ...oidc, scopes: ["openid", "bad scope"] } } }, /providers\.corp\.scopes/],
      [{ providers: { corp: { ...oidc, scopes: "openid" } } }, /providers\.corp\.scopes/],
      [
        { providers: { corp: { ...oidc, provisioning: { defaultRoles: "admin" } } } },
        /providers\.corp\.provisioning\.defaultRoles/,
      ],
      [{ providers: { corp: { ...oidc, provisioning: { defaultRoles: ["r".repeat(65)] } } } }, /provisioning\.defaultRoles/],
      [{ providers: { corp: { ...oidc, provisioning: { defaultRoles: [""] } } } }, /provisioning\.defaultRoles/],
      [
        {
          providers: { corp: { ...oidc, provisioning: { defaultRoles: Array.from({ length: 51 }, (_, index) => `r${index}`) } } },
        },
        /providers\.corp\.provisioning\.defaultRoles must be at most 50 names; got 51/,
      ],
      [{ providers: { corp: { ...oidc, issuer: "https://id.example.com#x" } } }, /providers\.corp\.issuer/],
      [{ providers: { corp: { ...oidc, issuer: "https://someone@id.example.com" } } }, /providers\.corp\.issuer/],
      [{ providers: { forge: { ...plain, authorizationUrl: "ftp://forge.example/a" } } }, /providers\.forge\.authorizationUrl/],
      [{ providers: { forge: { ...plain, tokenUrl: 5 } } }, /providers\.forge\.tokenUrl/],
      [{ providers: { corp: { ...oidc, clientId: 5 } } }, /providers\.corp\.clientId must be a non-empty string/],
      [{ providers: { corp: { ...oidc, issuer: new URL("https://id.example.com") } } }, /providers\.corp\.issuer/],
      [{ providers: { corp: { ...oidc, issuer: "https://:secret@id.example.com" } } }, /providers\.corp\.issuer/],
      [{ providers: { forge: { ...plain, authorizationUrl: "ftp://forge.example/a" } } }, /got "ftp:\/\/forge\.example\/a"$/],
      [{ providers: { corp: { ...oidc, redirectUri: "ftp://localhost/cb" } } }, /providers\.corp\.redirectUri/],
      [{ providers: { corp: { ...oidc, redirectUri: "https://someone@app.example.com/cb" } } }, /providers\.corp\.redirectUri/],
      [{ providers: { corp: { ...oidc, redirectUri: "https://:secret@app.example.com/cb" } } }, /providers\.corp\.redirectUri/],
      [{ providers: { forge: { ...plain, userInfoUrl: "http://forge.example/u" } } }, /providers\.forge\.userInfoUrl/],
    ];
    for (const [config, message] of cases) expect(refusal(config), JSON.stringify(config)).toMatch(message);
  });

  it("OA-5: loopback is 127.0.0.0/8, localhost and [::1], nothing that only looks like it; defaults per kind", () => {
    const at = (issuer: string) =>
      resolveOAuthConfig({ providers: { corp: { ...oidc, issuer } }, unsafeAllowHttpLoopbackProviders: true });
    for (const host of ["127.0.0.2:8080", "localhost", "[::1]"]) expect(at(`http://${host}`).get("corp")?.kind).toBe("oidc");
    for (const host of ["127.example.com", "10.0.0.1", "128.0.0.1"]) expect(() => at(`http://${host}`), host).toThrow(/issuer/);
    const resolved = resolveOAuthConfig({
      providers: { corp: { ...oidc, provisioning: { defaultRoles: ["member"] } }, forge: { ...plain, scopes: undefined } },
    });
    expect(resolved.get("corp")).toMatchObject({
      scopes: ["openid", "email", "profile"],
      provisioning: { enabled: true, defaultRoles: ["member"] },
    });
    expect(resolved.get("forge")).toMatchObject({ scopes: [], provisioning: { enabled: true, defaultRoles: [] } });
    expect(resolveOAuthConfig({ providers: { corp: { ...oidc, provisioning: {} } } }).get("corp")?.provisioning).toEqual({
      enabled: true,
      defaultRoles: [],
    });
    const redacted = refusal({ providers: { corp: { ...oidc, issuer: "https://u:hunter2@id.example.com" } } });
    expect(redacted).not.toContain("hunter2");
    expect(redacted).toContain('got "https://…@id.example.com"');
    expect(() =>
      resolveOAuthConfig({
        providers: { corp: { ...oidc, issuer: "ftp://127.0.0.1/" } },
        unsafeAllowHttpLoopbackProviders: true,
      }),
    ).toThrow(/must use https/);
  });

  it("OA-11: every provider's answers are capped at 1 MiB and 10 s unless maxProviderAnswerBytes and providerTimeout say otherwise", () => {
    const defaults = resolveOAuthConfig({ providers: { corp: oidc, forge: plain } });
    for (const name of ["corp", "forge"]) {
      expect(defaults.get(name)?.answerLimits, name).toEqual({ maxBytes: 1024 * 1024, timeoutMs: 10_000 });
    }
    const set = resolveOAuthConfig({ providers: { corp: oidc }, maxProviderAnswerBytes: 1024, providerTimeout: "60s" });
    expect(set.get("corp")?.answerLimits).toEqual({ maxBytes: 1024, timeoutMs: 60_000 });
    expect(resolveOAuthConfig({ providers: { corp: oidc }, providerTimeout: 1 }).get("corp")?.answerLimits.timeoutMs).toBe(1000);
  });

  it("OA-12: unsafeAllowMissingIss is off by default and accepted for a provider whose redirectUri no other provider uses", () => {
    const providers = resolveOAuthConfig({
      providers: {
        corp: { ...oidc, unsafeAllowMissingIss: true },
        forge: plain,
        other: { ...oidc, redirectUri: "https://app.example.com/auth/oauth/other/callback", unsafeAllowMissingIss: false },
      },
    });
    expect(providers.get("corp")?.allowMissingIss).toBe(true);
    expect(providers.get("forge")?.allowMissingIss).toBe(false);
    expect(providers.get("other")?.allowMissingIss).toBe(false);
  });

  it("OA-12: unsafeAllowMissingIss with a redirectUri another provider shares (compared as URLs) is refused, naming both providers", () => {
    const shared = { ...plain, redirectUri: "HTTPS://APP.example.com:443/auth/oauth/corp/callback" };
    for (const providers of [
      { corp: { ...oidc, unsafeAllowMissingIss: true }, forge: shared },
      { forge: shared, corp: { ...oidc, unsafeAllowMissingIss: true } },
      { corp: { ...oidc, unsafeAllowMissingIss: true }, forge: { ...shared, unsafeAllowMissingIss: true } },
    ]) {
      expect(refusal({ providers })).toMatch(
        /^Portcullis configuration: oauth\.providers\.(corp|forge)\.unsafeAllowMissingIss needs a redirectUri no other provider uses, but providers\.(forge|corp) uses the same "https:\/\/app\.example\.com\/auth\/oauth\/corp\/callback"$/,
      );
    }
    expect(refusal({ providers: { corp: { ...oidc, unsafeAllowMissingIss: "yes" } } })).toMatch(
      /providers\.corp\.unsafeAllowMissingIss must be true or false/,
    );
  });

  it("OA-11: a cap under 1024 bytes, not a whole number, or a timeout over 60 s or not a duration is refused, naming the option", () => {
    for (const maxProviderAnswerBytes of [1023, 0, -1, 1.5, "1048576", Number.POSITIVE_INFINITY]) {
      expect(refusal({ providers: { corp: oidc }, maxProviderAnswerBytes }), String(maxProviderAnswerBytes)).toMatch(
        /^Portcullis configuration: oauth\.maxProviderAnswerBytes must be a whole number of at least 1024/,
      );
    }
    expect(refusal({ providers: { corp: oidc }, providerTimeout: "61s" })).toBe(
      'Portcullis configuration: oauth.providerTimeout must be at most "60s"; got "61s"',
    );
    for (const providerTimeout of ["2m", 0, "10ms", "soon"]) {
      expect(refusal({ providers: { corp: oidc }, providerTimeout }), String(providerTimeout)).toMatch(
        /^Portcullis configuration: oauth\.providerTimeout must be/,
      );
    }
  });
});
