import {
  type Auth,
  type AuthConfig,
  type CreateAuthOptions,
  type DirectorySettings,
  type OAuthConfig,
  saveDirectoryPolicy,
  webauthnRegisterBegin,
  webauthnRegisterFinish,
} from "@portcullis/core";
import { ldapDirectory } from "@portcullis/ldap";
import { type SoftwareAuthenticator, driveAuthorization } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { originalClientSettings } from "../../docs/examples/original-client.js";
import {
  type TestAuth,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  makeTestAuthenticator,
  nextTotpCode,
  testPassword,
} from "../fixtures/auth.js";
import { directorySettingsFor } from "../fixtures/directory-settings.js";
import { type OidcTestProvider, startOidcProvider } from "../fixtures/oidc-provider.js";
import { describeNeedingService } from "../fixtures/required-service.js";
import { type SlapdServer, ldapGroups, ldapPeople, slapdMissing, startSlapd } from "../fixtures/slapd.js";
import { call } from "./client.js";
import { type RunningServer, adapters } from "./servers.js";

/**
 * A client built for the original service (its interface: `../shared/seed/000_…txt`), played
 * call by call against Portcullis configured as `docs/compatibility.md` says. It never looks at
 * the HTTP status beyond expecting 200, reads only `code` of the envelope and `data`, forwards
 * the provider's callback without `iss`, and reads `user.role` (one string) from a token set.
 */

const redirectUri = "https://app.example.com/auth/callback";
let idp: OidcTestProvider;

beforeAll(async () => {
  idp = await startOidcProvider({ redirectUris: [redirectUri] });
});

afterAll(async () => {
  await idp.close();
});

/**
 * The configuration `docs/compatibility.md` gives for such a client (its example,
 * `docs/examples/original-client.ts`), on the test provider; `unsafeAllowMissingIss: false`
 * takes the provider option back to show what it is for; `config` adds top-level entries (a
 * directory).
 */
function compatibleAuth(
  changes: { unsafeAllowMissingIss?: false } = {},
  config: Partial<AuthConfig & CreateAuthOptions> = {},
): TestAuth {
  const corp = {
    issuer: idp.issuer,
    clientId: idp.clients.confidential.clientId,
    clientSecret: idp.clients.confidential.clientSecret,
    redirectUri,
  };
  const settings = originalClientSettings({ corp }, { unsafeAllowHttpLoopbackProviders: true });
  const oauth = settings.oauth as OAuthConfig;
  expect(oauth.providers.corp?.unsafeAllowMissingIss).toBe(true);
  return makeTestAuth({
    ...settings,
    oauth: { ...oauth, providers: { corp: { ...oauth.providers.corp, ...corp, ...changes } } },
    throttle: generousThrottle,
    ...config,
  });
}

/** Registers a passkey for a user through core, as the account page (not part of the original interface) would. */
async function registerPasskey(auth: Auth, userId: string): Promise<SoftwareAuthenticator> {
  const authenticator = makeTestAuthenticator();
  const { ceremonyId, options } = await webauthnRegisterBegin(auth, { userId, label: "Laptop", password: testPassword });
  await webauthnRegisterFinish(auth, { userId, ceremonyId, response: authenticator.register(options) });
  return authenticator;
}

/** What the original client keeps of a token set. */
interface Session {
  accessToken: string;
  refreshToken: string;
  role: string;
  username: string;
}

/** The envelope as the original client reads it: `code` and `data`, from an answer it expects to be a 200. */
// biome-ignore lint/suspicious/noExplicitAny: the client reads whatever `data` the service sent.
type Answer = { code: number; data: any };

class OriginalClient {
  constructor(
    private readonly server: RunningServer,
    /** The provider's cookie the browser keeps between authorize and callback. */
    private cookie = "",
  ) {}

