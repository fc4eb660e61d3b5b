// Two tabs of one browser sharing a session through localStorageTokenStore(): two pages of one
// Chromium context (one origin, so one localStorage and one set of Web Locks), each with its own
// client. In every round the server's clock moves past the access token's expiry and both tabs
// call the API at once: both meet the expired token, and between them exactly one refresh may be
// sent. A second one would replay the spent refresh token, which the server takes for theft
// (RT-2, RT-3) and answers by ending the session in both tabs.
import type { AuthClient, AuthClientError } from "@portcullis/client";
import type { BrowserContext, Page, Request } from "playwright-core";
import { expect, it } from "vitest";
import { serverEvents } from "../client/client-servers.js";
import { type PageApp, browserTestPassword, createBrowserTestUser, startHonoPageApp } from "./apps.js";
import { collectPageErrors } from "./chromium.js";
import { bundledClient } from "./client-bundle.js";
import { describeInBrowser, useChromium, usePageApp } from "./page.js";

const newContext = useChromium();

/** Where the tabs import the client from: answered by the test (context.route), never by the app. */
const clientPath = "/two-tabs/portcullis-client.js";

/** What each tab holds for the test: the client module, its client, and the reasons of every signedOut it emitted. */
interface TabGlobals {
  clientModule: typeof import("@portcullis/client");
  tab: {
    client: AuthClient;
    signedOut: string[];
    /** How often the refresh's read under the lock found localStorage behind the IndexedDB copy. */
    localStorageBehind: number;
  };
}

const rounds = 200;

const isRefresh = (request: Request) => request.method() === "POST" && request.url().endsWith("/api/v1/auth/refresh");

/** A fresh context whose pages import the client from {@link clientPath}, and the refreshes its pages send. */
async function tabsContext(): Promise<{ context: BrowserContext; refreshes: Request[] }> {
  const context = await newContext();
  const client = await bundledClient();
  await context.route(`**${clientPath}`, (route) => route.fulfill({ body: client, contentType: "text/javascript" }));
  const refreshes: Request[] = [];
  context.on("request", (request) => {
    if (isRefresh(request)) refreshes.push(request);
  });
  return { context, refreshes };
}

/**
 * Opens a tab of `context` on the app's page and makes its client there, on localStorageTokenStore(),
 * counting the reads under the lock that found localStorage behind IndexedDB.
 */
async function openTab(context: BrowserContext, app: PageApp, errors: string[][]): Promise<Page> {
  const page = await context.newPage();
  errors.push(collectPageErrors(page));
  await page.goto(`${app.origin}/`);
  // A string, not a function: vitest would rewrite a function's import() for Node.
  await page.evaluate(`import(${JSON.stringify(clientPath)}).then((module) => { globalThis.clientModule = module; })`);
  await page.evaluate(() => {
    const globals = globalThis as unknown as TabGlobals;
    const { createAuthClient, localStorageTokenStore } = globals.clientModule;
    const store = localStorageTokenStore();
    const { loadLatest } = store;
    if (loadLatest) {
      store.loadLatest = async () => {
        const seen = await store.load();
        const latest = await loadLatest();
        if (seen?.refreshToken !== latest?.refreshToken) globals.tab.localStorageBehind += 1;
        return latest;
      };
    }
    const client = createAuthClient({ store });
    const signedOut: string[] = [];
    client.on("signedOut", ({ reason }) => signedOut.push(reason));
    globals.tab = { client, signedOut, localStorageBehind: 0 };
  });
  return page;
}

/** The tab's call of a protected route: its status, or the error's kind and code. */
function callThings(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const { client } = (globalThis as unknown as TabGlobals).tab;
    try {
      return String((await client.fetch("/api/v1/things")).status);
    } catch (error) {
      return `${(error as AuthClientError).kind} ${(error as AuthClientError).code}`;
    }
  });
}

