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
  base32Decode,
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
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

/**
 * A client built for the original service (its interface: `../shared/seed/000_…txt`), played
 * call by call against Portcullis configured as `docs/compatibility.md` says. It never looks at
 * the HTTP status beyond expecting 200, reads only `code` of the envelope and `data`, forwards
 * the provider's callback without `iss`, and reads `user.role` (one string) from a token set.
 * Its login sends `provider: "local"`, or `"directory"` when the user picks the directory
 * toggle. Its settings pages: TOTP enrolment (`2fa/setup` with no password, showing the recovery
 * codes of that answer, then `2fa/enable` with a code) and the password change
 * (`PUT /api/v1/users/me/password` with `{oldPassword, newPassword}`).
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
 * directory) or replaces the example's (to take one of its options back).
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

  /**
   * POST /api/v1/auth/login: a session, 40102 with a temporary token, or the refusal's code. The
   * page sends `provider: "local"`, or `"directory"` with its directory toggle on.
   */
  async login(
    username: string,
    password: string,
    { directory = false }: { directory?: boolean } = {},
  ): Promise<Session | { tempToken: string } | { code: number }> {
    const provider = directory ? "directory" : "local";
    const answer = await this.send("POST", "/api/v1/auth/login", { username, password, provider });
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

  /**
   * The TOTP settings page's first step: `POST 2fa/setup` with an empty body (the page has no
   * password field); it shows the QR code and renders `data.recoveryCodes.map(…)`, so an answer
   * without that list breaks the page.
   */
  async setupTotp(
    accessToken: string,
  ): Promise<{ secret: string; otpauthUrl: string; recoveryCodes: string[] } | { code: number }> {
    const answer = await this.send("POST", "/api/v1/auth/2fa/setup", {}, accessToken);
    if (answer.code !== 0) return { code: answer.code };
    const { secret, otpauthUrl, recoveryCodes } = answer.data;
    expect(typeof secret).toBe("string");
    expect(typeof otpauthUrl).toBe("string");
    expect(Array.isArray(recoveryCodes), "the page renders data.recoveryCodes").toBe(true);
    return { secret, otpauthUrl, recoveryCodes: recoveryCodes.map((code: unknown) => String(code)) };
  }

  /** The TOTP settings page's second step: `POST 2fa/enable` with the code typed from the app. */
  async enableTotp(accessToken: string, code: string): Promise<Answer> {
    return this.send("POST", "/api/v1/auth/2fa/enable", { code }, accessToken);
  }

  /** The password settings page: `PUT /api/v1/users/me/password` with `{oldPassword, newPassword}`. */
  async changePassword(accessToken: string, oldPassword: string, newPassword: string): Promise<Answer> {
    return this.send("PUT", "/api/v1/users/me/password", { oldPassword, newPassword }, accessToken);
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
      it("password login gives a token set with user.role; refresh rotates (the spent token answers the current one within 10 s, then is 40101); logout ends the session", async () => {
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
          // Within refreshReuseInterval (10 s) the spent token answers the session's current one (RT-5: two tabs).
          const again = await client.refresh(signedIn.refreshToken);
          if (!isSession(again)) throw new Error(`within the interval: ${JSON.stringify(again)}`);
          expect(again.refreshToken).toBe(refreshed.refreshToken);
          testAuth.clock.advance(10_000);
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

      it('login sends provider "local" by default: the local account signs in; "directory" without a directory configured is 40400', async () => {
        const testAuth = compatibleAuth();
        await createTestUser(testAuth.auth, "lark", ["editor"]);
        await withServer(start, testAuth.auth, async (client) => {
          expect(await client.login("lark", testPassword)).toMatchObject({ username: "lark", role: "editor" });
          expect(await client.login("lark", "wrong password")).toEqual({ code: 40100 });
          expect(await client.login("lark", testPassword, { directory: true })).toEqual({ code: 40400 });
        });
      });

      it("RC-4, TOTP-7: TOTP enrolment as its settings page does it, six minutes after signing in and with no password: 2fa/setup's recovery codes (a second setup replaces them), 2fa/enable, then 40102 and one of those codes signs in, once", async () => {
        const testAuth = compatibleAuth();
        await createTestUser(testAuth.auth, "gale", ["editor"]);
        await withServer(start, testAuth.auth, async (client) => {
          const signedIn = await client.login("gale", testPassword);
          if (!isSession(signedIn)) throw new Error(`login: ${JSON.stringify(signedIn)}`);
          testAuth.clock.advance(6 * 60_000);

          const abandoned = await client.setupTotp(signedIn.accessToken);
          if (!("secret" in abandoned)) throw new Error(`setup: ${JSON.stringify(abandoned)}`);
          expect(abandoned.recoveryCodes).toHaveLength(10);
          expect(await client.login("gale", testPassword), "a pending factor asks for nothing yet").toMatchObject({
            username: "gale",
          });
          const setup = await client.setupTotp(signedIn.accessToken);
          if (!("secret" in setup)) throw new Error(`second setup: ${JSON.stringify(setup)}`);
          expect(setup.recoveryCodes.filter((code) => abandoned.recoveryCodes.includes(code))).toEqual([]);

          const secret = base32Decode(setup.secret);
          const enabled = await client.enableTotp(signedIn.accessToken, await nextTotpCode(testAuth, secret));
          expect(enabled).toEqual({ code: 0, data: { enabled: true, recoveryCodes: setup.recoveryCodes } });
          expect((await client.me(signedIn.accessToken)).data).toMatchObject({ username: "gale", totpEnabled: true });

          const first = await client.login("gale", testPassword);
          if (!("tempToken" in first)) throw new Error(`login after enrolment: ${JSON.stringify(first)}`);
          expect(await client.recover(first.tempToken, abandoned.recoveryCodes[0] as string), "a replaced set").toEqual({
            code: 40103,
          });
          const recoveryCode = setup.recoveryCodes[4] as string;
          expect(await client.recover(first.tempToken, recoveryCode)).toMatchObject({ username: "gale", role: "editor" });
          const second = await client.login("gale", testPassword);
          if (!("tempToken" in second)) throw new Error("second login");
          expect(await client.recover(second.tempToken, recoveryCode), "spent").toEqual({ code: 40103 });
          expect(await client.verifyTotp(second.tempToken, await nextTotpCode(testAuth, secret))).toMatchObject({
            username: "gale",
          });
        });
      });

      it("TOTP-5: without unsafeAllowTotpEnrolmentWithoutProof the same page is refused with 40001 once the sign-in is five minutes old, and works before", async () => {
        const testAuth = compatibleAuth({}, { reauthentication: {} });
        await createTestUser(testAuth.auth, "hale");
        await withServer(start, testAuth.auth, async (client) => {
          const signedIn = await client.login("hale", testPassword);
          if (!isSession(signedIn)) throw new Error(`login: ${JSON.stringify(signedIn)}`);
          testAuth.clock.advance(4 * 60_000);
          expect(await client.setupTotp(signedIn.accessToken)).toMatchObject({ recoveryCodes: expect.any(Array) });
          testAuth.clock.advance(60_000);
          expect(await client.setupTotp(signedIn.accessToken)).toEqual({ code: 40001 });
        });
      });

      it("SE-6: the password page's PUT /api/v1/users/me/password {oldPassword, newPassword} changes the password: the new one signs in and the old one is 40100; the other sessions end, this one goes on", async () => {
        const testAuth = compatibleAuth();
        await createTestUser(testAuth.auth, "iris", ["admin"]);
        const newPassword = "a brand new passphrase";
        await withServer(start, testAuth.auth, async (client) => {
          const elsewhere = await client.login("iris", testPassword);
          const signedIn = await client.login("iris", testPassword);
          if (!isSession(signedIn) || !isSession(elsewhere)) throw new Error("login");
          testAuth.clock.advance(6 * 60_000);
          expect(await client.changePassword(signedIn.accessToken, "not my password", newPassword)).toMatchObject({
            code: 40100,
          });
          expect(await client.changePassword(signedIn.accessToken, testPassword, "short")).toMatchObject({ code: 42200 });
          expect(await client.changePassword(signedIn.accessToken, testPassword, newPassword)).toEqual({
            code: 0,
            data: { changed: true, sessionsEnded: 1 },
          });
          expect(await client.refresh(elsewhere.refreshToken), "the other session ended").toEqual({ code: 40101 });
          expect(await client.refresh(signedIn.refreshToken), "this one goes on").toMatchObject({ role: "admin" });
          expect(await client.login("iris", testPassword)).toEqual({ code: 40100 });
          expect(await client.login("iris", newPassword)).toMatchObject({ username: "iris", role: "admin" });
        });
      });

      it("SE-6, TOTP-8: a TOTP user's password page, which sends no code, changes the password long after the sign-in; a wrong old password is still 40100", async () => {
        const testAuth = compatibleAuth();
        const user = await createTotpUser(testAuth.auth, "kira", ["editor"]);
        const newPassword = "a brand new passphrase";
        await withServer(start, testAuth.auth, async (client) => {
          const first = await client.login("kira", user.password);
          if (!("tempToken" in first)) throw new Error(`login: ${JSON.stringify(first)}`);
          const signedIn = await client.verifyTotp(first.tempToken, await nextTotpCode(testAuth, user.secret));
          if (!isSession(signedIn)) throw new Error(`2fa/verify: ${JSON.stringify(signedIn)}`);
          testAuth.clock.advance(10 * 60_000);
          expect(await client.changePassword(signedIn.accessToken, "not my password", newPassword)).toMatchObject({
            code: 40100,
          });
          expect(await client.changePassword(signedIn.accessToken, user.password, newPassword)).toMatchObject({
            code: 0,
            data: { changed: true },
          });
          expect(await client.login("kira", newPassword)).toHaveProperty("tempToken");
        });
      });

      it("SE-6: without http.passwordChangeAlias the same PUT is the app's own 404, not Portcullis's", async () => {
        const testAuth = compatibleAuth({}, { http: { statusMode: "always-200" } });
        const user = await createTestUser(testAuth.auth, "jade");
        await withServer(start, testAuth.auth, async (client) => {
          const signedIn = await client.login("jade", user.password);
          if (!isSession(signedIn)) throw new Error("login");
          const server = (client as unknown as { server: RunningServer }).server;
          const answer = await call(server, "PUT", "/api/v1/users/me/password", {
            json: { oldPassword: user.password, newPassword: "a brand new passphrase" },
            token: signedIn.accessToken,
          });
          expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: { app: "not found" } });
          expect(await client.login("jade", user.password)).toMatchObject({ username: "jade" });
        });
      });
    });
  }
});

