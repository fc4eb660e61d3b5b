// The public local provider: its default accounts, its pages, its keys, and that it prints nothing.
import { createHash, generateKeyPairSync } from "node:crypto";
import { createServer } from "node:net";
import * as oauth from "oauth4webapi";
import { afterEach, describe, expect, it, vi } from "vitest";
import { localProviderAccounts, localProviderPassword } from "./accounts.js";
import { driveAuthorization } from "./drive-authorization.js";
import { type LocalProvider, startLocalProvider } from "./provider.js";

const redirectUri = "http://localhost:3000/oauth/local/callback";
const insecure = { [oauth.allowInsecureRequests]: true };
const started: LocalProvider[] = [];

async function start(options: Partial<Parameters<typeof startLocalProvider>[0]> = {}): Promise<LocalProvider> {
  const provider = await startLocalProvider({ clients: [{ clientId: "app", redirectUris: [redirectUri] }], ...options });
  started.push(provider);
  return provider;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((provider) => provider.close()));
});

/** Runs the authorization-code flow of the public client `app` as `username`; the ID token's claims and the user-info. */
async function signIn(provider: LocalProvider, username: string) {
  const issuer = new URL(provider.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  const client: oauth.Client = { client_id: "app" };
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint ?? "");
  url.search = new URLSearchParams({
    client_id: "app",
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  }).toString();
  const callback = await driveAuthorization(url, { username });
  const parameters = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    parameters,
    redirectUri,
    codeVerifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  const userInfo = await oauth.processUserInfoResponse(
    as,
    client,
    claims?.sub ?? "",
    await oauth.userInfoRequest(as, client, tokens.access_token, insecure),
  );
  return { claims, userInfo, header: JSON.parse(Buffer.from(tokens.id_token?.split(".")[0] ?? "", "base64url").toString()) };
}

/** Opens the login page of a fresh authorization request and returns its URL and answer. */
async function loginPage(provider: LocalProvider): Promise<{ url: URL; response: Response; cookie: string }> {
  const authorize = new URL("/auth", provider.issuer);
  authorize.search = new URLSearchParams({
    client_id: "app",
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
  }).toString();
  const redirect = await fetch(authorize, { redirect: "manual" });
  const cookie = redirect.headers
    .getSetCookie()
    .map((header) => header.split(";", 1)[0])
    .join("; ");
  const url = new URL(redirect.headers.get("location") ?? "", provider.issuer);
  return { url, response: await fetch(url, { headers: { cookie } }), cookie };
}