async function signIn(page: Page, username: string): Promise<void> {
  await page.evaluate(
    async ({ username, password }) => {
      await (globalThis as unknown as TabGlobals).tab.client.login({ username, password });
    },
    { username, password: browserTestPassword },
  );
}

/** What the tab's client says: the user it holds, the signedOut reasons so far, the reads that found localStorage behind. */
function tabState(page: Page) {
  return page.evaluate(async () => {
    const { client, signedOut, localStorageBehind } = (globalThis as unknown as TabGlobals).tab;
    return { username: (await client.currentUser())?.username ?? null, signedOut: [...signedOut], localStorageBehind };
  });
}

describeInBrowser("two tabs sharing localStorageTokenStore() in Chromium", () => {
  const app = usePageApp(() => startHonoPageApp());

  it(`RT-2: in ${rounds} rounds of both tabs meeting an expired access token at once, one refresh per round and no sign-out`, async () => {
    const { auth } = app();
    const user = await createBrowserTestUser(auth, "two-tabs");
    const reused = serverEvents(auth, "refresh_token.reused");
    const { context, refreshes } = await tabsContext();
    const errors: string[][] = [];
    try {
      const tabs = [await openTab(context, app(), errors), await openTab(context, app(), errors)];
      await signIn(tabs[0] as Page, user.username);
      const { ttl, clockToleranceSeconds } = auth.config;
      const failed: string[] = [];
      for (let round = 1; round <= rounds; round += 1) {
        app().advanceClock((ttl.access + clockToleranceSeconds + 1) * 1000);
        const outcomes = await Promise.all(tabs.map(callThings));
        if (outcomes.every((outcome) => outcome === "200")) continue;
        failed.push(`round ${round}: ${outcomes.join(", ")}`);
        await signIn(tabs[0] as Page, user.username);
      }
      const states = await Promise.all(tabs.map(tabState));

      expect(failed, `${failed.length} of ${rounds} rounds signed out`).toEqual([]);
      expect(reused).toEqual([]);
      expect(states.map(({ username, signedOut }) => ({ username, signedOut }))).toEqual([
        { username: user.username, signedOut: [] },
        { username: user.username, signedOut: [] },
      ]);
      expect(refreshes).toHaveLength(rounds);
      // The race is real in this run: some tab took the lock before its localStorage showed the
      // tokens the other had just saved, and refreshed nothing because IndexedDB had them.
      const behind = states.reduce((sum, { localStorageBehind }) => sum + localStorageBehind, 0);
      expect(behind, "reads under the lock that found localStorage behind IndexedDB").toBeGreaterThan(0);
      expect(errors.flat()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("a sign-out in one tab, by logout or by a refused refresh, reaches the other tab at once as signed_out_elsewhere", async () => {
    const { auth } = app();
    const user = await createBrowserTestUser(auth, "two-tabs-sign-out");
    const { context } = await tabsContext();
    const errors: string[][] = [];
    try {
      const [first, second] = [await openTab(context, app(), errors), await openTab(context, app(), errors)] as [Page, Page];
      const signedInBoth = async () => {
        await signIn(first, user.username);
        await expect.poll(async () => (await tabState(second)).username).toBe(user.username);
      };

      await signedInBoth();
      await first.evaluate(() => (globalThis as unknown as TabGlobals).tab.client.logout());
      await expect.poll(async () => (await tabState(second)).signedOut).toEqual(["signed_out_elsewhere"]);
      expect((await tabState(first)).signedOut).toEqual(["logout"]);
      expect(await callThings(second)).toBe("401");

      await signedInBoth();
      app().advanceClock((auth.config.ttl.refreshIdle + 1) * 1000);
      expect(await callThings(first)).toBe("server 40101");
      await expect.poll(async () => (await tabState(second)).signedOut).toEqual(["signed_out_elsewhere", "signed_out_elsewhere"]);
      expect((await tabState(first)).signedOut).toEqual(["logout", "session_ended"]);
      expect(await callThings(second)).toBe("401");
      expect(errors.flat()).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
