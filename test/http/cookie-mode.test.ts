// Cookie mode over HTTP on every adapter (CK-1 … CK-6): a browser client that asks for it with
// `X-Portcullis-Token-Delivery: cookie` gets its refresh token in an HttpOnly cookie, never in a
// body; refresh and logout read the cookie only from a page of the server's own origin; a client
// that sends its refresh token in the body is served exactly as before.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type TestAuth,
  createTestUser,
  createTotpUser,
  generousThrottle,
  makeTestAuth,
  nextTotpCode,
  testPassword,
} from "../fixtures/auth.js";
import { type CallResult, post } from "./client.js";
import { expectEnvelope } from "./contract-suite.js";
import { describeOpenApiDrift } from "./openapi-drift.js";
import { type RunningServer, adapters } from "./servers.js";

const base = "/api/v1/auth";
const cookieMode = { "x-portcullis-token-delivery": "cookie" };
const sameOrigin = { "sec-fetch-site": "same-origin" };
const tls = {
  key: readFileSync(new URL("../fixtures/tls/key.pem", import.meta.url), "utf8"),
  cert: readFileSync(new URL("../fixtures/tls/cert.pem", import.meta.url), "utf8"),
};

/** The refresh cookie an answer sets: its whole `Set-Cookie` value and the token in it. */
function refreshCookieOf(result: CallResult, name: string): { header: string; token: string } | undefined {
  const header = result.headers.getSetCookie().find((value) => value.startsWith(`${name}=`));
  return header === undefined ? undefined : { header, token: header.slice(name.length + 1, header.indexOf(";")) };
}