describe("startLocalProvider", () => {
  it("prints nothing, from its import to its close: keys, cookie keys, store and pages are all configured", async () => {
    const calls = (["log", "info", "warn", "error", "debug"] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation(() => {}),
    );
    try {
      const provider = await start();
      await signIn(provider, "ada");
      await fetch(new URL("/session/end", provider.issuer));
      await fetch(new URL("/auth?client_id=nobody", provider.issuer));
      await fetch(new URL("/.well-known/openid-configuration", provider.issuer), {
        headers: { origin: "http://localhost:3000" },
      });
      for (const spy of calls) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of calls) spy.mockRestore();
    }
  });

  it("signs in the demo's accounts by default, each with its fixed sub, email and name", async () => {
    const provider = await start();
    expect(provider.accounts).toBe(localProviderAccounts);
    expect(provider.issuer).toBe(`http://127.0.0.1:${provider.port}`);
    for (const username of ["ada", "bob"] as const) {
      const account = localProviderAccounts[username];
      const { claims, userInfo } = await signIn(provider, username);
      expect(claims).toMatchObject({ iss: provider.issuer, aud: "app", sub: account.sub });
      expect(userInfo).toEqual({
        sub: account.sub,
        email: account.email,
        email_verified: account.email_verified,
        name: account.name,
      });
    }
    expect(localProviderAccounts.ada.password).toBe(localProviderPassword);
  });

  it("takes accounts of its own instead, and refuses a wrong password on the login page itself", async () => {
    const provider = await start({
      accounts: {
        grace: { sub: "g-1", email: "grace@example.com", email_verified: true, name: "Grace", password: "secret one" },
      },
    });
    const { url, cookie } = await loginPage(provider);
    const refused = await fetch(url, {
      method: "POST",
      headers: { cookie },
      body: new URLSearchParams({ prompt: "login", username: "ada", password: localProviderPassword }),
    });
    const html = await refused.text();
    expect(refused.status).toBe(200);
    expect(html).toContain('<p id="sign-in-error" class="error" role="alert">Wrong username or password.</p>');
    expect(html).toContain('value="ada"');
    expect(html).toContain('aria-invalid="true" aria-describedby="sign-in-error"');
    expect(html).not.toContain(localProviderPassword);
  });

  it("serves its pages with one inline style, allowed by its hash and nothing else", async () => {
    const provider = await start();
    const { response } = await loginPage(provider);
    const html = await response.text();
    const style = /<style>([^<]*)<\/style>/.exec(html)?.[1] ?? "";
    const hash = createHash("sha256").update(style).digest("base64");
    expect(response.headers.get("content-security-policy")).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; base-uri 'none'; frame-ancestors 'none'`,
    );
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(style).toContain("color-scheme:light dark");
    expect(style).toContain("prefers-color-scheme:dark");
    expect(html).toMatch(/<label>Username <input type="text" name="username"[^>]*><\/label>/);
    expect(html).toMatch(/<label>Password <input type="password" name="password"[^>]*><\/label>/);
    expect(html).toContain('<button type="submit" class="primary">Sign in</button>');

    const error = await fetch(new URL("/auth?client_id=nobody", provider.issuer));
    expect(error.headers.get("content-security-policy")).toBe(response.headers.get("content-security-policy"));
    expect(await error.text()).toContain(`<style>${style}</style>`);
  });

  it("signs with the key it is given, under its RFC 7638 thumbprint, so a restart with the same key keeps the kid", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const first = await start({ signingKey: privateKey });
    const { header } = await signIn(first, "ada");
    expect(header).toMatchObject({ alg: "RS256", kid: first.signingKey.kid });
    const jwks = (await (await fetch(new URL("/jwks", first.issuer))).json()) as { keys: { kid: string; n: string }[] };
    expect(jwks.keys).toEqual([expect.objectContaining({ kid: first.signingKey.kid, n: first.signingKey.n })]);
    await first.close();

    const second = await start({ signingKey: privateKey });
    expect(second.signingKey).toEqual(first.signingKey);
    const { claims } = await signIn(second, "ada");
    expect(claims?.sub).toBe(localProviderAccounts.ada.sub);
    expect((await start()).signingKey.kid).not.toBe(first.signingKey.kid);
  });

  it("listens on the port it is given, and releases it when closed", async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const provider = await startLocalProvider({ clients: [], port: free });
    expect(provider.issuer).toBe(`http://127.0.0.1:${free}`);
    await provider.close();
    const again = await startLocalProvider({ clients: [], port: free });
    await again.close();
  });

  it("states in its ID tokens how each sign-in was made: the amr, acr and auth_time `authentication` records, auth_time only to a client that asks", async () => {
    const authTime = Math.floor(Date.now() / 1000) - 3600;
    const recorded = await start({
      clients: [{ clientId: "app", redirectUris: [redirectUri], requireAuthTime: true }],
      authentication: (account) => ({ amr: ["pwd", "otp"], acr: `urn:example:${account.name.split(" ")[0]}`, authTime }),
    });
    const { claims } = await signIn(recorded, "ada");
    expect(claims).toMatchObject({ amr: ["pwd", "otp"], acr: "urn:example:Ada", auth_time: authTime });

    const plain = await start();
    const { claims: unstated } = await signIn(plain, "ada");
    for (const claim of ["amr", "acr", "auth_time"]) expect(unstated, claim).not.toHaveProperty(claim);

    const now = Math.floor(Date.now() / 1000);
    const asked = await start({ clients: [{ clientId: "app", redirectUris: [redirectUri], requireAuthTime: true }] });
    const { claims: timed } = await signIn(asked, "bob");
    expect(timed?.auth_time).toBeGreaterThanOrEqual(now);
    expect(timed).not.toHaveProperty("amr");
  });

  it("refuses a signing key that is not an RSA private key", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    for (const signingKey of [privateKey, publicKey]) {
      await expect(startLocalProvider({ clients: [], signingKey })).rejects.toThrow(TypeError);
    }
  });
});