const describeWithSlapd = describeNeedingService("test/http/original-client.test.ts", slapdMissing());
const { alice, bob, johnSmith } = ldapPeople;
let slapd: SlapdServer;

/**
 * A saved directory policy for such a client: `loginOrder` as given (the client names the provider
 * at every login, so either order serves it); admins → admin, engineers → engineer; then `changes`.
 */
const originalClientDirectory = (changes: Partial<DirectorySettings> = {}): DirectorySettings =>
  directorySettingsFor(slapd, {
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
      for (const loginOrder of ["explicit", "directory-first"] as const) {
        it(`under loginOrder "${loginOrder}", the directory toggle (provider "directory") signs a directory account in with user.role from its groups, refresh and logout; the default "local" signs the local account in and never a directory one`, async () => {
          const testAuth = await compatibleAuthWithDirectory(originalClientDirectory({ loginOrder }));
          await createTestUser(testAuth.auth, "dana", ["admin"]);
          await withServer(start, testAuth.auth, async (client) => {
            const directory = { directory: true };
            const admin = await client.login(alice.uid, alice.password, directory);
            if (!isSession(admin)) throw new Error(`directory login: ${JSON.stringify(admin)}`);
            expect(admin).toMatchObject({ username: alice.uid, role: "admin" });
            expect((await client.me(admin.accessToken)).data).toMatchObject({ username: alice.uid, role: "admin" });
            const refreshed = await client.refresh(admin.refreshToken);
            if (!isSession(refreshed)) throw new Error(`refresh: ${JSON.stringify(refreshed)}`);
            expect(refreshed.role, "groups re-read at refresh").toBe("admin");
            expect(await client.logout(refreshed.refreshToken)).toBe(0);
            expect(await client.refresh(refreshed.refreshToken), "after logout").toEqual({ code: 40101 });

            expect(await client.login(johnSmith.uid, johnSmith.password, directory)).toMatchObject({ role: "engineer" });
            expect(await client.login(alice.uid, "not alice's password", directory)).toEqual({ code: 40100 });
            expect(await client.login(bob.uid, bob.password, directory), "in no mapped group, without a fallback role").toEqual({
              code: 40300,
            });
            expect(await client.login("dana", testPassword, directory), "a local account is not the directory's").toEqual({
              code: 40100,
            });

            expect(await client.login("dana", testPassword), '"local": the local account').toMatchObject({
              username: "dana",
              role: "admin",
            });
            expect(await client.login(alice.uid, alice.password), '"local": a directory account is not a local one').toEqual({
              code: 40100,
            });
          });
        });
      }
    });
  }
});

describeOpenApiDrift({
  exercises: [
    "login",
    "verifyTotp",
    "useRecoveryCode",
    "refresh",
    "logout",
    "getPublicUser",
    "beginTotpSetup",
    "enableTotp",
    "changePasswordAlias",
    "passkeyConfig",
    "webauthnBegin",
    "webauthnFinish",
    "oauthProviders",
    "oauthAuthorize",
    "oauthCallback",
  ],
});
