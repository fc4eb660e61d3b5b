// What the browser tests share: Chromium for a test file, fresh contexts, the demo page opened with
// a virtual authenticator, its sign-in steps, and readings of it (its status line, the section
// shown, the signed-in user's details).
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { describeNeedingService } from "../fixtures/required-service.js";
import type { PageApp } from "./apps.js";
import {
  type VirtualAuthenticator,
  addVirtualAuthenticator,
  chromiumMissing,
  collectPageErrors,
  launchChromium,
  platformAuthenticator,
} from "./chromium.js";

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
 * after 10 seconds. `extraArgs` go to {@link launchChromium}; `contextOptions` to every context.
 */
export function useChromium(extraArgs: string[] = [], contextOptions: BrowserContextOptions = {}): () => Promise<BrowserContext> {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!missing) browser = await launchChromium(extraArgs);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return async () => {
    if (!browser) throw new Error("Chromium is launched before the tests: open contexts inside a test");
    const context = await browser.newContext(contextOptions);
    context.setDefaultTimeout(stepTimeout);
    return context;
  };
}

/**
 * Starts an app with `startApp` before the calling `describe`'s tests and closes it after them;
 * returns the function that gives the running app.
 */
export function usePageApp<App extends PageApp>(startApp: () => Promise<App>): () => App {
  let app: App | undefined;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.close();
  });
  return () => {
    if (!app) throw new Error("The app is started before the tests: read it inside a test");
    return app;
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

/**
 * Waits until an error matching `pattern` is shown inside `within` (a selector: the section or
 * card of the control that caused it; the page shows errors beside their controls), and fails
 * with what the page shows otherwise.
 */
export async function expectError(page: Page, within: string, pattern: RegExp): Promise<void> {
  const error = page.locator(`${within} .error`);
  try {
    await error.filter({ hasText: pattern }).waitFor();
  } catch {
    const shown = await error.allTextContents();
    const status = await page.locator("#status").textContent();
    throw new Error(
      `the errors in ${within} are ${JSON.stringify(shown)}, the status line ${JSON.stringify(status)}; expected ${pattern}`,
    );
  }
}

/** Which of the page's sections is shown. */
export async function shownSection(page: Page): Promise<string> {
  return page.locator("main > section:not([hidden])").getAttribute("id") as Promise<string>;
}

/**
 * The value shown for the user object's field `name` in the signed-in user's details (the row's
 * `data-field`; its label is in plain words): `username`, `roles`, `totpEnabled` ("on" or "off").
 */
export async function shownUserField(page: Page, name: string): Promise<string | null> {
  return page.locator(`#me dt[data-field="${name}"]`).locator("xpath=following-sibling::dd[1]").textContent();
}

/**
 * Makes the page's browser one without passkeys in autofill (`isConditionalMediationAvailable`
 * answers false), as many browsers are. Chromium's virtual authenticator answers a conditional
 * request at once, without the user picking anything, so a page that offers passkeys in autofill
 * would sign in by itself after every sign-out; tests of other things open the page this way.
 */
const withoutPasskeyAutofill = `Object.defineProperty(PublicKeyCredential, "isConditionalMediationAvailable", {
  configurable: true,
  value: () => Promise.resolve(false),
});`;

/**
 * Opens the demo page of `app` in a fresh context (from `newContext`, as {@link useChromium}
 * returns it) with its own virtual authenticator, once the page has shown its passkey button.
 * The browser offers no passkeys in autofill unless `autofill` (see `withoutPasskeyAutofill`).
 */
export async function openPage(
  newContext: () => Promise<BrowserContext>,
  app: PageApp,
  authenticatorOptions = platformAuthenticator,
  { autofill = false } = {},
): Promise<{ context: BrowserContext; page: Page; authenticator: VirtualAuthenticator; errors: string[] }> {
  const context = await newContext();
  const page = await context.newPage();
  if (!autofill) await page.addInitScript({ content: withoutPasskeyAutofill });
  const errors = collectPageErrors(page);
  const authenticator = await addVirtualAuthenticator(context, page, authenticatorOptions);
  await page.goto(`${app.origin}/`);
  // The passkey button shows once the page has read public-key/config.
  await page.locator("#passkey-sign-in-button").waitFor();
  return { context, page, authenticator, errors };
}

/** Submits the page's sign-in form. */
export async function signInWithPassword(page: Page, username: string, password: string): Promise<void> {
  await page.fill('#sign-in-form input[name="username"]', username);
  await page.fill('#sign-in-form input[name="password"]', password);
  await page.click('#sign-in-form button[type="submit"]');
}

/**
 * Clicks "Sign in with a passkey" and returns the envelope of login/finish, after checking that
 * the page sent login/begin no username (unless the test rewrote that request).
 */
export async function signInWithPasskey(page: Page, { beginRewritten = false } = {}): Promise<Envelope> {
  const begin = page.waitForRequest((request) => request.url().endsWith("/api/v1/auth/public-key/login/begin"));
  const finish = page.waitForResponse((response) => response.url().endsWith("/api/v1/auth/public-key/login/finish"));
  await page.click("#passkey-sign-in-button");
  if (!beginRewritten) expect((await begin).postDataJSON()).toEqual({});
  try {
    return (await (await finish).json()) as Envelope;
  } catch (error) {
    const status = JSON.stringify(await page.locator("#status").textContent());
    throw new Error(`no login/finish request; the status line says ${status}`, { cause: error });
  }
}

/** The sections of the demo's account page, each a tab: `#tab-<name>`. */
export type AccountSection = "profile" | "security" | "sessions" | "organizations" | "administration";

/** Shows the account page's section `name` (clicks its tab), as a person does before using its controls. */
export async function openAccountSection(page: Page, name: AccountSection): Promise<void> {
  await page.click(`#tab-${name}`);
  await page.locator(`#tab-${name}[aria-selected="true"]`).waitFor();
}

/**
 * Clicks "Reload my details" (`GET /auth/me`), in the profile section's "For developers" part: the
 * page's client makes one call with its access token (refreshing once on a 40101).
 */
export async function reloadMyDetails(page: Page): Promise<void> {
  await openAccountSection(page, "profile");
  await page.locator("details.developer").evaluate((details) => {
    (details as unknown as { open: boolean }).open = true;
  });
  await page.click("#reload-me");
}

/**
 * Answers the "Confirm it is you" dialog once it is open: fills the fields it shows (the
 * password, the code) from `proof` and confirms.
 */
export async function confirmItIsYou(page: Page, proof: { password?: string; totpCode?: string }): Promise<void> {
  const dialog = page.locator("#reauthenticate-dialog[open]");
  await dialog.waitFor();
  for (const [name, value] of Object.entries(proof)) {
    const field = dialog.locator(`input[name="${name}"]`);
    if (value !== undefined && (await field.isVisible())) await field.fill(value);
  }
  await dialog.locator('button[type="submit"]').click();
}

/**
 * Adds a passkey from the account's security section; when `proof` is given, the server is
 * expected to ask for it (the sign-in is not recent), and the dialog is answered with it.
 */
export async function registerPasskey(
  page: Page,
  label: string,
  proof?: { password?: string; totpCode?: string },
): Promise<void> {
  await openAccountSection(page, "security");
  await page.fill('#passkey-register-form input[name="label"]', label);
  await page.click('#passkey-register-form button[type="submit"]');
  if (proof) await confirmItIsYou(page, proof);
}