describe.each(adapters)("cookie mode on %s", (_name, start) => {
  let testAuth: TestAuth;
  let plain: RunningServer;
  let secure: RunningServer;
  const cookieName = "portcullis_refresh";
  const hostCookieName = "__Host-portcullis_refresh";

  beforeAll(async () => {
    testAuth = makeTestAuth({ throttle: generousThrottle });
    plain = await start(testAuth.auth);
    secure = await start(testAuth.auth, { tls });
  });
  afterAll(async () => {
    await Promise.all([plain?.close(), secure?.close()]);
  });

  /** Signs `username` in, in cookie mode, over `server`: the refresh cookie's token. */
  async function signInWithCookie(username: string, server = plain, name = cookieName): Promise<string> {
    await createTestUser(testAuth.auth, username);
    const result = await post(server, `${base}/login`, { username, password: testPassword }, { headers: cookieMode });
    expectEnvelope(result, 0);
    const cookie = refreshCookieOf(result, name);
    if (cookie === undefined) throw new Error("no refresh cookie was set");
    return cookie.token;
  }

  /** A refresh that presents `token` in the cookie, with `headers`. */
  const refreshWithCookie = (token: string, headers: Record<string, string> = sameOrigin, server = plain, name = cookieName) =>
    post(server, `${base}/refresh`, {}, { headers: { ...cookieMode, ...headers, cookie: `${name}=${token}` } });

  it("CK-1: a sign-in in cookie mode sets the refresh token as portcullis_refresh, HttpOnly, SameSite=Strict, on the auth routes, for its lifetime; the body has no refreshToken", async () => {
    await createTestUser(testAuth.auth, "ck1-plain");
    const result = await post(plain, `${base}/login`, { username: "ck1-plain", password: testPassword }, { headers: cookieMode });
    expectEnvelope(result, 0);
    expect(result.body.data).not.toHaveProperty("refreshToken");
    expect(typeof result.body.data.accessToken).toBe("string");
    const cookie = refreshCookieOf(result, cookieName);
    expect(cookie?.token).toMatch(/^[A-Za-z0-9_-]{22}\.0\.[A-Za-z0-9_-]{43}$/);
    expect(cookie?.header).toBe(
      `${cookieName}=${cookie?.token}; Path=/api/v1/auth; HttpOnly; SameSite=Strict; Max-Age=${testAuth.auth.config.ttl.refreshIdle}`,
    );
    expect(result.text).not.toContain(cookie?.token);
  });

  it("CK-1: over TLS the cookie is __Host-portcullis_refresh on / with Secure", async () => {
    await createTestUser(testAuth.auth, "ck1-tls");
    const result = await post(secure, `${base}/login`, { username: "ck1-tls", password: testPassword }, { headers: cookieMode });
    expectEnvelope(result, 0);
    expect(result.body.data).not.toHaveProperty("refreshToken");
    const cookie = refreshCookieOf(result, hostCookieName);
    expect(cookie?.header).toBe(
      `${hostCookieName}=${cookie?.token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${testAuth.auth.config.ttl.refreshIdle}; Secure`,
    );
    expect(refreshCookieOf(result, cookieName)).toBeUndefined();
  });

  it("CK-1: the second-factor step and a re-authentication answer in the cookie too", async () => {
    const tina = await createTotpUser(testAuth.auth, "ck1-totp");
    const first = await post(
      plain,
      `${base}/login`,
      { username: tina.username, password: testPassword },
      { headers: cookieMode },
    );
    expectEnvelope(first, 40102);
    expect(refreshCookieOf(first, cookieName)).toBeUndefined();
    const code = await nextTotpCode(testAuth, tina.secret);
    const verified = await post(
      plain,
      `${base}/2fa/verify`,
      { tempToken: first.body.data.tempToken, code },
      { headers: cookieMode },
    );
    expectEnvelope(verified, 0);
    expect(verified.body.data).not.toHaveProperty("refreshToken");
    const signedIn = refreshCookieOf(verified, cookieName);
    expect(signedIn).toBeDefined();
    const again = await post(
      plain,
      `${base}/reauthenticate`,
      { password: testPassword, totpCode: await nextTotpCode(testAuth, tina.secret) },
      { token: verified.body.data.accessToken, headers: cookieMode },
    );
    expectEnvelope(again, 0);
    expect(again.body.data).not.toHaveProperty("refreshToken");
    const replaced = refreshCookieOf(again, cookieName);
    expect(replaced?.token).toMatch(/^[A-Za-z0-9_-]{22}\.[0-9]+\.[A-Za-z0-9_-]{43}$/);
    expect(replaced?.token).not.toBe(signedIn?.token);
    expectEnvelope(await refreshWithCookie(replaced?.token as string), 0);
  });

  it("CK-2: refresh reads the cookie and answers a new one, the body without the token; the spent cookie again revokes the session (RT-2); no event carries a token", async () => {
    const events: unknown[] = [];
    const unsubscribe = testAuth.auth.events.on("*", (event) => {
      events.push(event);
    });
    const first = await signInWithCookie("ck2");
    const renewed = await refreshWithCookie(first);
    expectEnvelope(renewed, 0);
    expect(renewed.body.data).not.toHaveProperty("refreshToken");
    const second = refreshCookieOf(renewed, cookieName);
    expect(second?.header).toMatch(/; Path=\/api\/v1\/auth; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(second?.token).not.toBe(first);
    expectEnvelope(await refreshWithCookie(first), 40101);
    expectEnvelope(await refreshWithCookie(second?.token as string), 40101);
    unsubscribe();
    const seen = JSON.stringify(events);
    expect(seen).toContain("refresh_token.reused");
    expect(seen).not.toContain(first);
    expect(seen).not.toContain(second?.token);
  });

  it("CK-2: over TLS only __Host-portcullis_refresh is read", async () => {
    const token = await signInWithCookie("ck2-tls", secure, hostCookieName);
    expectEnvelope(await refreshWithCookie(token, sameOrigin, secure, cookieName), 40101);
    const renewed = await refreshWithCookie(token, sameOrigin, secure, hostCookieName);
    expectEnvelope(renewed, 0);
    expect(refreshCookieOf(renewed, hostCookieName)?.header).toMatch(
      /; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/,
    );
  });

  it("CK-3: a refresh or logout by cookie from another origin is 40300 and spends nothing; Sec-Fetch-Site same-origin, or else the request's own Origin, passes", async () => {
    const token = await signInWithCookie("ck3");
    const own = plain.baseUrl;
    const refused: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "none" },
      { "sec-fetch-site": "cross-site", origin: own },
      { origin: "http://evil.example" },
      { origin: "null" },
      { origin: own.replace("127.0.0.1", "localhost") },
      {},
    ];
    for (const headers of refused) {
      const result = await refreshWithCookie(token, headers);
      expectEnvelope(result, 40300);
      expect(result.body.message).toMatch(/own origin/);
      expect(result.headers.getSetCookie()).toEqual([]);
      const logout = await post(
        plain,
        `${base}/logout`,
        {},
        { headers: { ...cookieMode, ...headers, cookie: `${cookieName}=${token}` } },
      );
      expectEnvelope(logout, 40300);
    }
    const byOrigin = await refreshWithCookie(token, { origin: own });
    expectEnvelope(byOrigin, 0);
    expectEnvelope(await refreshWithCookie(refreshCookieOf(byOrigin, cookieName)?.token as string), 0);
  });

  it("CK-4: the cookie sent twice is 40101 and spends nothing", async () => {
    const token = await signInWithCookie("ck4");
    const twice = await post(
      plain,
      `${base}/refresh`,
      {},
      { headers: { ...cookieMode, ...sameOrigin, cookie: `${cookieName}=planted; ${cookieName}=${token}` } },
    );
    expectEnvelope(twice, 40101);
    expect(twice.body.message).toMatch(/more than once/);
    const logout = await post(
      plain,
      `${base}/logout`,
      {},
      { headers: { ...cookieMode, ...sameOrigin, cookie: `${cookieName}=${token}; ${cookieName}=${token}` } },
    );
    expectEnvelope(logout, 40101);
    expectEnvelope(await refreshWithCookie(token), 0);
  });

  it("CK-5: logout by cookie revokes the session and deletes the cookie", async () => {
    const token = await signInWithCookie("ck5");
    const result = await post(
      plain,
      `${base}/logout`,
      {},
      { headers: { ...cookieMode, ...sameOrigin, cookie: `${cookieName}=${token}` } },
    );
    expectEnvelope(result, 0);
    expect(result.headers.getSetCookie()).toEqual([`${cookieName}=; Path=/api/v1/auth; HttpOnly; SameSite=Strict; Max-Age=0`]);
    expectEnvelope(await refreshWithCookie(token), 40101);
  });

  it("CK-5: in cookie mode, refresh or logout without the cookie is 40101", async () => {
    const refresh = await post(plain, `${base}/refresh`, {}, { headers: { ...cookieMode, ...sameOrigin } });
    expectEnvelope(refresh, 40101);
    expect(refresh.body.message).toMatch(/No session cookie/);
    expectEnvelope(await post(plain, `${base}/logout`, {}, { headers: cookieMode }), 40101);
  });

  it("CK-6: a client that sends no X-Portcullis-Token-Delivery is served as before: the refresh token in the body, no refresh cookie, no origin check", async () => {
    await createTestUser(testAuth.auth, "ck6");
    const signedIn = await post(plain, `${base}/login`, { username: "ck6", password: testPassword });
    expectEnvelope(signedIn, 0);
    expect(typeof signedIn.body.data.refreshToken).toBe("string");
    expect(refreshCookieOf(signedIn, cookieName)).toBeUndefined();
    const crossSite = { "sec-fetch-site": "cross-site", origin: "http://evil.example" };
    const renewed = await post(
      plain,
      `${base}/refresh`,
      { refreshToken: signedIn.body.data.refreshToken },
      { headers: crossSite },
    );
    expectEnvelope(renewed, 0);
    expect(typeof renewed.body.data.refreshToken).toBe("string");
    expect(renewed.headers.getSetCookie()).toEqual([]);
    expectEnvelope(await post(plain, `${base}/refresh`, {}), 40001);
    const logout = await post(plain, `${base}/logout`, { refreshToken: renewed.body.data.refreshToken }, { headers: crossSite });
    expectEnvelope(logout, 0);
    expect(logout.headers.getSetCookie()).toEqual([]);
  });
});

describeOpenApiDrift({ exercises: ["login", "verifyTotp", "reauthenticate", "refresh", "logout"] });
