// Two tabs of a client built for the original service, in Chromium: it keeps its tokens in
// localStorage, shared by its tabs, and refreshes on 40101 with whatever refresh token it finds
// there, with no lock and no coordination between tabs (its source is not ours to bundle; these
// pages do what docs/compatibility.md says it does). Both tabs meet an expired access token at
// once, so both send the same refresh token. With `refreshReuseInterval` the second is answered
// with the session's current tokens (RT-5); without it, it is reuse and ends the session (RT-2).
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { originalClientSettings } from "../../docs/examples/original-client.js";
import { serverEvents } from "../client/client-servers.js";
import { type PageApp, browserTestPassword, createBrowserTestUser, startHonoPageApp } from "./apps.js";
import { collectPageErrors } from "./chromium.js";
import { describeInBrowser, useChromium, usePageApp } from "./page.js";

const newContext = useChromium();
const rounds = 200;
const storageKey = "original-client-tokens";

/** What each tab runs: the original client's way of calling the API, on localStorage. */
interface TabGlobals {
  originalClient: {
    signIn(username: string, password: string): Promise<number>;
    /** Calls the protected route; on 40101 refreshes once with the stored refresh token and calls again. Answers the last `code`, or "signed out". */
    callThings(): Promise<string>;
    /** The refresh tokens this tab sent. */
    sent: string[];
  };
}

/** Installs the client's token handling in a tab: envelopes read by `code` only, tokens in localStorage. */
function installClient(page: Page, key: string): Promise<void> {
  return page.evaluate((storageKey) => {
    type Tokens = { accessToken: string; refreshToken: string };
    const { localStorage } = globalThis as unknown as {
      localStorage: {
        getItem(key: string): string | null;
        setItem(key: string, value: string): void;
        removeItem(key: string): void;
      };
    };
    const post = async (path: string, body: unknown) =>
      (await (
        await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      ).json()) as { code: number; data: Tokens };
    const stored = () =>
      JSON.parse(localStorage.getItem(storageKey) ?? "null") as { accessToken: string; refreshToken: string } | null;
    const keep = (data: { accessToken: string; refreshToken: string }) =>
      localStorage.setItem(storageKey, JSON.stringify({ accessToken: data.accessToken, refreshToken: data.refreshToken }));
    const things = async () => {
      const tokens = stored();
      const answer = await fetch("/api/v1/things", { headers: tokens ? { authorization: `Bearer ${tokens.accessToken}` } : {} });
      return ((await answer.json()) as { code: number }).code;
    };
    const sent: string[] = [];
    (globalThis as unknown as TabGlobals).originalClient = {
      sent,
      async signIn(username, password) {
        const answer = await post("/api/v1/auth/login", { username, password, provider: "local" });
        if (answer.code === 0) keep(answer.data);
        return answer.code;
      },
      async callThings() {
        const first = await things();
        if (first !== 40101) return String(first);
        const tokens = stored();
        if (!tokens) return "signed out";
        sent.push(tokens.refreshToken);
        const renewed = await post("/api/v1/auth/refresh", { refreshToken: tokens.refreshToken });
        if (renewed.code !== 0) {
          localStorage.removeItem(storageKey);
          return "signed out";
        }
        keep(renewed.data);
        return String(await things());
      },
    };
  }, key);
}

async function openTab(
  app: PageApp,
  pages: { context: Awaited<ReturnType<typeof newContext>> },
  errors: string[][],
): Promise<Page> {
  const page = await pages.context.newPage();
  errors.push(collectPageErrors(page));
  await page.goto(`${app.origin}/`);
  await installClient(page, storageKey);
  return page;
}

/** Runs `rounds` rounds of both tabs meeting an expired access token at once; the rounds that signed a tab out, and how many rounds both tabs sent one token. */
async function raceRounds(app: PageApp, tabs: Page[], username: string, count: number) {
  const { ttl, clockToleranceSeconds } = app.auth.config;
  const signedOut: string[] = [];
  let shared = 0;
  for (let round = 1; round <= count; round += 1) {
    app.advanceClock((ttl.access + clockToleranceSeconds + 1) * 1000);
    const outcomes = await Promise.all(
      tabs.map((tab) => tab.evaluate(() => (globalThis as unknown as TabGlobals).originalClient.callThings())),
    );
    const sent = await Promise.all(
      tabs.map((tab) => tab.evaluate(() => (globalThis as unknown as TabGlobals).originalClient.sent.at(-1))),
    );
    if (sent[0] !== undefined && sent[0] === sent[1]) shared += 1;
    if (outcomes.every((outcome) => outcome === "0")) continue;
    signedOut.push(`round ${round}: ${outcomes.join(", ")}`);
    await (tabs[0] as Page).evaluate(
      ({ username, password }) => (globalThis as unknown as TabGlobals).originalClient.signIn(username, password),
      { username, password: browserTestPassword },
    );
  }
  return { signedOut, shared };
}

describeInBrowser("two tabs of the original service's client, sharing localStorage, in Chromium", () => {
  // docs/compatibility.md's settings, which set refreshReuseInterval: "10s"; and the same without it.
  const tolerant = usePageApp(() => startHonoPageApp({}, originalClientSettings({})));
  const strict = usePageApp(() => startHonoPageApp({}, { ...originalClientSettings({}), refreshReuseInterval: 0 }));

  it(`RT-5: with refreshReuseInterval, ${rounds} rounds of both tabs refreshing with one token at once never sign out`, async () => {
    const app = tolerant();
    const user = await createBrowserTestUser(app.auth, "original-tabs");
    const reused = serverEvents(app.auth, "refresh_token.reused");
    const revoked = serverEvents(app.auth, "session.revoked");
    const context = await newContext();
    const errors: string[][] = [];
    try {
      const tabs = [await openTab(app, { context }, errors), await openTab(app, { context }, errors)];
      expect(
        await (tabs[0] as Page).evaluate(
          ({ username, password }) => (globalThis as unknown as TabGlobals).originalClient.signIn(username, password),
          { username: user.username, password: browserTestPassword },
        ),
      ).toBe(0);
      const { signedOut, shared } = await raceRounds(app, tabs, user.username, rounds);
      expect(signedOut, `${signedOut.length} of ${rounds} rounds signed out`).toEqual([]);
      expect(revoked).toEqual([]);
      // The race is real: in most rounds both tabs sent the very same refresh token.
      expect(shared, "rounds in which both tabs sent one refresh token").toBeGreaterThan(rounds / 2);
      expect(reused.length).toBe(shared);
      expect(reused.every((event) => event.withinReuseInterval)).toBe(true);
      expect(errors.flat()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("RT-2: without it (the default), the first round in which both tabs send one token ends the session", async () => {
    const app = strict();
    const user = await createBrowserTestUser(app.auth, "original-tabs-strict");
    const revoked = serverEvents(app.auth, "session.revoked");
    const context = await newContext();
    const errors: string[][] = [];
    try {
      const tabs = [await openTab(app, { context }, errors), await openTab(app, { context }, errors)];
      await (tabs[0] as Page).evaluate(
        ({ username, password }) => (globalThis as unknown as TabGlobals).originalClient.signIn(username, password),
        { username: user.username, password: browserTestPassword },
      );
      const { signedOut, shared } = await raceRounds(app, tabs, user.username, 5);
      expect(shared).toBeGreaterThan(0);
      expect(signedOut.length).toBe(shared);
      expect(revoked.map((event) => event.reason)).toEqual(Array.from({ length: shared }, () => "refresh_token_reused"));
      expect(errors.flat()).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