  private async send(
    method: string,
    path: string,
    json?: unknown,
    token?: string,
    extraHeaders: Record<string, string> = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...extraHeaders, ...(this.cookie ? { cookie: this.cookie } : {}) };
    const result = await call(this.server, method, path, { json, token, headers });
    // It knows nothing of semantic statuses: anything but a 200 would be a broken page.
    expect(result.status, `${method} ${path}`).toBe(200);
    const setCookie = result.headers.get("set-cookie");
    if (setCookie) this.cookie = setCookie.split(";", 1)[0] as string;
    expect(typeof result.body?.code, `${method} ${path}: an envelope`).toBe("number");
    return { code: result.body.code, data: result.body.data };
  }

  /** A token set as the client reads it: the two tokens and `user.role`, a single string. */
  private session(answer: Answer): Session {
    expect(answer.code).toBe(0);
    const { accessToken, refreshToken, user } = answer.data;
    expect(typeof accessToken).toBe("string");
    expect(typeof refreshToken).toBe("string");
    expect(typeof user.role, "user.role is one string").toBe("string");
    return { accessToken, refreshToken, role: user.role, username: user.username };
  }

  /** POST /api/v1/auth/login: a session, 40102 with a temporary token, or the refusal's code. */
  async login(username: string, password: string): Promise<Session | { tempToken: string } | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/login", { username, password });
    if (answer.code === 40102) return { tempToken: answer.data.tempToken };
    if (answer.code !== 0) return { code: answer.code };
    return this.session(answer);
  }

  async verifyTotp(tempToken: string, code: string): Promise<Session | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/2fa/verify", { tempToken, code });
    return answer.code === 0 ? this.session(answer) : { code: answer.code };
  }

  async recover(tempToken: string, recoveryCode: string): Promise<Session | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/2fa/recovery", { tempToken, recoveryCode });
    return answer.code === 0 ? this.session(answer) : { code: answer.code };
  }

  async refresh(refreshToken: string): Promise<Session | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/refresh", { refreshToken });
    return answer.code === 0 ? this.session(answer) : { code: answer.code };
  }

  async logout(refreshToken: string): Promise<number> {
    return (await this.send("POST", "/api/v1/auth/logout", { refreshToken })).code;
  }

  async me(accessToken: string): Promise<Answer> {
    return this.send("GET", "/api/v1/auth/me", undefined, accessToken);
  }

  /** GET /api/v1/auth/public-key/config: whether its page offers a passkey button. */
  async passkeysEnabled(): Promise<boolean> {
    const answer = await this.send("GET", "/api/v1/auth/public-key/config");
    expect(answer.code).toBe(0);
    return answer.data.enabled;
  }

  /**
   * Passkey sign-in: `public-key/login/begin` (with the username when the page has one, else a
   * discoverable ceremony), the browser's assertion for its options, then `login/finish` with
   * that assertion as the body and the begin step's `ceremonyId` in `X-WebAuthn-Ceremony`.
   * `replay` keeps what was sent, to send it again.
   */
  async passkeySignIn(
    authenticator: SoftwareAuthenticator,
    username?: string,
    replay?: { ceremonyId?: string; assertion?: unknown },
  ): Promise<Session | { code: number }> {
    const begun = await this.send("POST", "/api/v1/auth/public-key/login/begin", username === undefined ? {} : { username });
    expect(begun.code).toBe(0);
    const { ceremonyId, options } = begun.data;
    const assertion = authenticator.authenticate(options);
    if (replay) Object.assign(replay, { ceremonyId, assertion });
    return this.passkeyFinish(ceremonyId, assertion);
  }

  async passkeyFinish(ceremonyId: string, assertion: unknown): Promise<Session | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/public-key/login/finish", assertion, undefined, {
      "x-webauthn-ceremony": ceremonyId,
    });
    return answer.code === 0 ? this.session(answer) : { code: answer.code };
  }

  async providers(): Promise<string[]> {
    const answer = await this.send("GET", "/api/v1/auth/oauth/providers");
    expect(answer.code).toBe(0);
    return answer.data.map((provider: { name: string }) => provider.name);
  }

  /**
   * Provider sign-in as its pages do it: authorize, the provider's pages, then the callback page
   * forwarding `code` and `state` only (or the query `forward` makes of what the provider sent).
   */
  async oauthSignIn(
    provider: string,
    username: string,
    forward: (sent: URLSearchParams) => URLSearchParams = (sent) =>
      new URLSearchParams({ code: sent.get("code") ?? "", state: sent.get("state") ?? "" }),
  ): Promise<Session | { code: number }> {
    const begun = await this.send("GET", `/api/v1/auth/oauth/${provider}/authorize`);
    expect(begun.code).toBe(0);
    const sent = await driveAuthorization(begun.data.authUrl, { username });
    expect(sent.searchParams.get("iss"), "the provider sends iss").toBe(idp.issuer);
    const answer = await this.send("GET", `/api/v1/auth/oauth/${provider}/callback?${forward(sent.searchParams)}`);
    return answer.code === 0 ? this.session(answer) : { code: answer.code };
  }
}

const isSession = (value: unknown): value is Session => typeof (value as Session).accessToken === "string";

async function withServer(
  start: (auth: Auth) => Promise<RunningServer>,
  auth: Auth,
  body: (client: OriginalClient) => Promise<void>,
) {
  const server = await start(auth);
  try {
    await body(new OriginalClient(server));
  } finally {
    await server.close();
  }
}

