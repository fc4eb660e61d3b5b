// What the browser tests share: Chromium for a test file, fresh contexts, and readings of the
// demo page (its status line, the section shown, the signed-in user's details).
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { chromiumMissing, launchChromium, runningInCi } from "./chromium.js";

const missing = chromiumMissing();
if (missing && !runningInCi) console.warn(`test/browser skipped: ${missing}. Under CI=true these tests fail instead.`);

/** `describe` where Chromium can run, or under CI (where its absence fails every test, saying why); `describe.skip` otherwise. */
export function describeInBrowser(name: string, suite: () => void): void {
  (missing && !runningInCi ? describe.skip : describe)(name, suite);
}

/** How long one UI step may take before the test fails with what the page shows. */
const stepTimeout = 10_000;

/** An answer of the API as the tests read it. */
export interface Envelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever data a route returns
  data?: any;
}

/**
 * Launches Chromium before the calling test file's tests and closes it after them; returns the
 * function that opens a fresh browser context (its own cookies and storage) whose steps time out
 * after 10 seconds.
 */
export function useChromium(): () => Promise<BrowserContext> {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!missing) browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return async () => {
    // Reached without Chromium only under CI: every test fails, and says why.
    if (missing) throw new Error(`${missing}. Under CI the browser tests must run, not be skipped.`);
    if (!browser) throw new Error("Chromium is launched before the tests: open contexts inside a test");
    const context = await browser.newContext();
    context.setDefaultTimeout(stepTimeout);
    return context;
  };
}

/** Waits until the status line matches, and fails with what it says otherwise. */
export async function expectStatus(page: Page, pattern: RegExp, kind: "ok" | "error" | "info" = "ok"): Promise<void> {
  const status = page.locator("#status");
  try {
    await status.filter({ hasText: pattern }).waitFor();
  } catch {
    throw new Error(`the status line says ${JSON.stringify(await status.textContent())}; expected ${pattern}`);
  }
  expect(await status.getAttribute("class")).toBe(kind);
}

/** Which of the page's sections is shown. */
export async function shownSection(page: Page): Promise<string> {
  return page.locator("main > section:not([hidden])").getAttribute("id") as Promise<string>;
}

/** The value shown for `name` in the signed-in user's details. */
export async function shownUserField(page: Page, name: string): Promise<string | null> {
  return page
    .locator("#me dt", { hasText: new RegExp(`^${name}$`) })
    .locator("xpath=following-sibling::dd[1]")
    .textContent();
}
