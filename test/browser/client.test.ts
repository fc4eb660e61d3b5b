// @portcullis/client end to end in a real browser: Debian's Chromium, driven by playwright-core,
// on the demo page, whose script is written on the client and exposes it as `window.portcullis`.
// One page signs in with a password and a TOTP code, sends 20 requests at once across an
// access-token expiry (the server's clock moves past it while they are under way), signs in with
// a passkey of the CDP virtual authenticator, and signs out; the server then refuses the session.
import type { AuthClient } from "@portcullis/client";
import type { Request } from "playwright-core";
import { expect, it } from "vitest";
import { createTotpUser, totpCodeAt } from "../fixtures/auth.js";
import { type PageApp, startExpressDemo, startFastifyDemo, startHonoPageApp } from "./apps.js";
import {
  type Envelope,
  describeInBrowser,
  expectStatus,
  openPage,
  registerPasskey,
  shownSection,
  signInWithPasskey,
  signInWithPassword,
  useChromium,
  usePageApp,
} from "./page.js";

const newContext = useChromium();

/** What the page holds for the test: the demo page's client, and a function that moves the server's clock. */
interface PageGlobals {
  portcullis: AuthClient;
  expireAccessToken(): Promise<void>;
}

const isRefresh = (request: Request) => request.method() === "POST" && request.url().endsWith("/api/v1/auth/refresh");
const isThings = (request: Request) => request.url().endsWith("/api/v1/things");

/** Calls the app from the test, outside the page: a POST with `body`, else a GET with `accessToken`. */
async function callApi(
  app: PageApp,
  path: string,
  { body, accessToken }: { body?: unknown; accessToken?: string },
): Promise<Envelope> {
  const response = await fetch(`${app.apiBase}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Envelope;
}

async function clientLifeCycle(app: PageApp, username: string): Promise<void> {
  // An account with TOTP on and the tests' password, so that a sign-in takes both factors.
  const user = await createTotpUser(app.auth, username);
  const { context, page, authenticator, errors } = await openPage(newContext, app);
  const requests: Request[] = [];
  page.on("request", (request) => requests.push(request));
  try {
    // 1. Password, then the TOTP code, through the page's client.
    await signInWithPassword(page, user.username, user.password);
    await expectStatus(page, /^Password accepted; a second factor is required\.$/, "info");
    await page.fill('#second-factor-form input[name="code"]', await totpCodeAt(app.auth, user.secret));
    await page.click('#second-factor-form button[type="submit"]');
    await expectStatus(page, /^Signed in with two factors\.$/);
    expect(requests.filter(isRefresh)).toHaveLength(0);

    // 2. Twenty requests at once through client.fetch: ten, then the server's clock moves past the
    // access token's expiry (and the clock tolerance), then ten more. Every one that meets the
    // expired token waits for the one refresh, and is sent once more with the new token.
    const { ttl, clockToleranceSeconds } = app.auth.config;
    await page.exposeFunction("expireAccessToken", () => app.advanceClock((ttl.access + clockToleranceSeconds + 1) * 1000));
    const statuses = await page.evaluate(async () => {
      const { portcullis, expireAccessToken } = globalThis as unknown as PageGlobals;
      const things = async () => (await portcullis.fetch("/api/v1/things")).status;
      const before = Array.from({ length: 10 }, things);
      await expireAccessToken();
      return Promise.all([...before, ...Array.from({ length: 10 }, things)]);
    });
    expect(statuses).toEqual(Array(20).fill(200));
    expect(requests.filter(isRefresh)).toHaveLength(1);
    const refused = (
      await Promise.all(requests.filter(isThings).map(async (request) => (await request.response())?.status()))
    ).filter((status) => status === 401).length;
    // The ten sent after the move carry the expired token; the first ten, as the server received them.
    expect(refused).toBeGreaterThanOrEqual(10);
    expect(requests.filter(isThings)).toHaveLength(20 + refused);

    // 3. A passkey: registered through the page (the sign-in is no longer recent on the server's
    // clock, so the server asks for every factor of the account, and the dialog sends them, the
    // password and a TOTP code: STUP-3, WA-6), which keeps the session (SE-2); then a sign-out
    // and a sign-in with it.
    const registerBegin = page.waitForRequest(
      (request) => request.url().endsWith("/api/v1/auth/public-key/register/begin") && Boolean(request.postDataJSON()?.password),
    );
    await registerPasskey(page, "Test laptop", { password: user.password, totpCode: await totpCodeAt(app.auth, user.secret) });
    expect((await registerBegin).postDataJSON()).toEqual({
      label: "Test laptop",
      password: user.password,
      totpCode: expect.stringMatching(/^\d{6}$/),
    });
    await expectStatus(page, /^Passkey "Test laptop" added\./);
    expect(await shownSection(page)).toBe("account");
    expect(await authenticator.credentials()).toHaveLength(1);
    await page.click("#logout");
    await expectStatus(page, /^Signed out\.$/);
    const signedIn = await signInWithPasskey(page);
    await expectStatus(page, /^Signed in with a passkey\.$/);
    expect(signedIn).toMatchObject({ code: 0, data: { user: { id: user.id } } });
    const accessToken: string = signedIn.data.accessToken;
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).portcullis.accessToken())).toBe(accessToken);
    expect((await callApi(app, "/api/v1/auth/me", { accessToken })).data).toMatchObject({ id: user.id, totpEnabled: true });
    expect(requests.filter(isRefresh)).toHaveLength(1);

    // 4. Sign out: the client forgets the tokens and the server revokes the session.
    await page.click("#logout");
    await expectStatus(page, /^Signed out\.$/);
    expect(await shownSection(page)).toBe("sign-in");
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).portcullis.accessToken())).toBeNull();
    const { refreshToken } = signedIn.data;
    expect((await callApi(app, "/api/v1/auth/refresh", { body: { refreshToken } })).code).toBe(40101);
    expect((await callApi(app, "/api/v1/auth/me", { accessToken })).code).toBe(40101);

    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
}

const apps: [string, () => Promise<PageApp>][] = [
  ["the Express demo", startExpressDemo],
  ["a Hono app serving the demo page", () => startHonoPageApp()],
  ["the demo with its API on Fastify", startFastifyDemo],
];

for (const [name, startApp] of apps) {
  describeInBrowser(`@portcullis/client in Chromium, on ${name}`, () => {
    const app = usePageApp(startApp);

    it("signs in with password and TOTP, refreshes once for 20 requests across an expiry, signs in with a passkey, signs out", async () => {
      await clientLifeCycle(app(), "client-user");
    });
  });
}
