import { readFileSync } from "node:fs";
import type { OAuthProviderConfig } from "@portcullis/core";
import { type LocalProviderAuthentication, driveAuthorization } from "@portcullis/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, makeTestAuth, totpCodeAt } from "../fixtures/auth.js";
import { type OidcTestProvider, corpOAuthConfig, startOidcProvider } from "../fixtures/oidc-provider.js";
import { call } from "./client.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const redirectUri = "https://app.example.com/auth/callback";
let provider: OidcTestProvider;
/** A provider whose ID tokens state `auth_time`, and the `amr`, `acr` and `auth_time` of {@link recorded} (STUP-5). */
let stating: OidcTestProvider;
/** How the stating provider records its next sign-ins: each test sets it before the sign-in it is about. */
let recorded: LocalProviderAuthentication = {};

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [redirectUri] });
  stating = await startOidcProvider({ redirectUris: [redirectUri], requireAuthTime: true, authentication: () => recorded });
});

afterAll(async () => {
  await provider.close();
  await stating.close();
});

/**
 * An auth whose `corp` is the stating provider, with these changes to its configuration, its clock
 * at the real time: the provider's `auth_time` is read against it.
 */
function authWithStatingProvider(changes: Partial<OAuthProviderConfig> = {}) {
  const config = corpOAuthConfig(stating, redirectUri);
  const corp = { ...(config.providers.corp as OAuthProviderConfig), ...changes };
  const testAuth = makeTestAuth({ oauth: { ...config, providers: { corp } } });
  testAuth.clock.now = Date.now();
  return testAuth;
}

/** Finishes a flow begun on `server` (its authorize answer) by signing in at the provider as `username`: the callback's answer. */
async function finishAt(
  server: RunningServer,
  begun: { body: { data: { authUrl: string } }; headers: Headers },
  username = "alice",
) {
  const callback = await driveAuthorization(begun.body.data.authUrl, { username });
  return call(server, "GET", `/api/v1/auth/oauth/corp/callback${callback.search}`, {
    headers: { cookie: cookieOf(begun.headers.get("set-cookie")) },
  });
}

/** Signs in through the stating provider, which records the sign-in as `how`: the callback's answer. */
async function signInStating(server: RunningServer, how: LocalProviderAuthentication) {
  recorded = how;
  return finishAt(server, await call(server, "GET", "/api/v1/auth/oauth/corp/authorize"));
}

function authWithProvider() {
  return makeTestAuth({ oauth: corpOAuthConfig(provider, redirectUri) }).auth;
}

/** The name=value part of a Set-Cookie header. */
const cookieOf = (setCookie: string | null) => (setCookie ?? "").split(";", 1)[0] as string;

/** The test certificate (`test/fixtures/tls`), for the adapters' servers over TLS. */
const tls = {
  key: readFileSync(new URL("../fixtures/tls/key.pem", import.meta.url), "utf8"),
  cert: readFileSync(new URL("../fixtures/tls/cert.pem", import.meta.url), "utf8"),
};

/** Begins a sign-in on `server` and signs in at the provider as `username`: the binding cookie's value and the callback's path. */
async function flowOf(server: RunningServer, username: string): Promise<{ binding: string; callbackPath: string }> {
  const begun = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize");
  const binding = cookieOf(begun.headers.get("set-cookie")).split("=")[1] as string;
  const callback = await driveAuthorization(begun.body.data.authUrl, { username });
  return { binding, callbackPath: `/api/v1/auth/oauth/corp/callback${callback.search}` };
}

