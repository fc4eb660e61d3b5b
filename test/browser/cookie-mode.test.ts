// Cookie mode in Chromium on every adapter (issue 38 item 4; CK-1 … CK-5): a page of the API's own
// origin signs in with createAuthClient({ tokens: "cookie" }), is reloaded, and gets its session
// back with exactly one refresh; no script of the page ever sees the refresh token; and pages of
// other origins, one of another site (127.0.0.1) and one of the same site on another port, cannot
// refresh or end the session with a form or a fetch.
//
// The page and the client module are answered by the test (context.route), never by the app; every
// request under /api/v1 reaches the adapter's real server (test/http/servers.ts), which listens on
// 127.0.0.1 and is opened as localhost.
import type { AuthClient } from "@portcullis/client";
import type { BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type TestAuth, createTestUser, generousThrottle, makeTestAuth, testPassword } from "../fixtures/auth.js";
import { type RunningServer, type StartServer, startExpress5, startFastify, startHono } from "../http/servers.js";
import { collectPageErrors } from "./chromium.js";
import { bundledClient } from "./client-bundle.js";
import { describeInBrowser, useChromium } from "./page.js";

const newContext = useChromium();

const pagePath = "/cookie-mode/page.html";
const clientPath = "/cookie-mode/portcullis-client.js";
const attackerPath = "/cookie-mode/attacker.html";
const refreshPath = "/api/v1/auth/refresh";
const logoutPath = "/api/v1/auth/logout";

/** What the page holds for the test. */
interface PageGlobals {
  clientModule: typeof import("@portcullis/client");
  client: AuthClient;
}

const isRefresh = (request: Request) => request.method() === "POST" && new URL(request.url()).pathname === refreshPath;

/** A refresh a page sent: the request and the URL of the page that sent it. */
interface SentRefresh {
  request: Request;
  from: string;
}

/** A fresh context whose page and client module the test answers, and the refreshes its pages send. */
async function cookieContext(): Promise<{ context: BrowserContext; refreshes: SentRefresh[] }> {
  const context = await newContext();
  const client = await bundledClient();
  await context.route(`**${clientPath}`, (route) => route.fulfill({ body: client, contentType: "text/javascript" }));
  await context.route(`**${pagePath}`, (route) =>
    route.fulfill({ body: "<!doctype html><title>cookie mode</title><p>app</p>", contentType: "text/html" }),
  );
  const refreshes: SentRefresh[] = [];
  context.on("request", (request) => {
    if (isRefresh(request)) refreshes.push({ request, from: request.frame().url() });
  });
  return { context, refreshes };
}

/** Loads the client module into the page and makes a cookie-mode client there. */
async function startClient(page: Page): Promise<void> {
  // A string, not a function: vitest would rewrite a function's import() for Node.
  await page.evaluate(`import(${JSON.stringify(clientPath)}).then((module) => { globalThis.clientModule = module; })`);
  await page.evaluate(() => {
    const globals = globalThis as unknown as PageGlobals;
    globals.client = globals.clientModule.createAuthClient({ tokens: "cookie" });
  });
}

/** The refresh cookie in the browser's jar (the test's view, not the page's): its Path is the auth routes'. */
async function refreshCookie(context: BrowserContext, origin: string) {
  return (await context.cookies(`${origin}/api/v1/auth/refresh`)).find((cookie) => cookie.name === "portcullis_refresh");
}