describe("a client built for the original service, unchanged, against Portcullis configured for it", () => {
  for (const [name, start] of adapters) {
    describe(name, () => {
      it("password login gives a token set with user.role; refresh rotates (the spent token is 40101); logout ends the session", async () => {
        const testAuth = compatibleAuth();
        await createTestUser(testAuth.auth, "dana", ["admin", "user"]);
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.login("dana", "wrong password")).toEqual({ code: 40100 });
          const signedIn = await client.login("dana", "correct horse battery staple");
          if (!isSession(signedIn)) throw new Error(`login: ${JSON.stringify(signedIn)}`);
          expect(signedIn).toMatchObject({ username: "dana", role: "admin" });
          expect((await client.me(signedIn.accessToken)).code).toBe(0);

          const refreshed = await client.refresh(signedIn.refreshToken);
          if (!isSession(refreshed)) throw new Error(`refresh: ${JSON.stringify(refreshed)}`);
          expect(refreshed.role).toBe("admin");
          expect(refreshed.refreshToken, "refresh rotates").not.toBe(signedIn.refreshToken);
          expect((await client.me(refreshed.accessToken)).code).toBe(0);

          const fresh = await client.login("dana", "correct horse battery staple");
          if (!isSession(fresh)) throw new Error("second login");
          expect(await client.refresh(signedIn.refreshToken), "a spent refresh token").toEqual({ code: 40101 });
          expect(await client.refresh(refreshed.refreshToken), "the reuse revoked that session").toEqual({ code: 40101 });

          expect(await client.logout(fresh.refreshToken)).toBe(0);
          expect(await client.refresh(fresh.refreshToken), "after logout").toEqual({ code: 40101 });
        });
      });

      it("40102 + TOTP through 2fa/verify; a recovery code through 2fa/recovery, once", async () => {
        const testAuth = compatibleAuth();
        const user = await createTotpUser(testAuth.auth, "erin", ["editor"]);
        await withServer(start, testAuth.auth, async (client) => {
          const first = await client.login("erin", user.password);
          if (!("tempToken" in first)) throw new Error(`login: ${JSON.stringify(first)}`);
          expect(await client.verifyTotp(first.tempToken, "000000")).toEqual({ code: 40103 });
          const verified = await client.verifyTotp(first.tempToken, await nextTotpCode(testAuth, user.secret));
          expect(verified).toMatchObject({ username: "erin", role: "editor" });

          const second = await client.login("erin", user.password);
          if (!("tempToken" in second)) throw new Error("second login");
          const recoveryCode = user.recoveryCodes[0] as string;
          const recovered = await client.recover(second.tempToken, recoveryCode);
          expect(recovered).toMatchObject({ username: "erin", role: "editor" });
          if (!isSession(recovered)) throw new Error("recovery");
          expect((await client.me(recovered.accessToken)).code).toBe(0);

          const third = await client.login("erin", user.password);
          if (!("tempToken" in third)) throw new Error("third login");
          expect(await client.recover(third.tempToken, recoveryCode), "a recovery code is spent once").toEqual({
            code: 40103,
          });
        });
      });

      it("passkey sign-in: public-key/config, then login/begin and login/finish, discoverable and by username, give a token set with user.role; a replayed assertion is 40100", async () => {
        const testAuth = compatibleAuth();
        const user = await createTestUser(testAuth.auth, "fern", ["editor", "user"]);
        const authenticator = await registerPasskey(testAuth.auth, user.id);
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.passkeysEnabled()).toBe(true);
          const sent: { ceremonyId?: string; assertion?: unknown } = {};
          const discovered = await client.passkeySignIn(authenticator, undefined, sent);
          if (!isSession(discovered)) throw new Error(`passkey: ${JSON.stringify(discovered)}`);
          expect(discovered).toMatchObject({ username: "fern", role: "editor" });
          expect((await client.me(discovered.accessToken)).data).toMatchObject({ username: "fern", role: "editor" });
          expect(await client.passkeyFinish(sent.ceremonyId as string, sent.assertion), "a spent ceremony").toEqual({
            code: 40100,
          });

          const named = await client.passkeySignIn(authenticator, "fern");
          if (!isSession(named)) throw new Error(`passkey by username: ${JSON.stringify(named)}`);
          expect(named.role).toBe("editor");
          const refreshed = await client.refresh(named.refreshToken);
          if (!isSession(refreshed)) throw new Error("refresh");
          expect(refreshed.role).toBe("editor");
          expect(await client.logout(refreshed.refreshToken)).toBe(0);

          const elsewhere = compatibleAuth();
          const stranger = await registerPasskey(elsewhere.auth, (await createTestUser(elsewhere.auth, "fern")).id);
          expect(await client.passkeySignIn(stranger), "a passkey registered with another service").toEqual({ code: 40100 });
        });
      });

      it("OA-12: provider sign-in against a real OpenID provider with iss dropped by the callback page gives a token set with user.role, refreshes and logs out; a wrong iss is 40100", async () => {
        const testAuth = compatibleAuth();
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.providers()).toEqual(["corp"]);
          const signedIn = await client.oauthSignIn("corp", "alice");
          if (!isSession(signedIn)) throw new Error(`callback: ${JSON.stringify(signedIn)}`);
          expect(signedIn).toMatchObject({ username: "alice", role: "user" });
          expect((await client.me(signedIn.accessToken)).data).toMatchObject({ username: "alice", role: "user" });
          const refreshed = await client.refresh(signedIn.refreshToken);
          if (!isSession(refreshed)) throw new Error("refresh");
          expect(await client.logout(refreshed.refreshToken)).toBe(0);

          const wrongIss = await client.oauthSignIn("corp", "alice", (sent) => {
            const forwarded = new URLSearchParams(sent);
            forwarded.set("iss", "https://evil.example");
            return forwarded;
          });
          expect(wrongIss).toEqual({ code: 40100 });
        });
      });

      it("OA-3: without unsafeAllowMissingIss the same callback without iss is 40100", async () => {
        const testAuth = compatibleAuth({ unsafeAllowMissingIss: false });
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.oauthSignIn("corp", "alice")).toEqual({ code: 40100 });
        });
      });
    });
  }
});