describe("OAuth routes against a real OpenID provider", () => {
  for (const [name, start] of adapters) {
    describe(name, () => {
      it("OA-1: providers, authorize with its HttpOnly SameSite=Lax cookie, the provider's login, and the callback relayed with the cookie: tokens once", async () => {
        const server = await start(authWithProvider());
        try {
          const listed = await call(server, "GET", "/api/v1/auth/oauth/providers");
          expect(listed.body).toMatchObject({ code: 0, data: [{ name: "corp", displayName: "Corp ID" }] });

          const begun = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?redirect=%2Faccount");
          expect(begun.body.code).toBe(0);
          const setCookie = begun.headers.get("set-cookie");
          expect(setCookie).toMatch(
            /^portcullis_oauth=[A-Za-z0-9_-]{43}; Path=\/api\/v1\/auth\/oauth; HttpOnly; SameSite=Lax; Max-Age=600$/,
          );
          const callback = await driveAuthorization(begun.body.data.authUrl, { username: "alice" });
          const path = `/api/v1/auth/oauth/corp/callback${callback.search}`;

          const elsewhere = await call(server, "GET", path);
          expect(elsewhere.body.code).toBe(40100);

          const fresh = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?redirect=%2Faccount%3Ftab%3Dkeys");
          const cookie = cookieOf(fresh.headers.get("set-cookie"));
          const relayed = await driveAuthorization(fresh.body.data.authUrl, { username: "alice" });
          const signedIn = await call(server, "GET", `/api/v1/auth/oauth/corp/callback${relayed.search}`, {
            headers: { cookie },
          });
          expect(signedIn.body.code).toBe(0);
          expect(signedIn.body.data.user).toMatchObject({ username: "alice", totpEnabled: false });
          expect(signedIn.body.data.returnPath).toBe("/account?tab=keys");
          expect(signedIn.headers.get("set-cookie")).toMatch(/^portcullis_oauth=; .*Max-Age=0/);
          const me = await call(server, "GET", "/api/v1/auth/me", { token: signedIn.body.data.accessToken });
          expect(me.body.data.username).toBe("alice");

          const replayed = await call(server, "GET", `/api/v1/auth/oauth/corp/callback${relayed.search}`, {
            headers: { cookie },
          });
          expect(replayed.body.code).toBe(40100);
        } finally {
          await server.close();
        }
      });

      it("SE-1: the session a provider sign-in starts is listed with the User-Agent of the callback's request", async () => {
        const server = await start(authWithProvider());
        try {
          const flow = await flowOf(server, "alice");
          const signedIn = await call(server, "GET", flow.callbackPath, {
            headers: { cookie: `portcullis_oauth=${flow.binding}`, "user-agent": "Provider browser" },
          });
          expect(signedIn.body.code).toBe(0);
          const sessions = await call(server, "GET", "/api/v1/auth/sessions", { token: signedIn.body.data.accessToken });
          expect(sessions.body.data).toMatchObject([{ current: true, userAgent: "Provider browser" }]);
        } finally {
          await server.close();
        }
      });

      it("OA-10: over TLS the binding is __Host-portcullis_oauth on /, Secure; a plain portcullis_oauth that a sibling subdomain tossed is ignored", async () => {
        const server = await start(authWithProvider(), { tls });
        try {
          const begun = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize");
          expect(begun.headers.get("set-cookie")).toMatch(
            /^__Host-portcullis_oauth=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/,
          );
          // The attacker begins a flow of their own as bob, and tosses its cookie onto the victim
          // under the plain name, which a sibling subdomain can set for the parent domain.
          const attacker = await flowOf(server, "bob");
          const tossed = await call(server, "GET", attacker.callbackPath, {
            headers: { cookie: `portcullis_oauth=${attacker.binding}` },
          });
          expect(tossed.body).toMatchObject({ code: 40100 });
          const own = await call(server, "GET", attacker.callbackPath, {
            headers: { cookie: `portcullis_oauth=${attacker.binding}; __Host-portcullis_oauth=${attacker.binding}` },
          });
          expect(own.body).toMatchObject({ code: 0, data: { user: { username: "bob" } } });
          expect(own.headers.getSetCookie()).toContain(
            "__Host-portcullis_oauth=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
          );
        } finally {
          await server.close();
        }
      });

      it("OA-10: the binding cookie sent twice is 40100, whichever comes first, and spends nothing: the browser that began the flow still finishes", async () => {
        const server = await start(authWithProvider());
        try {
          const victim = await flowOf(server, "alice");
          const attacker = await flowOf(server, "bob");
          for (const cookie of [
            `portcullis_oauth=${attacker.binding}; portcullis_oauth=${victim.binding}`,
            `portcullis_oauth=${victim.binding}; portcullis_oauth=${attacker.binding}`,
          ]) {
            const twice = await call(server, "GET", attacker.callbackPath, { headers: { cookie } });
            expect(twice.body, cookie).toEqual({
              code: 40100,
              message: "The sign-in cookie was sent more than once; start the sign-in again",
            });
          }
          const finished = await call(server, "GET", victim.callbackPath, {
            headers: { cookie: `portcullis_oauth=${victim.binding}` },
          });
          expect(finished.body).toMatchObject({ code: 0, data: { user: { username: "alice" } } });
          const spoiled = await call(server, "GET", attacker.callbackPath, {
            headers: { cookie: `portcullis_oauth=${victim.binding}` },
          });
          expect(spoiled.body.code, "another browser's cookie").toBe(40100);
          const attackerOwn = await call(server, "GET", attacker.callbackPath, {
            headers: { cookie: `portcullis_oauth=${attacker.binding}` },
          });
          expect(attackerOwn.body.code, "a wrong binding spends no state").toBe(0);
        } finally {
          await server.close();
        }
      });

      it("OA-11: a provider whose token answer is 64 MiB: the callback answers 50300 after reading about the 1 MiB cap, and signs no one in", async () => {
        const flooding = await startOidcProvider({
          redirectUris: [redirectUri],
          floodAnswer: { route: "token", bytes: 64 * 1024 * 1024 },
        });
        const reported: unknown[] = [];
        const server = await start(
          makeTestAuth({ oauth: corpOAuthConfig(flooding, redirectUri), onInternalError: (error) => reported.push(error) }).auth,
        );
        try {
          const begun = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize");
          const callback = await driveAuthorization(begun.body.data.authUrl, { username: "alice" });
          const answer = await call(server, "GET", `/api/v1/auth/oauth/corp/callback${callback.search}`, {
            headers: { cookie: cookieOf(begun.headers.get("set-cookie")) },
          });
          expect(answer.status).toBe(503);
          expect(answer.body).toMatchObject({ code: 50300, message: "The sign-in provider could not be reached" });
          expect(answer.headers.get("set-cookie")).toBeNull();
          expect(flooding.floodSent()).toBeLessThan(16 * 1024 * 1024);
          expect(reported.map((error) => String(error))).toEqual(["AuthError: The sign-in provider could not be reached"]);
        } finally {
          await server.close();
          await flooding.close();
        }
      });

      it("RL-7: authorize stores a state for a caller who is not signed in, so one address may begin 30 a minute: the 31st is 42900 with Retry-After and no cookie", async () => {
        const server = await start(authWithProvider());
        try {
          for (let index = 0; index < 30; index += 1) {
            expect((await call(server, "GET", "/api/v1/auth/oauth/corp/authorize")).body.code, String(index)).toBe(0);
          }
          const refused = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?mode=redirect");
          expect(refused.status).toBe(429);
          expect(refused.body).toMatchObject({ code: 42900 });
          expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
          expect(refused.headers.get("set-cookie")).toBeNull();
        } finally {
          await server.close();
        }
      });

      it("OA-8: mode=redirect answers 302 to the provider; a hostile return path is 40002; an unknown provider 40400", async () => {
        const server = await start(authWithProvider());
        try {
          const response = await call(server, "GET", "/api/v1/auth/oauth/corp/authorize?mode=redirect");
          expect(response.status).toBe(302);
          expect(response.headers.get("location")).toMatch(new RegExp(`^${provider.issuer}/`));
          expect(response.headers.get("set-cookie")).toMatch(/^portcullis_oauth=/);
          for (const redirect of ["//evil.example", "/%5Cevil.example", "https:evil.example", "/.//evil.example"]) {
            const hostile = await call(
              server,
              "GET",
              `/api/v1/auth/oauth/corp/authorize?redirect=${encodeURIComponent(redirect)}`,
            );
            expect(hostile.body.code, redirect).toBe(40002);
          }
          expect((await call(server, "GET", "/api/v1/auth/oauth/other/authorize")).body.code).toBe(40400);
        } finally {
          await server.close();
        }
      });

      it("STUP-4, ASVS 6.3.3: a provider's user who must have a second factor gets 40105 at the callback, enrols TOTP with its token, and the next provider sign-in asks for the code", async () => {
        const testAuth = makeTestAuth({ oauth: corpOAuthConfig(provider, redirectUri), secondFactor: { required: "always" } });
        const server = await start(testAuth.auth);
        try {
          const first = await flowOf(server, "alice");
          const enrol = await call(server, "GET", first.callbackPath, {
            headers: { cookie: `portcullis_oauth=${first.binding}` },
          });
          expect(enrol.status).toBe(200);
          expect(enrol.body).toMatchObject({ code: 40105, data: { tempToken: expect.any(String), returnPath: "/" } });
          expect(Object.keys(enrol.body.data).sort()).toEqual(["returnPath", "tempToken"]);
          expect(enrol.headers.getSetCookie(), "the binding cookie cleared, and no other").toEqual([
            expect.stringMatching(/^portcullis_oauth=; .*Max-Age=0$/),
          ]);
          const { tempToken } = enrol.body.data;
          expect((await call(server, "GET", "/api/v1/auth/me", { token: tempToken })).body.code).toBe(40101);
          const setup = await call(server, "POST", "/api/v1/auth/2fa/enrolment/setup", { json: { tempToken } });
          const secret = base32Decode(setup.body.data.secret);
          const enabled = await call(server, "POST", "/api/v1/auth/2fa/enrolment/enable", {
            json: { tempToken, code: await totpCodeAt(testAuth.auth, secret) },
          });
          expect(enabled.body).toMatchObject({ code: 0, data: { user: { username: "alice", totpEnabled: true } } });
          const next = await flowOf(server, "alice");
          const asked = await call(server, "GET", next.callbackPath, { headers: { cookie: `portcullis_oauth=${next.binding}` } });
          expect(asked.body).toMatchObject({ code: 40102, data: { tempToken: expect.any(String) } });
        } finally {
          await server.close();
        }
      });

      it("STUP-5, ASVS 6.8.4, 7.6.1, 7.2.4: a provider's hour-old auth_time answers 40104 on a maxAge route; re-authenticating through the provider asks max_age=0 and prompt=login, refuses a stale auth_time, and then answers the tokens of a new session that lets the route through, the old tokens refused", async () => {
        const testAuth = authWithStatingProvider();
        const server = await start(testAuth.auth);
        try {
          const hourAgo = Math.floor(testAuth.clock.now / 1000) - 3600;
          const signedIn = await signInStating(server, { authTime: hourAgo });
          expect(signedIn.body.code).toBe(0);
          const token = signedIn.body.data.accessToken;
          const old = await call(server, "GET", "/api/v1/things/recent", { token });
          expect(old.status).toBe(401);
          expect(old.body).toMatchObject({ code: 40104, data: { required: { maxAge: 300 } } });

          const begin = () =>
            call(server, "POST", "/api/v1/auth/oauth/corp/reauthenticate", { token, json: { redirect: "/vault" } });
          const begun = await begin();
          expect(begun.body.code).toBe(0);
          const asked = new URL(begun.body.data.authUrl);
          expect([asked.searchParams.get("max_age"), asked.searchParams.get("prompt")]).toEqual(["0", "login"]);
          expect(begun.headers.get("set-cookie")).toMatch(/^portcullis_oauth=[A-Za-z0-9_-]{43}; /);
          recorded = { authTime: hourAgo };
          const stale = await finishAt(server, begun);
          expect(stale.status).toBe(401);
          expect(stale.body).toMatchObject({
            code: 40100,
            message: "The provider did not sign you in again: it answered with an earlier sign-in",
          });
          expect((await call(server, "GET", "/api/v1/things/recent", { token })).body.code).toBe(40104);

          recorded = {};
          const raised = await finishAt(server, await begin());
          expect(raised.body).toMatchObject({
            code: 0,
            data: { reauthenticated: true, returnPath: "/vault", user: { username: "alice" } },
          });
          expect(raised.headers.getSetCookie(), "the binding cookie cleared, and no device cookie").toEqual([
            expect.stringMatching(/^portcullis_oauth=; .*Max-Age=0$/),
          ]);
          expect(Object.keys(raised.body.data).sort()).toEqual([
            "accessToken",
            "expiresIn",
            "reauthenticated",
            "refreshToken",
            "returnPath",
            "tokenType",
            "user",
          ]);
          const recent = await call(server, "GET", "/api/v1/things/recent", { token: raised.body.data.accessToken });
          expect(recent.body).toMatchObject({ code: 0, data: { amr: ["fed"] } });
          expect(recent.body.data.authTime).toBeGreaterThanOrEqual(Math.floor(testAuth.clock.now / 1000) - 30);
          expect((await call(server, "GET", "/api/v1/things/recent", { token })).body.code, "the ended session's").toBe(40101);
          const stolen = await call(server, "POST", "/api/v1/auth/refresh", {
            json: { refreshToken: signedIn.body.data.refreshToken },
          });
          expect(stolen.body.code, "the ended session's refresh token").toBe(40101);
          const refreshed = await call(server, "POST", "/api/v1/auth/refresh", {
            json: { refreshToken: raised.body.data.refreshToken },
          });
          const afterRefresh = await call(server, "GET", "/api/v1/things/recent", { token: refreshed.body.data.accessToken });
          expect(afterRefresh.body.code, "the new session's refreshes carry it").toBe(0);
        } finally {
          await server.close();
        }
      });

      it("STUP-5, ASVS 6.8.4: trustedForSecondFactor without an asserted second factor asks a TOTP user for the code (40102); with amr pwd and otp, or a listed acr, it does not, and a secondFactor route lets it through", async () => {
        const testAuth = authWithStatingProvider({ trustedForSecondFactor: true, secondFactorAcrValues: ["urn:example:mfa"] });
        const server = await start(testAuth.auth);
        try {
          const first = await signInStating(server, {});
          const token = first.body.data.accessToken;
          const setup = await call(server, "POST", "/api/v1/auth/2fa/setup", { token, json: {} });
          const secret = base32Decode(setup.body.data.secret);
          const enabled = await call(server, "POST", "/api/v1/auth/2fa/enable", {
            token,
            json: { code: await totpCodeAt(testAuth.auth, secret) },
          });
          expect(enabled.body).toMatchObject({ code: 0, data: { enabled: true } });

          for (const how of [{}, { amr: ["pwd"] }, { amr: ["otp"] }, { acr: "urn:example:pwd", amr: ["pwd"] }]) {
            const asked = await signInStating(server, how);
            expect(asked.body, JSON.stringify(how)).toMatchObject({ code: 40102, data: { tempToken: expect.any(String) } });
          }
          const cases: [LocalProviderAuthentication, string[]][] = [
            [{ amr: ["pwd", "otp"] }, ["fed", "pwd", "otp", "mfa"]],
            [{ acr: "urn:example:mfa" }, ["fed", "mfa"]],
          ];
          for (const [how, amr] of cases) {
            const signedIn = await signInStating(server, how);
            expect(signedIn.body, JSON.stringify(how)).toMatchObject({ code: 0, data: { user: { totpEnabled: true } } });
            const strong = await call(server, "GET", "/api/v1/things/strong", { token: signedIn.body.data.accessToken });
            expect(strong.body, JSON.stringify(how)).toMatchObject({ code: 0, data: { amr } });
          }
        } finally {
          await server.close();
        }
      });
    });
  }
});

describeOpenApiDrift({
  exercises: ["oauthProviders", "oauthAuthorize", "oauthCallback", "oauthReauthenticate", "getPublicUser"],
});
