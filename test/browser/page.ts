// What the browser tests share: Chromium for a test file, fresh contexts, and readings of the
// demo page (its status line, the section shown, the signed-in user's details).
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { describeNeedingService } from "../fixtures/required-service.js";
import { chromiumMissing, launchChromium } from "./chromium.js";

const missing = chromiumMissing();

/** `describe` where Chromium can run; without it, skipped with the reason printed, or under CI failing with it. */
export const describeInBrowser = describeNeedingService("test/browser", missing);

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