/** What the page's scripts can see: `document.cookie` and every Web Storage value (a string: the tests compile without the DOM's types). */
function scriptVisible(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const stored = (storage) => Object.keys(storage).map((key) => key + "=" + storage.getItem(key));
    return [document.cookie, ...stored(localStorage), ...stored(sessionStorage)].join("\\n");
  })()`);
}

/** The page's call of the protected route, with the client's access token. */
function callThings(page: Page): Promise<number> {
  return page.evaluate(async () => (await (globalThis as unknown as PageGlobals).client.fetch("/api/v1/things")).status);
}

/**
 * From a page of `attackerOrigin`, a form POST to `target` on the app's origin with `enctype`; answers
 * the business code of the answer the browser got (the page navigates to it).
 */
async function formPost(context: BrowserContext, attackerOrigin: string, target: string, enctype: string): Promise<number> {
  const page = await context.newPage();
  try {
    await page.goto(`${attackerOrigin}${attackerPath}`);
    const answered = page.waitForResponse((response) => response.url() === target);
    const post = { target, enctype };
    await page.evaluate(`(() => {
      const { target, enctype } = ${JSON.stringify(post)};
      const form = document.createElement("form");
      form.method = "POST";
      form.action = target;
      form.enctype = enctype;
      const field = document.createElement("input");
      field.name = "refreshToken";
      form.append(field);
      document.body.append(form);
      form.submit();
    })()`);
    const response = await answered;
    return ((await response.json()) as { code: number }).code;
  } finally {
    await page.close();
  }
}

/** From a page of `attackerOrigin`, a credentialed JSON fetch to `target`: its status, or "blocked" when the browser stopped it. */
async function jsonFetch(context: BrowserContext, attackerOrigin: string, target: string): Promise<string> {
  const page = await context.newPage();
  try {
    await page.goto(`${attackerOrigin}${attackerPath}`);
    return await page.evaluate(
      (target) =>
        fetch(target, {
          method: "POST",
          credentials: "include",
          headers: { "content-type": "application/json" },
          body: "{}",
        }).then(
          (response) => String(response.status),
          () => "blocked",
        ),
      target,
    );
  } finally {
    await page.close();
  }
}

const adapters: [string, StartServer][] = [
  ["Express", startExpress5],
  ["Hono", startHono],
  ["Fastify", startFastify],
];

for (const [name, start] of adapters) {
  describeInBrowser(`cookie mode in Chromium on ${name}`, () => {
    let testAuth: TestAuth;
    let server: RunningServer;
    let origin: string;

    beforeAll(async () => {
      testAuth = makeTestAuth({ throttle: generousThrottle });
      server = await start(testAuth.auth);
      origin = `http://localhost:${server.port}`;
    });
    afterAll(async () => {
      await server?.close();
    });

    it("CK-1, CK-2: a reload keeps the session, restored with exactly one refresh; document.cookie and storage never show the refresh token", async () => {
      const user = await createTestUser(testAuth.auth, `reload-${name.toLowerCase()}`);
      const { context, refreshes } = await cookieContext();
      try {
        const page = await context.newPage();
        const errors = collectPageErrors(page);
        await page.goto(`${origin}${pagePath}`);
        await startClient(page);
        const signInAnswer = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/login"));
        await page.evaluate(
          ({ username, password }) => (globalThis as unknown as PageGlobals).client.login({ username, password }),
          { username: user.username, password: testPassword },
        );
        const signedIn = await refreshCookie(context, origin);
        expect(signedIn).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api/v1/auth" });
        expect(signedIn?.value).toMatch(/^[A-Za-z0-9_-]{22}\.0\.[A-Za-z0-9_-]{43}$/);
        expect(await (await signInAnswer).text()).not.toContain(signedIn?.value);
        expect(await scriptVisible(page)).not.toContain(signedIn?.value);
        expect(await callThings(page)).toBe(200);

        await page.reload();
        await startClient(page);
        expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).client.accessToken())).toBeNull();
        const restored = await page.evaluate(async () => {
          const { client } = globalThis as unknown as PageGlobals;
          const users = await Promise.all([client.restore(), client.restore(), client.restore()]);
          return users.map((restoredUser) => restoredUser?.username ?? null);
        });
        expect(restored).toEqual([user.username, user.username, user.username]);
        expect(refreshes).toHaveLength(1);
        expect(await callThings(page)).toBe(200);
        const renewed = await refreshCookie(context, origin);
        expect(renewed?.value).not.toBe(signedIn?.value);
        expect(await scriptVisible(page)).not.toContain(renewed?.value);
        expect(await refreshes[0]?.request.response().then((response) => response?.text())).not.toContain(renewed?.value);

        await page.evaluate(() => (globalThis as unknown as PageGlobals).client.logout());
        expect(await refreshCookie(context, origin)).toBeUndefined();
        await page.reload();
        await startClient(page);
        expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).client.restore())).toBeNull();
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    });

    it("RT-2: two tabs sharing the cookie, both meeting an expired access token at once, refresh one after the other under the Web Lock, and neither is signed out", async () => {
      const user = await createTestUser(testAuth.auth, `two-tabs-${name.toLowerCase()}`);
      const { context, refreshes } = await cookieContext();
      const reused: unknown[] = [];
      const unsubscribe = testAuth.auth.events.on("refresh_token.reused", (event) => {
        reused.push(event);
      });
      try {
        const tabs = [await context.newPage(), await context.newPage()];
        for (const tab of tabs) {
          await tab.goto(`${origin}${pagePath}`);
          await startClient(tab);
        }
        await tabs[0]?.evaluate(
          ({ username, password }) => (globalThis as unknown as PageGlobals).client.login({ username, password }),
          { username: user.username, password: testPassword },
        );
        expect(
          await tabs[1]?.evaluate(() => (globalThis as unknown as PageGlobals).client.restore().then((u) => u?.username)),
        ).toBe(user.username);
        const { ttl, clockToleranceSeconds } = testAuth.auth.config;
        const rounds = 10;
        const before = refreshes.length;
        for (let round = 0; round < rounds; round += 1) {
          testAuth.clock.advance((ttl.access + clockToleranceSeconds + 1) * 1000);
          expect(await Promise.all(tabs.map(callThings)), `round ${round + 1}`).toEqual([200, 200]);
        }
        // Each tab holds its own access token, so each refreshes once a round: never with a spent cookie.
        expect(refreshes.length - before).toBe(2 * rounds);
        expect(reused).toEqual([]);
      } finally {
        unsubscribe();
        await context.close();
      }
    });

    it("CK-3: a form post or a fetch to refresh and to logout from another site, or from another origin of the same site, is refused and the session survives", async () => {
      const user = await createTestUser(testAuth.auth, `cross-site-${name.toLowerCase()}`);
      const { context, refreshes } = await cookieContext();
      await context.route(`**${attackerPath}`, (route) =>
        route.fulfill({ body: "<!doctype html><title>elsewhere</title><p>elsewhere</p>", contentType: "text/html" }),
      );
      try {
        const page = await context.newPage();
        await page.goto(`${origin}${pagePath}`);
        await startClient(page);
        await page.evaluate(
          ({ username, password }) => (globalThis as unknown as PageGlobals).client.login({ username, password }),
          { username: user.username, password: testPassword },
        );
        const before = await refreshCookie(context, origin);
        const otherSite = `http://127.0.0.1:${server.port}`;
        // Another port of localhost: the same site, so SameSite=Strict lets the cookie go with it.
        const sameSiteElsewhere = `http://localhost:${server.port === 65535 ? 65534 : server.port + 1}`;
        for (const attacker of [otherSite, sameSiteElsewhere]) {
          for (const path of [refreshPath, logoutPath]) {
            for (const enctype of ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data"]) {
              expect(await formPost(context, attacker, `${origin}${path}`, enctype), `${attacker} ${path} ${enctype}`).toBe(
                40002,
              );
            }
            expect(await jsonFetch(context, attacker, `${origin}${path}`), `${attacker} ${path} fetch`).toBe("blocked");
          }
        }
        // Every form reached the server (3 enctypes from each origin) and was refused by the
        // JSON-only rule (HTTP-2) before any cookie was read; the fetches never left the browser (no
        // CORS preflight answer). The origin check (CK-3) stands behind both: test/http/cookie-mode.test.ts.
        const forms = refreshes
          .filter(({ request }) => request.resourceType() === "document")
          .map(({ from }) => new URL(from).origin);
        expect(forms.sort()).toEqual(
          [otherSite, otherSite, otherSite, sameSiteElsewhere, sameSiteElsewhere, sameSiteElsewhere].sort(),
        );
        expect((await refreshCookie(context, origin))?.value).toBe(before?.value);
        expect(await callThings(page)).toBe(200);
        expect((await page.evaluate(() => (globalThis as unknown as PageGlobals).client.refresh())).username).toBe(user.username);
      } finally {
        await context.close();
      }
    });
  });
}