const describeWithSlapd = describeNeedingService("test/http/original-client.test.ts", slapdMissing());
const { alice, bob, johnSmith } = ldapPeople;
let slapd: SlapdServer;

/**
 * The saved directory policy such a client needs (`docs/compatibility.md`): it sends
 * `{username, password}` without `provider`, so `loginOrder: "directory-first"`; admins → admin,
 * engineers → engineer; then `changes`.
 */
const originalClientDirectory = (changes: Partial<DirectorySettings> = {}): DirectorySettings =>
  directorySettingsFor(slapd, {
    loginOrder: "directory-first",
    mappings: [
      { group: ldapGroups.admins.dn, role: "admin", priority: 1 },
      { group: ldapGroups.engineers.dn, role: "engineer", priority: 5 },
    ],
    ...changes,
  });

/** {@link compatibleAuth} with `ldapDirectory()` and `policy` saved through core. */
async function compatibleAuthWithDirectory(policy: DirectorySettings): Promise<TestAuth> {
  const testAuth = compatibleAuth({}, { directory: ldapDirectory() });
  await saveDirectoryPolicy(testAuth.auth, policy);
  return testAuth;
}

describeWithSlapd("a client built for the original service, with directory accounts at login, against slapd", () => {
  beforeAll(async () => {
    slapd = await startSlapd();
  });
  afterAll(async () => {
    await slapd?.stop();
  });

  for (const [name, start] of adapters) {
    describe(name, () => {
      it('under loginOrder "directory-first", {username, password} signs a directory account in with user.role from its groups; refresh and logout; a local account still signs in', async () => {
        const testAuth = await compatibleAuthWithDirectory(originalClientDirectory());
        await createTestUser(testAuth.auth, "dana", ["admin"]);
        await withServer(start, testAuth.auth, async (client) => {
          const admin = await client.login(alice.uid, alice.password);
          if (!isSession(admin)) throw new Error(`directory login: ${JSON.stringify(admin)}`);
          expect(admin).toMatchObject({ username: alice.uid, role: "admin" });
          expect((await client.me(admin.accessToken)).data).toMatchObject({ username: alice.uid, role: "admin" });
          const refreshed = await client.refresh(admin.refreshToken);
          if (!isSession(refreshed)) throw new Error(`refresh: ${JSON.stringify(refreshed)}`);
          expect(refreshed.role, "groups re-read at refresh").toBe("admin");
          expect(await client.logout(refreshed.refreshToken)).toBe(0);
          expect(await client.refresh(refreshed.refreshToken), "after logout").toEqual({ code: 40101 });

          expect(await client.login(johnSmith.uid, johnSmith.password)).toMatchObject({ role: "engineer" });
          expect(await client.login(alice.uid, "not alice's password")).toEqual({ code: 40100 });
          expect(await client.login(bob.uid, bob.password), "in no mapped group, without a fallback role").toEqual({
            code: 40300,
          });
          expect(await client.login("dana", testPassword), "no directory entry: the local account").toMatchObject({
            username: "dana",
            role: "admin",
          });
        });
      });

      it('under the default loginOrder "explicit" the same login of a directory account is 40100: the client sends no provider', async () => {
        const testAuth = await compatibleAuthWithDirectory(originalClientDirectory({ loginOrder: "explicit" }));
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.login(alice.uid, alice.password)).toEqual({ code: 40100 });
        });
      });
    });
  }
});
